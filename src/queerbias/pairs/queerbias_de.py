"""queerbias-de: our own German pair set, generated from templates shipped in the package.

Written by us (not a translation of WinoQueer) so that identity terms, agreement
and stereotypes are German from the start. All content lives in
`queerbias/data/queerbias_de/templates.yaml`; this module only combines it:
frame x identity x counterfactual x predicate, in file order, without randomness,
so the same templates always give the same pairs, ids and checksum.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import chain, cycle, zip_longest

from queerbias.pairs.schema import Pair, PairSet
from queerbias.yamlio import load_packaged_yaml

TEMPLATES = "data/queerbias_de/templates.yaml"
COPULA = "sind"


@dataclass(frozen=True)
class Predicate:
    """A stereotype split into finite verb and rest, in plural and singular."""

    category: str
    verb: str
    rest: str
    verb_sg: str
    rest_sg: str
    groups: frozenset[str]
    names: bool

    @property
    def copula(self) -> bool:
        return self.verb == COPULA

    def and_main(self) -> str:
        """Coordinated after "X ist schwul und ...": a copula shares the first "ist"."""
        return self.rest_sg if self.copula else f"{self.verb_sg} {self.rest_sg}"

    def and_sub(self) -> str:
        """The same coordination with verb-last order, after "dass X schwul ..."."""
        if self.copula:
            return f"und {self.rest_sg} {self.verb_sg}"
        return f"ist und {self.rest_sg} {self.verb_sg}"


@dataclass(frozen=True)
class Identity:
    """A group's phrases and, for each, the counterfactual phrases keyed by group."""

    group: str
    plural: dict[str, dict[str, str]]
    predicative: dict[str, dict[str, str]]
    names: tuple[str, ...]


def _split(text: str) -> tuple[str, str]:
    verb, sep, rest = (part.strip() for part in text.partition("|"))
    if not sep or not verb or not rest:
        raise ValueError(f"{TEMPLATES}: predicate {text!r} is not 'verb | rest'")
    return verb, rest


def _sentence(text: str) -> str:
    """Capitalise the first letter: "trans Frauen" is "Trans Frauen" only at the start."""
    return text[:1].upper() + text[1:]


def load_templates() -> dict:
    """The raw template file (also read by tests and the datasheet table)."""
    return load_packaged_yaml(TEMPLATES)


def _expand(members: list[str], sets: dict[str, list[str]]) -> frozenset[str]:
    return frozenset(chain.from_iterable(sets.get(m, [m]) for m in members))


def _name_pools(names: dict[str, list[str]]) -> dict[str, tuple[str, ...]]:
    mixed = [n for pair in zip_longest(names["male"], names["female"]) for n in pair if n]
    return {**{k: tuple(v) for k, v in names.items()}, "mixed": tuple(mixed)}


def _predicates(spec: dict) -> list[Predicate]:
    sets = spec["group_sets"]
    known = {entry["group"] for entry in spec["identities"]}
    predicates = []
    for category, entries in spec["predicates"].items():
        default_groups = spec["categories"][category]["groups"]
        for entry in entries:
            verb, rest = _split(entry["text"])
            if "singular" in entry:
                verb_sg, rest_sg = _split(entry["singular"])
            else:
                verb_sg, rest_sg = spec["singular"][verb], rest
            groups = _expand(entry.get("groups", default_groups), sets)
            if groups - known:  # a typo would otherwise silently drop pairs
                raise ValueError(f"{TEMPLATES}: {entry['text']!r} names unknown groups {sorted(groups - known)}")
            predicates.append(
                Predicate(category, verb, rest, verb_sg, rest_sg, groups, entry.get("names", True))
            )
    return predicates


def _identities(spec: dict) -> list[Identity]:
    pools = _name_pools(spec["names"])
    return [
        Identity(
            entry["group"],
            entry["plural"],
            entry.get("predicative", {}),
            pools[entry["names"]] if "names" in entry else (),
        )
        for entry in spec["identities"]
    ]


def _generate(spec: dict) -> Iterator[tuple[str, str, str, str, str]]:
    """Yield (category, group, counterfactual_group, sent_more, sent_less) in file order."""
    identities = _identities(spec)
    # Names rotate per group through its pool rather than multiplying the pairs.
    name_cycles = {identity.group: cycle(identity.names) for identity in identities}
    for predicate in _predicates(spec):
        for identity in identities:
            if identity.group not in predicate.groups:
                continue
            fill = dict(verb=predicate.verb, rest=predicate.rest)
            for phrase, counterfactuals in identity.plural.items():
                for cf_group, cf_phrase in counterfactuals.items():
                    for frame in spec["plural_frames"]:
                        yield (
                            predicate.category, identity.group, cf_group,
                            _sentence(frame.format(who=phrase, **fill)),
                            _sentence(frame.format(who=cf_phrase, **fill)),
                        )
            if not (predicate.names and identity.names):
                continue
            for phrase, counterfactuals in identity.predicative.items():
                for frame in spec["name_frames"]:
                    fill = dict(
                        name=next(name_cycles[identity.group]),
                        and_main=predicate.and_main(),
                        and_sub=predicate.and_sub(),
                    )
                    for cf_group, cf_phrase in counterfactuals.items():
                        yield (
                            predicate.category, identity.group, cf_group,
                            frame.format(identity=phrase, **fill),
                            frame.format(identity=cf_phrase, **fill),
                        )


def build_queerbias_de() -> PairSet:
    """Generate the queerbias-de pair set; ids look like `qde-phase-0042`."""
    spec = load_templates()
    counters: Counter[str] = Counter()
    pairs = []
    for category, group, cf_group, more, less in _generate(spec):
        counters[category] += 1
        pairs.append(
            Pair(
                pair_id=f"qde-{category}-{counters[category]:04d}",
                sent_more=more,
                sent_less=less,
                group=group,
                counterfactual_group=cf_group,
                category=category,
            )
        )
    return PairSet(
        name="queerbias-de",
        pairs=pairs,
        source=f"queerbias:{TEMPLATES}",
        meta={"template_version": spec["version"], "language": "de"},
    )


def counts_table(pairs: PairSet) -> str:
    """Markdown table of pairs per group and category, as printed in the datasheet."""
    categories = list(load_templates()["categories"])
    counts = Counter((p.group, p.category) for p in pairs.pairs)
    lines = [
        "| group | " + " | ".join(categories) + " | total |",
        "|---" * (len(categories) + 2) + "|",
    ]
    for group in pairs.groups():
        cells = [counts[group, c] for c in categories]
        lines.append(f"| {group} | " + " | ".join(map(str, cells)) + f" | {sum(cells)} |")
    totals = [sum(counts[g, c] for g in pairs.groups()) for c in categories]
    lines.append("| **total** | " + " | ".join(map(str, totals)) + f" | {len(pairs)} |")
    return "\n".join(lines)


if __name__ == "__main__":  # regenerate the datasheet table: python -m queerbias.pairs.queerbias_de
    print(counts_table(build_queerbias_de()))
