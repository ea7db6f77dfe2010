"""The one YAML reader: safe loading that refuses duplicate keys and unbounded values.

PyYAML lets a repeated key silently overwrite the first (`learning_rate: 1e-5` ...
`learning_rate: 1000` trains with 1000), and YAML 1.2 says keys must be unique, so
every config, manifest and packaged data file is read through `load_yaml`, which
names the key and both lines. Files are checked to be regular UTF-8 files first.

It also refuses what PyYAML reads without complaint but nothing can use: aliases that
repeat more than `MAX_ALIAS_VALUES` values (ten levels of `&a [*b, *b, ...]` stand for
ten billion values, which every later walk takes for ever), an alias inside the value it
names, nesting deeper than `bounds.MAX_DEPTH` (20,000 nested lists overflow the
composer's recursion) and integers of more than `bounds.MAX_DIGITS` digits (`int()`
refuses 4,300 with a ValueError).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from queerbias.bounds import MAX_DEPTH, BoundError, check_digits, too_deep
from queerbias.errors import DataError
from queerbias.fileio import read_text_utf8

#: values that aliases may repeat beyond the document's own: far above any config, far below a bomb
MAX_ALIAS_VALUES = 100_000


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader whose mappings refuse a key they already hold, and whose documents stay within
    the bounds above (checked on the composed nodes, before any value is built)."""

    _depth = 0

    def compose_node(self, parent, index):
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise _Unbounded(too_deep(), self.peek_event().start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_document(self, node):
        _check_expansion(node)
        return super().construct_document(node)

    def construct_yaml_int(self, node):
        try:
            check_digits(node.value)
        except BoundError as err:
            raise _Unbounded(str(err), node.start_mark) from None
        return super().construct_yaml_int(node)

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


_UniqueKeyLoader.add_constructor("tag:yaml.org,2002:int", _UniqueKeyLoader.construct_yaml_int)


def _check_expansion(root: yaml.Node) -> None:
    """Refuse a document whose aliases repeat more than `MAX_ALIAS_VALUES` values, nest it deeper
    than `MAX_DEPTH` once expanded, or name a value that holds the alias (a value containing
    itself); walked once per node, without recursion."""
    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    open_nodes: set[int] = set()
    pending = [(root, False)]
    while pending:
        node, finished = pending.pop()
        key = id(node)
        children = _children(node)
        if finished:
            open_nodes.discard(key)
            size[key] = 1 + sum(size[id(child)] for child in children)
            depth[key] = 1 + max((depth[id(child)] for child in children), default=0)
            if depth[key] > MAX_DEPTH:
                raise _Unbounded(too_deep() + " once its aliases are expanded", node.start_mark)
            continue
        if key in size:
            continue
        if key in open_nodes:
            raise _Unbounded("an alias names a value that contains the alias itself (a value inside itself)",
                             node.start_mark)
        open_nodes.add(key)
        pending.append((node, True))
        pending.extend((child, False) for child in children if id(child) not in size)
    repeated = size[id(root)] - len(size)
    if repeated > MAX_ALIAS_VALUES:
        raise _Unbounded(f"its aliases repeat {repeated:,} values, more than {MAX_ALIAS_VALUES:,}; write the "
                         "values out or use fewer aliases", root.start_mark)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


class _Unbounded(Exception):
    def __init__(self, problem: str, mark):
        super().__init__(f"{problem} (line {mark.line + 1})")


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
    except (_DuplicateKey, _Unbounded) as err:
        raise DataError(source, str(err)) from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        problem = getattr(err, "problem", None) or str(err).replace("\n", " ")
        raise DataError(source, f"not valid YAML: {problem}{where}") from None


def load_packaged_yaml(name: str) -> Any:
    """A YAML data file shipped inside the package, e.g. `data/taxonomy.yaml`."""
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
