"""One vocabulary of identity groups, so scores from different pair sets line up.

Every set labels its groups differently (`Gender_ID_x` "NB" in WinoQueer,
" cis_gay_pairwise_mf" in v0, "Non-binary" in the German survey, German phrases
in queerbias-de). The table lives in `queerbias/data/taxonomy.yaml`; this module
only loads it and answers questions about it. It sits with the text utilities, below
the pair sets, the counterfactual lexicons and the suites, which all name groups in it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from types import MappingProxyType

from queerbias.yamlio import load_packaged_yaml

SIDES = ("queer", "counterfactual", "other")


@dataclass(frozen=True)
class Group:
    """A canonical group with its display names; `umbrella` is the group it rolls up into."""

    name: str
    en: str
    de: str
    side: str
    umbrella: str


def _normalise(label: str) -> str:
    """The pass-through form of a label: stripped, lower-cased, runs of spaces as `_`."""
    return re.sub(r"\s+", "_", label.strip().lower())


def _lookup_key(label: str) -> str:
    """Looser than `_normalise`: "nicht-binär", "Nicht binär" and "nicht_binär" meet."""
    return re.sub(r"[\s_-]+", "_", label.strip().casefold()).strip("_")


def _load() -> tuple[dict[str, Group], dict[str, str]]:
    raw = load_packaged_yaml("data/taxonomy.yaml")["groups"]
    groups: dict[str, Group] = {}
    labels: dict[str, str] = {}
    for name, entry in raw.items():
        if entry["side"] not in SIDES:
            raise ValueError(f"taxonomy.yaml: group {name!r} has unknown side {entry['side']!r}")
        groups[name] = Group(name, entry["en"], entry["de"], entry["side"], entry.get("umbrella", name))
        for label in [name, *entry["labels"]]:
            key = _lookup_key(label)
            if labels.setdefault(key, name) != name:
                raise ValueError(
                    f"taxonomy.yaml: label {label!r} maps to both {labels[key]!r} and {name!r}"
                )
    for group in groups.values():
        if group.umbrella not in groups:
            raise ValueError(f"taxonomy.yaml: {group.name!r} has unknown umbrella {group.umbrella!r}")
    return groups, labels


_GROUPS, _LABELS = _load()

#: Canonical groups in table order (queer side first, then the counterfactual side).
GROUPS: MappingProxyType[str, Group] = MappingProxyType(_GROUPS)

#: The straight/cis side: groups that only ever appear as `counterfactual_group`.
counterfactual_groups: tuple[str, ...] = tuple(g.name for g in _GROUPS.values() if g.side == "counterfactual")


def canonical_group(label: str) -> str:
    """The canonical name for any set's label; unknown labels pass through normalised.

    Passing unknown labels through (rather than mapping them to "other") keeps
    two different unknown groups apart instead of silently merging them.
    """
    return _LABELS.get(_lookup_key(label), _normalise(label))


def umbrella(label: str) -> str:
    """The coarser group a label rolls up into ("trans_women" -> "transgender")."""
    group = canonical_group(label)
    return _GROUPS[group].umbrella if group in _GROUPS else group


def display_name(group: str, lang: str = "en") -> str:
    """Human-readable name of a group in English or German; unknown groups normalised."""
    if lang not in ("en", "de"):
        raise ValueError(f"display_name: lang must be 'en' or 'de', not {lang!r}")
    canonical = canonical_group(group)
    if canonical not in _GROUPS:
        return canonical
    return getattr(_GROUPS[canonical], lang)


def table_order(groups) -> list[str]:
    """Groups in the taxonomy's table order; groups it does not know follow, by name."""
    position = {name: index for index, name in enumerate(_GROUPS)}
    return sorted(groups, key=lambda g: (position.get(g, len(position)), g))
