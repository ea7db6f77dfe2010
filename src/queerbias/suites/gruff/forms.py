"""German forms of the GRUFF suite: pronoun sets by case, noun systems, their pairing.

The forms are data (data/gruff/pronouns.yaml and nouns.yaml, with sources in their
comments); this module loads them once and answers "which word goes here".
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from queerbias.errors import QueerbiasError
from queerbias.yamlio import load_packaged_yaml


def _load(name: str) -> dict:
    return load_packaged_yaml(f"data/gruff/{name}")


_PRONOUNS = _load("pronouns.yaml")
_NOUNS = _load("nouns.yaml")

CASES: tuple[str, ...] = tuple(_PRONOUNS["cases"])
PLACEHOLDERS: dict[str, str] = dict(_PRONOUNS["placeholders"])
PRONOUN_SETS: tuple[str, ...] = tuple(_PRONOUNS["sets"])
SYSTEMS: tuple[str, ...] = tuple(_NOUNS["systems"])
PAIRINGS: tuple[str, ...] = tuple(_NOUNS["pairings"])


def pronoun(pronoun_set: str, case: str) -> str:
    """The form of `pronoun_set` that fills a gap of `case` (er, dat -> ihm)."""
    return _PRONOUNS["sets"][pronoun_set][case]


def options(case: str) -> tuple[str, ...]:
    """The forced-choice options of a gap: one form per pronoun set, in PRONOUN_SETS order."""
    return tuple(pronoun(p, case) for p in PRONOUN_SETS)


def agreeing(system: str) -> tuple[str, ...]:
    """The pronoun sets a noun of `system` agrees with (de-e, Sternchen: en or xier; paper Sec. 6)."""
    return tuple(_NOUNS["systems"][system]["agrees_with"])


def pairing(name: str = "default") -> dict[str, str]:
    """Noun system -> the pronoun set a referent of that system uses."""
    if name not in _NOUNS["pairings"]:
        raise QueerbiasError(f"unknown pairing {name!r}; expected one of {PAIRINGS}")
    return dict(_NOUNS["pairings"][name])


@dataclass(frozen=True)
class Referent:
    """A person as a template names them: article and noun of one system."""

    lemma: str
    system: str
    article: str
    noun: str

    @property
    def phrase(self) -> str:
        return f"{self.article} {self.noun}"


@cache
def referent(lemma: str, system: str) -> Referent:
    """`lemma` (the masculine form used in the templates) in `system`."""
    for table in ("occupations", "participants"):
        forms = _NOUNS[table].get(lemma)
        if forms is not None:
            return Referent(lemma, system, _NOUNS["systems"][system]["article"], forms[SYSTEMS.index(system)])
    raise QueerbiasError(f"no forms for the noun {lemma!r} in data/gruff/nouns.yaml; "
                         "add its four forms there to use templates that name it")


def known_nouns() -> dict[str, dict[str, list[str]]]:
    """The noun tables (occupations, participants) as loaded, for checks and docs."""
    return {"occupations": dict(_NOUNS["occupations"]), "participants": dict(_NOUNS["participants"])}
