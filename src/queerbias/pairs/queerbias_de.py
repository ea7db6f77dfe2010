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
from functools import cache
from itertools import chain, cycle, zip_longest

from queerbias.pairs.schema import Pair, PairSet
from queerbias.pairs.shipped import OUT_OF_DISTRIBUTION, shipped_pairs
from queerbias.pairs.splits import DEFAULT_TEST_FRACTION, assign_values
from queerbias.yamlio import load_packaged_yaml

TEMPLATES = "data/queerbias_de/templates.yaml"
FRAMES = "data/queerbias_de/training_frames.yaml"
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


def _split(text: str, where: str = TEMPLATES) -> tuple[str, str]:
    verb, sep, rest = (part.strip() for part in text.partition("|"))
    if not sep or not verb or not rest:
        raise ValueError(f"{where}: predicate {text!r} is not 'verb | rest'")
    return verb, rest


def parse_predicate(text: str, category: str, where: str) -> Predicate:
    """A plural-only predicate ("verb | rest"), such as a neutral one, for plural frames."""
    verb, rest = _split(text, where)
    return Predicate(category, verb, rest, verb, rest, frozenset(), False)


def _sentence(text: str) -> str:
    """Capitalise the first letter: "trans Frauen" is "Trans Frauen" only at the start."""
    return text[:1].upper() + text[1:]


def fill_frame(frame: str, slot: str, phrase: str, fill: dict) -> tuple[str, int]:
    """A frame with its identity placeholder (`slot`: "who" for a plural phrase, "identity" for a name
    frame's predicative) and the predicate's placeholders filled, and the character offset where the
    phrase ends in it. A plural frame may write "{Who}" for the phrase capitalised (a sentence that
    starts after a colon); a plural sentence's first letter is capitalised."""
    capital = _sentence(phrase)
    head, mark, _ = frame.partition("{" + slot + "}")
    if not mark and slot == "who":
        head, mark, _ = frame.partition("{Who}")
        phrase = capital
    if not mark:
        raise ValueError(f"frame {frame!r} has no {{{slot}}}")
    values = {slot: phrase, **({"Who": capital} if slot == "who" else {}), **fill}
    sentence = frame.format(**values)
    end = len(head.format(**values)) + len(phrase)
    return (_sentence(sentence) if slot == "who" else sentence), end


def load_templates() -> dict:
    """The raw template file (also read by tests and the datasheet table)."""
    return load_packaged_yaml(TEMPLATES)


def _expand(members: list[str], sets: dict[str, list[str]]) -> frozenset[str]:
    return frozenset(chain.from_iterable(sets.get(m, [m]) for m in members))


def _name_pools(names: dict[str, list[str]]) -> dict[str, tuple[str, ...]]:
    mixed = [n for pair in zip_longest(names["male"], names["female"]) for n in pair if n]
    return {**{k: tuple(v) for k, v in names.items()}, "mixed": tuple(mixed)}


def predicates(spec: dict) -> list[tuple[Predicate, str]]:
    """Every predicate with its template id, "<category>/<index in the category>"."""
    sets = spec["group_sets"]
    known = {entry["group"] for entry in spec["identities"]}
    predicates = []
    for category, entries in spec["predicates"].items():
        default_groups = spec["categories"][category]["groups"]
        for index, entry in enumerate(entries):
            verb, rest = _split(entry["text"])
            if "singular" in entry:
                verb_sg, rest_sg = _split(entry["singular"])
            else:
                verb_sg, rest_sg = spec["singular"][verb], rest
            groups = _expand(entry.get("groups", default_groups), sets)
            if groups - known:  # a typo would otherwise silently drop pairs
                raise ValueError(f"{TEMPLATES}: {entry['text']!r} names unknown groups {sorted(groups - known)}")
            predicates.append((
                Predicate(category, verb, rest, verb_sg, rest_sg, groups, entry.get("names", True)),
                f"{category}/{index:02d}",
            ))
    return predicates


def identities(spec: dict) -> list[Identity]:
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


@dataclass(frozen=True)
class _Filled:
    """One pair before it becomes text: a frame, its fill and the two identity phrases."""

    category: str
    group: str
    counterfactual_group: str
    frame: str
    slot: str  # the frame's identity placeholder: "who" (plural) or "identity" (name frames)
    fill: dict
    phrase: str
    counterfactual: str
    keys: dict

    def text(self, phrase: str, **fill) -> str:
        return fill_frame(self.frame, self.slot, phrase, {**self.fill, **fill})[0]

    @property
    def phrase_end(self) -> int:
        """Where the identity phrase ends in the stereotypical sentence (a character offset)."""
        return fill_frame(self.frame, self.slot, self.phrase, self.fill)[1]


