"""The one YAML reader: safe loading that refuses duplicate keys.

PyYAML lets a repeated key silently overwrite the first (`learning_rate: 1e-5` ...
`learning_rate: 1000` trains with 1000), and YAML 1.2 says keys must be unique, so
every config, manifest and packaged data file is read through `load_yaml`, which
names the key and both lines. Files are checked to be regular UTF-8 files first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from queerbias.errors import DataError
from queerbias.fileio import read_text_utf8


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader whose mappings refuse a key they already hold."""

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue  # `<<: *base` may be overridden on purpose
                key = self.construct_object(key_node, deep=True)
                line = key_node.start_mark.line + 1
                try:
                    if key in seen:
                        raise _DuplicateKey(key, seen[key], line)
                    seen[key] = line
                except TypeError:  # an unhashable key; SafeLoader reports it below
                    continue
        return super().construct_mapping(node, deep=deep)


class _DuplicateKey(Exception):
    def __init__(self, key, first: int, again: int):
        lines = f"lines {first} and {again}" if first != again else f"line {first} twice"
        super().__init__(f"duplicate key {key!r} on {lines}; "
                         "YAML keys must be unique (the second would silently win)")


def load_yaml(source: str | Path, text: str | None = None, what: str = "YAML file") -> Any:
    """Parse a YAML file (or `text`, reported as coming from `source`) with unique keys.

    Errors are DataErrors naming the file and line: duplicate keys, invalid YAML,
    non-UTF-8 bytes, a missing or non-regular file.
    """
    if text is None:
        text = read_text_utf8(source, what)
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except _DuplicateKey as err:
        raise DataError(source, str(err)) from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        problem = getattr(err, "problem", None) or str(err).replace("\n", " ")
        raise DataError(source, f"not valid YAML: {problem}{where}") from None


def load_packaged_yaml(name: str) -> Any:
    """A YAML data file shipped inside the package, e.g. `data/taxonomy.yaml`."""
    from importlib import resources

    text = resources.files("queerbias").joinpath(name).read_text(encoding="utf-8")
    return load_yaml(f"queerbias/{name}", text)


def load_yaml_mapping(source: str | Path, what: str = "YAML file") -> dict:
    """A YAML file that must hold a mapping of keys to values (an empty file is `{}`)."""
    document = load_yaml(source, what=what)
    if document is None:
        return {}
    if not isinstance(document, dict):
        kind = ("a list" if isinstance(document, list) else "true/false" if isinstance(document, bool)
                else "a number" if isinstance(document, (int, float)) else "a string")
        raise DataError(source, f"a {what} must be a YAML mapping of keys to values, "
                        f"not {kind} ({str(document)[:40]!r})")
    return document
