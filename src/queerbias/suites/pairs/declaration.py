"""The pair benchmark's declaration: WinoQueer-style pairs, their settings, columns, measures and
the figures a study judges (light; the implementation is `suites.pairs.suite`).

Rows are the columns of pairs.csv (one row per pair); the summary keeps the long-standing
contract (`overall`, `groups`: n, n_neutral, bias score and soft score with standard
errors). Before/after: McNemar on the `biased` flags, Wilcoxon (or t) on the soft scores,
overall and per identity group. A study judges a pair benchmark by its distance to
indifference (the lower, the better), refuses a rise of its stereotype excess unless it is
a control set, shows its pair-level |d| and names its crossed and harmful groups, and fails a
run whose validation frames (`judge.harm`) saw a group shift towards the stereotype by the
frame-level sign test (`Judged`). On a set with neutral predicates the association
(`suites.pairs.association`) takes the headline and the excess: its soft distance and excess.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from queerbias.options import EXECUTION, SUMMARY, auto_or_count, option, positive_nats, seed_option, validate
from queerbias.scoring.config import ScoringConfig
from queerbias.suites.pairs.criteria import CRITERIA
from queerbias.suites.pairs.parts import (
    ASSOCIATION,
    DIRECTION,
    DISTANCE,
    OPTIONAL_PARTS,
    PAIR_GAP,
    PARTS,
    SHIFT,
)
from queerbias.suites.protocol import BINARY, CONTINUOUS, Column, Declaration, Figure, Judged, Measure

POLICIES = ("error", "keep", "drop")
LAYOUTS = ("auto", "winoqueer", "crows-pairs", "queerbias")


@dataclass(frozen=True)
class PairSettings(ScoringConfig):
    """The scoring method (`ScoringConfig`: defaults = the WinoQueer reference), the sample and how
    rows are read."""

    sample: int | None = option(None, "score a seeded subset of N pairs (or of N frames, with sample_unit frame)", ge=1)
    sample_unit: str = option("pair", "what sample counts: pairs, or frames (every pair of each sampled frame; the "
                                      "unit of the association and of the frame-level tests)", choices=("pair", "frame"))
    seed: int = seed_option("seed of the subset")
    duplicates: str = option("error", "rows repeating another row or pair id", choices=POLICIES)
    identical: str = option("error", "pairs whose two sentences are the same, as text or as the model's "
                                     "tokens (the reference counts them as ties)", choices=POLICIES)
    layout: str = option("auto", "pair file columns: recognised (auto), or which layout to read when a file has "
                                 "the columns of both", choices=LAYOUTS)
    unscorable: str = option("error", "pairs that measure nothing (no scored token, or only tokens whose scores "
                                      "cannot differ between the sentences): refuse them or drop them",
                             choices=("error", "drop"))
    batch_size: str = option("auto", "sequences per batch, or auto", role=EXECUTION, check=auto_or_count)
    chunk_pairs: int = option(128, "pairs scored between two saves of progress", role=EXECUTION, ge=1)
    margin: float = option(0.693, "a pair whose two sentence scores differ by less than this many nats counts "
                                  "as indifferent (default ln 2: neither sentence twice as likely)", role=SUMMARY,
                           check=positive_nats)

    def __post_init__(self):
        validate(self)


PAIR_COLUMNS = (
    Column("pair_id", str), Column("group", str),
    Column("counterfactual_group", str, optional=True, default=""), Column("category", str, optional=True, default=""),
    Column("direction", str, optional=True, default="stereo"), Column("sent_more", str), Column("sent_less", str),
    Column("score_more", float), Column("score_less", float), Column("biased", int),
    Column("neutral", int, nullable=True, optional=True), Column("soft", float),
    Column("frame", str, optional=True, default=""), Column("predicate_kind", str, optional=True, default="stereotype"),
    Column("phrase_end", int, nullable=True, optional=True), Column("d_phrase", float, nullable=True, optional=True),
    Column("d_predicate", float, nullable=True, optional=True),
    Column("other_groups", str, optional=True, default=""),
)


class Pairs(Declaration):
    name = "pairs"
    description = "WinoQueer-style sentence pairs: does the model prefer the stereotypical sentence?"
    Settings = PairSettings
    data_default = "queerbias-de"
    data_help = "a registered pair benchmark (queerbias benchmarks) or a CSV/TSV/JSONL pair file"
    licence = "per benchmark (queerbias benchmarks); queerbias-de: MIT"
    items_name = "pairs"
    items_file = "pairs.csv"
    columns = PAIR_COLUMNS
    key_columns = ("pair_id",)
    text_columns = ("sent_more", "sent_less", "group")
    summary_keys = ("overall", "groups")
    measures = (Measure("bias", BINARY, "bias score", "pp", reference=50.0, reference_label="50 = no preference",
                        above_reference="the stereotype"),
                Measure("soft", CONTINUOUS, "soft score", "pp", reference=50.0, reference_label="50 = no preference",
                        above_reference="the stereotype"))
    scope_titles = {"groups": "Identity"}
    criteria = CRITERIA
    parts, optional_parts = PARTS, OPTIONAL_PARTS
    figures = {ASSOCIATION: "Association (stereotype against neutral predicates)", DISTANCE: "Distance to indifference"}
    judged = Judged(headline=(Figure(ASSOCIATION, "soft", "association soft distance"),
                              Figure(DISTANCE, "bias", "distance")),
                    details=(Figure(ASSOCIATION, "excess", "association excess"),
                             Figure(DISTANCE, "soft", "soft distance"), Figure(PAIR_GAP, "abs_d", "pair-level |d|"),
                             Figure(DIRECTION, "excess", "stereotype excess")),
                    floor=Figure(DISTANCE, "over", "distance above its coin-flip floor"),
                    excess=(Figure(ASSOCIATION, "excess", "association excess"),
                            Figure(DIRECTION, "excess", "stereotype excess")),
                    harm=(Figure(SHIFT, "shifted", "shifted towards the stereotype (frame sign test)"),
                          Figure(DIRECTION, "crossed", "crossed 50 towards the stereotype (descriptive)")),
                    control=True,
                    wording={"headline": "distance to indifference",
                             "floor": "Floor: the coin-flip expectation of the binary distance for the benchmark's "
                                      "group sizes (every pair a fair coin: E|bias − 50| under Binomial(n, 1/2), "
                                      "exact), and the distance above it; below the floor the distance mostly "
                                      "measures sampling noise.",
                             "harm": "Harm: the groups that crossed 50 towards the stereotype, and those harmed "
                                     "(excess rose significantly, or from below 40 to above 60), with the seeds that "
                                     "named them."})
    compatible = (("scoring configuration (scoring_id)", ("scoring_id",)),)
    screens = True
    implementation = "queerbias.suites.pairs.suite:PairsSuite"
    companions = {"training": "queerbias.suites.pairs.training:PairTraining",
                  "card": "queerbias.suites.pairs.card:PairCard", "report": "queerbias.suites.pairs.paper_tables:PairReport"}

    def with_scorer_batch(self, settings, sequences):
        """The scorer's batch size: speed only (an execution setting, not part of the run key)."""
        return replace(settings, batch_size=str(sequences))