#: the placeholders a predicate fills, by the frame's identity placeholder
_PREDICATE_SLOTS = {"who": ("verb", "rest"), "identity": ("and_main", "and_sub")}


def _fill(predicate: Predicate, slot: str) -> dict:
    if slot == "who":
        return dict(verb=predicate.verb, rest=predicate.rest)
    return dict(and_main=predicate.and_main(), and_sub=predicate.and_sub())


def _generate(spec: dict) -> Iterator[_Filled]:
    """Every pair in file order. `keys` name the template parts it was built from (`frame`:
    "plural/0" ..., `template`: the predicate, "phase/00" ...), the units a held-out split
    keeps apart (`pairs.splits`)."""
    people = identities(spec)
    # Names rotate per group through its pool rather than multiplying the pairs.
    name_cycles = {identity.group: cycle(identity.names) for identity in people}
    for predicate, template in predicates(spec):
        for identity in people:
            if identity.group not in predicate.groups:
                continue
            for phrase, counterfactuals in identity.plural.items():
                for cf_group, cf_phrase in counterfactuals.items():
                    for index, frame in enumerate(spec["plural_frames"]):
                        yield _Filled(predicate.category, identity.group, cf_group, frame, "who",
                                      _fill(predicate, "who"), phrase, cf_phrase,
                                      {"frame": f"plural/{index}", "template": template})
            if not (predicate.names and identity.names):
                continue
            for phrase, counterfactuals in identity.predicative.items():
                for index, frame in enumerate(spec["name_frames"]):
                    fill = dict(name=next(name_cycles[identity.group]), **_fill(predicate, "identity"))
                    for cf_group, cf_phrase in counterfactuals.items():
                        yield _Filled(predicate.category, identity.group, cf_group, frame, "identity",
                                      fill, phrase, cf_phrase,
                                      {"frame": f"name/{index}", "template": template})


def build_pairs(spec: dict, prefix: str = "qde") -> list[tuple[Pair, _Filled]]:
    """Every pair with what it was built from; ids look like `qde-phase-0042`."""
    counters: Counter[str] = Counter()
    built = []
    for filled in _generate(spec):
        counters[filled.category] += 1
        pair = Pair(
            pair_id=f"{prefix}-{filled.category}-{counters[filled.category]:04d}",
            sent_more=filled.text(filled.phrase),
            sent_less=filled.text(filled.counterfactual),
            group=filled.group,
            counterfactual_group=filled.counterfactual_group,
            category=filled.category,
            frame=filled.keys["frame"],
            phrase_end=filled.phrase_end,
        )
        built.append((pair, filled))
    return built


def build_queerbias_de() -> PairSet:
    """Generate the queerbias-de pair set (ids look like `qde-phase-0042`)."""
    spec = load_templates()
    return PairSet(
        name="queerbias-de",
        pairs=[pair for pair, _ in build_pairs(spec)],
        source=f"queerbias:{TEMPLATES}",
        meta={"template_version": spec["version"], "language": "de"},
    )


def split_keys(pair_set: PairSet | None = None) -> dict[str, dict[str, str]]:
    """pair id -> the columns a split can be made by: frame, template, category, group (the
    generated set is always the same, so `pair_set` is not needed)."""
    return pair_keys(build_pairs(load_templates()))


@cache
def held_out_templates() -> frozenset[str]:
    """The stereotype predicates (template ids) of `queerbias-de:test`: the side the registry's default
    split of queerbias-de by template holds out (`pairs.splits`, seed 0), which no training set holds."""
    sides = assign_values([keys["template"] for keys in split_keys().values()], DEFAULT_TEST_FRACTION, 0)
    return frozenset(template for template, side in sides.items() if side == "test")


def pair_keys(built: list[tuple[Pair, _Filled]]) -> dict[str, dict[str, str]]:
    return {pair.pair_id: {**filled.keys, "category": pair.category, "group": pair.group}
            for pair, filled in built}


