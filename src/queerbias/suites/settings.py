"""Typed suite settings: declared once as a frozen dataclass, read from the CLI or a config.

Each field's metadata says what it is for (`help`, `choices`) and what it changes
(`role`): "items" fields change what is scored or how, so two runs that differ in one
cannot be compared; "summary" fields change only the summary (bootstrap resamples);
"execution" fields change neither (batch size). The run key hashes the items and
summary fields, so a finished run is reused only under the same settings.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import types
import typing
from dataclasses import MISSING, field, fields

from queerbias.errors import QueerbiasError

ITEMS, SUMMARY, EXECUTION = "items", "summary", "execution"


def option(default, help: str = "", *, choices=None, role: str = ITEMS):
    """A settings field with its CLI help, allowed values and role."""
    metadata = {"help": help, "choices": choices, "role": role}
    if isinstance(default, (list, dict, set)):
        raise TypeError("settings are frozen: use a tuple for a list default")
    return field(default=default, metadata=metadata)


def role(f: dataclasses.Field) -> str:
    return f.metadata.get("role", ITEMS)


def to_dict(settings) -> dict:
    """The settings as JSON values (tuples as lists)."""
    return {f.name: _jsonable(getattr(settings, f.name)) for f in fields(settings)}


def _jsonable(value):
    return list(value) if isinstance(value, tuple) else value


def settings_id(settings) -> str:
    """Hash of every field that changes the results (items and summary roles)."""
    kept = {f.name: _jsonable(getattr(settings, f.name)) for f in fields(settings) if role(f) != EXECUTION}
    return hashlib.sha256(json.dumps(kept, sort_keys=True).encode()).hexdigest()[:16]


def item_fields(settings_cls) -> list[str]:
    """Fields whose difference makes two runs incomparable."""
    return [f.name for f in fields(settings_cls) if role(f) == ITEMS]


def from_mapping(settings_cls, values: dict, where: str = "settings"):
    """Settings from a mapping (YAML, JSON); each error names `where.key`."""
    if not isinstance(values, dict):
        raise QueerbiasError(f"{where} must be a mapping of settings, got {type(values).__name__}")
    hints = typing.get_type_hints(settings_cls)
    known = {f.name: f for f in fields(settings_cls)}
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise QueerbiasError(f"{where}.{unknown[0]} is not a setting of this suite; known: {', '.join(known)}")
    converted = {name: coerce(value, hints[name], f"{where}.{name}", known[name].metadata.get("choices"))
                 for name, value in values.items()}
    return settings_cls(**converted)


def coerce(value, tp, key: str, choices=None):
    """`value` as type `tp` (int, float, str, bool, tuple[str, ...], X | None), or a clear error."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return coerce(value, inner[0], key, choices)
    if origin is tuple:
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, (list, tuple)):
            raise QueerbiasError(f"{key} must be a list, got {value!r}")
        # "a,b" and "a b" on a command line both mean two items
        items = [part for item in items for part in (item.split(",") if isinstance(item, str) else [item])]
        return tuple(coerce(item, args[0], f"{key}[{i}]", choices) for i, item in enumerate(items))
    if tp is bool:
        if not isinstance(value, bool):
            raise QueerbiasError(f"{key} must be true or false, got {value!r}")
        return value
    if tp is int:
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise QueerbiasError(f"{key} must be an integer, got {value!r}")
    elif tp is float:
        try:
            value = float(value) if not isinstance(value, bool) else None
        except (TypeError, ValueError):
            value = None
        if value is None:
            raise QueerbiasError(f"{key} must be a number")
    elif tp is str:
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)  # a number where text may also be a word: batch_size 8 or "auto"
        if not isinstance(value, str):
            raise QueerbiasError(f"{key} must be a string, got {value!r}")
    if choices is not None and value not in choices:
        raise QueerbiasError(f"{key} must be one of {', '.join(map(str, choices))}, got {value!r}")
    return value


# -- command line -------------------------------------------------------------------

def add_arguments(parser, settings_cls, skip: tuple[str, ...] = (), flags: dict[str, str] | None = None) -> None:
    """One `--flag` per field (its metadata's help and choices); defaults come from the class.

    `flags` renames fields' flags (an alias command's historical names, e.g. sample -> --n).
    """
    hints = typing.get_type_hints(settings_cls)
    group = parser.add_argument_group("suite settings")
    for f in fields(settings_cls):
        if f.name in skip:
            continue
        flag = _flag(f, flags)
        default = f.default if f.default is not MISSING else None
        help_text = f.metadata.get("help", "")
        tp = _plain(hints[f.name])
        shown = ",".join(map(str, default)) if isinstance(default, tuple) else default
        choices = f"; one of {', '.join(map(str, f.metadata['choices']))}" if f.metadata.get("choices") else ""
        help_text = f"{help_text} (default: {shown}{choices})" if help_text else f"default: {shown}{choices}"
        if tp is bool:
            group.add_argument(flag, dest=f.name, action=argparse.BooleanOptionalAction, default=None,
                               help=help_text)
        else:
            listed = typing.get_origin(tp) is tuple  # `--task a b` and `--task a --task b` alike
            group.add_argument(flag, dest=f.name, default=None, metavar=f.name.upper(), help=help_text,
                               nargs="+" if listed else None, action="extend" if listed else "store")


def from_args(settings_cls, args, base=None, flags: dict[str, str] | None = None):
    """Settings with the flags given on the command line applied over `base` (default: the defaults)."""
    hints = typing.get_type_hints(settings_cls)
    base = base or settings_cls()
    values = {f.name: getattr(base, f.name) for f in fields(settings_cls)}
    for f in fields(settings_cls):
        given = getattr(args, f.name, None)
        if given is not None:
            values[f.name] = coerce(given, hints[f.name], _flag(f, flags), f.metadata.get("choices"))
    return settings_cls(**values)


def _flag(f: dataclasses.Field, flags: dict[str, str] | None = None) -> str:
    return (flags or {}).get(f.name) or "--" + f.name.replace("_", "-")


def _plain(tp):
    args = [a for a in typing.get_args(tp) if a is not type(None)]
    return args[0] if typing.get_origin(tp) in (typing.Union, types.UnionType) else tp
