"""Pronoun groups as data: the German paradigms GIFI-DE prompts with and detects.

Groups live in `data/gifi/pronouns.yaml` so a paradigm is added without code; this
module validates them and fills a group's slots for one person.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from queerbias.errors import DataError
from queerbias.yamlio import load_yaml

SLOTS = ("nom", "gen", "dat", "acc", "poss")
#: what App. D of GIFI tells apart: binary (he, she), neutral (singular they) and neopronouns
KINDS = ("binary", "neutral", "neopronoun")


@dataclass(frozen=True)
class PronounGroup:
    """One pronoun group: template forms, detectable forms, or name-only reference."""

    key: str
    label: str
    forms: dict[str, str] = field(default_factory=dict)
    detect: tuple[str, ...] = ()
    ambiguous: tuple[str, ...] = ()
    name_only: bool = False
    kind: str | None = None  # one of KINDS; None for name only

    def slots(self, name: str) -> dict[str, str]:
        """Template values for a person called `name` (name-only: the name, genitive -s)."""
        if not self.name_only:
            return dict(self.forms)
        genitive = name + ("'" if name[-1] in "sxzß" else "s")
        return {"nom": name, "gen": genitive, "dat": name, "acc": name, "poss": genitive}


def default_groups_path() -> Path:
    return Path(str(resources.files("queerbias") / "data" / "gifi" / "pronouns.yaml"))


def load_groups(path: Path | str | None = None) -> dict[str, PronounGroup]:
    """All groups of a pronouns YAML file (default: the packaged one), in file order."""
    path = Path(path) if path else default_groups_path()
    document = load_yaml(path, what="pronoun groups file")
    entries = document.get("groups") if isinstance(document, dict) else None
    if not isinstance(entries, dict) or not entries:
        raise DataError(path, "needs a non-empty mapping 'groups'")
    groups = {key: _group(path, key, entry) for key, entry in entries.items()}
    _check_disjoint(path, groups)
    return groups


def select_groups(groups: dict[str, PronounGroup], keys, path="pronouns") -> list[PronounGroup]:
    """The groups named in `keys`, in that order; at least two, as GIFI compares groups."""
    unknown = [k for k in keys if k not in groups]
    if unknown:
        raise DataError(path, f"unknown pronoun group(s) {unknown}; known: {sorted(groups)}")
    if len(set(keys)) < 2:
        raise DataError(path, "GIFI needs at least two different pronoun groups")
    return [groups[k] for k in dict.fromkeys(keys)]


def _group(path: Path, key: str, entry) -> PronounGroup:
    if not isinstance(entry, dict):
        raise DataError(path, "must be a mapping", field=key)
    label = str(entry.get("label", key))
    if entry.get("name_only"):
        return PronounGroup(key=key, label=label, name_only=True)
    forms = entry.get("forms") or {}
    missing = [slot for slot in SLOTS if not forms.get(slot)]
    if missing:
        raise DataError(path, f"forms lack slot(s) {missing}", field=f"{key}.forms")
    detect = tuple(str(f).lower() for f in entry.get("detect") or ())
    if not detect:
        raise DataError(path, "needs at least one detectable form", field=f"{key}.detect")
    ambiguous = tuple(str(f).lower() for f in entry.get("ambiguous") or ())
    clash = sorted(set(detect) & set(ambiguous))
    if clash:
        raise DataError(path, f"forms {clash} are both detectable and ambiguous", field=key)
    kind = str(entry.get("kind", "neopronoun"))
    if kind not in KINDS:
        raise DataError(path, f"kind must be one of {', '.join(KINDS)}, got {kind!r}", field=f"{key}.kind")
    return PronounGroup(key=key, label=label, forms={s: str(forms[s]) for s in SLOTS},
                        detect=detect, ambiguous=ambiguous, kind=kind)


def _check_disjoint(path: Path, groups: dict[str, PronounGroup]) -> None:
    """A detectable form must point to one group, or the extractor could not decide."""
    owner: dict[str, str] = {}
    for group in groups.values():
        for form in group.detect:
            if form in owner and owner[form] != group.key:
                raise DataError(path, f"form {form!r} is detectable for both {owner[form]!r} "
                                      f"and {group.key!r}", field=f"{group.key}.detect")
            owner[form] = group.key