def frames_spec() -> tuple[dict, int]:
    """queerbias-de's identities and predicates in the training frames of `FRAMES`: its frames
    and name pools replaced, its plural phrases extended (and the frames file's version)."""
    spec, frames = load_templates(), load_packaged_yaml(FRAMES)
    identities = [{**entry, "plural": {**entry["plural"], **frames["plural"].get(entry["group"], {})}}
                  for entry in spec["identities"]]
    return {**spec, "plural_frames": frames["plural_frames"], "name_frames": frames["name_frames"],
            "names": frames["names"], "identities": identities}, frames["version"]


@cache  # the registry asks for the set and then for its split keys: one build serves both
def _frames_built() -> tuple[tuple[tuple[Pair, _Filled], ...], int, int]:
    """The frames set's pairs, without those sharing a sentence with a shipped out-of-distribution
    set (a short frame such as "{who} {verb} {rest}." can write an OOD set's sentence word for
    word), the frames file's version and how many were left out. Ids are given before the
    filter, so the others keep theirs."""
    spec, version = frames_spec()
    kept, left_out = build_training_pairs(spec, "qdf")
    return kept, version, left_out


@cache
def out_of_distribution_sentences() -> frozenset[str]:
    """Every sentence of the shipped out-of-distribution sets, which no training set may hold."""
    return frozenset(sentence for name in OUT_OF_DISTRIBUTION for pair in shipped_pairs(name).pairs
                     for sentence in (pair.sent_more, pair.sent_less))


def build_training_pairs(spec: dict, prefix: str) -> tuple[tuple[tuple[Pair, _Filled], ...], int]:
    """The pairs of a training frames spec without those sharing a sentence with a shipped
    out-of-distribution set, and how many were left out."""
    held_out = out_of_distribution_sentences()
    built = build_pairs(spec, prefix)
    kept = tuple((pair, filled) for pair, filled in built
                 if pair.sent_more not in held_out and pair.sent_less not in held_out)
    return kept, len(built) - len(kept)


def build_queerbias_de_frames() -> PairSet:
    """queerbias-de-frames: training pairs in other frames (ids look like `qdf-phase-0042`)."""
    built, version, left_out = _frames_built()
    return PairSet(name="queerbias-de-frames", pairs=[pair for pair, _ in built], source=f"queerbias:{FRAMES}",
                   meta={"frames_version": version, "language": "de", "left_out_as_ood": left_out})


def frames_split_keys(pair_set: PairSet | None = None) -> dict[str, dict[str, str]]:
    """The split keys of queerbias-de-frames (template ids are queerbias-de's)."""
    return pair_keys(_frames_built()[0])


def preference_triples(pair_ids: set[str]) -> list[dict[str, str]]:
    """Preference data for these pairs (BiasDPO-style, Allam 2024): the frame up to the
    identity phrase as prompt, the stereotype as rejected continuation, one of its
    category's `refutations` (in turn) as chosen. Frames that name the predicate before
    the identity ("Ehrlich gesagt {verb} {who} ...") cannot share a prompt and are left out.
    """
    spec = load_templates()
    refutations = _refutations(spec)
    turn: Counter[str] = Counter()
    triples = []
    for pair, filled in build_pairs(spec):
        head, tail = filled.frame.split("{" + filled.slot + "}", 1)
        if pair.pair_id not in pair_ids or any(f"{{{k}}}" in head for k in _PREDICATE_SLOTS[filled.slot]):
            continue
        refutation = refutations[pair.category][turn[pair.category] % len(refutations[pair.category])]
        turn[pair.category] += 1
        whole = filled.text(filled.phrase)
        prompt = whole[:len(whole) - len(tail.format(**filled.fill))]
        triples.append({
            "prompt": prompt,
            "chosen": tail.format(**{**filled.fill, **_fill(refutation, filled.slot)}),
            "rejected": tail.format(**filled.fill),
            "pair_id": pair.pair_id,
            "group": pair.group,
        })
    return triples


def _refutations(spec: dict) -> dict[str, list[Predicate]]:
    """category -> its refuting predicates, parsed like the stereotype predicates."""
    found = {}
    for category, entries in spec["refutations"].items():
        found[category] = []
        for entry in entries:
            verb, rest = _split(entry["text"])
            verb_sg, rest_sg = _split(entry["singular"]) if "singular" in entry else (spec["singular"][verb], rest)
            found[category].append(Predicate(category, verb, rest, verb_sg, rest_sg, frozenset(), True))
    return found


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
