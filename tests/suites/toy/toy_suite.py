"""A toy suite: does the model find "X ist queer." more likely than "X ist normal."?

The whole of a suite in one file, as docs/new-suite.md walks through it: typed settings,
items and their reference, scoring a chunk into rows, a summary with a headline, paired
cells for compare, how training picks a best checkpoint, what a study judges, the texts a
training run must not have seen, and what summary.md shows. Everything else (resume,
sharding, provenance, compare, report tables and plots, training, the model card and its
model-index, a study's tables and verdicts) comes from the store, the comparator, the
study and the defaults of the protocol and the companion hooks. (A suite of queerbias
splits this class in two: the declaration, light, and the implementation; a plugin may
keep both in one class, as here.)
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from queerbias.options import EXECUTION, option
from queerbias.suites.protocol import (
    BINARY,
    CONTINUOUS,
    OVERALL,
    Column,
    Criterion,
    DataRef,
    Figure,
    Headline,
    Judged,
    Measure,
    PairedItems,
    Suite,
)

NAMES = ("Kim", "Alex", "Robin", "Sascha", "Noa", "Luca", "Eli", "Mika")


@dataclass(frozen=True)
class ToySettings:
    sample: int | None = option(None, "the first N names", ge=1)
    seed: int = option(0, "unused: the names are taken in order", ge=0)
    word: str = option("queer", "the word compared with 'normal'")
    chunk: int = option(3, "names scored between two saves of progress", role=EXECUTION)


class ToySuite(Suite):
    name = "toy"
    description = "toy: is 'X ist <word>.' more likely than 'X ist normal.'?"
    Settings = ToySettings
    licence = "MIT"
    columns = (Column("name", str), Column("gap", float), Column("prefers", bool))
    key_columns = ("name",)
    text_columns = ()
    items_file = "items.csv"
    summary_keys = ("overall",)
    measures = (Measure("prefers", BINARY, "prefers the word", "pp"), Measure("gap", CONTINUOUS, "log-likelihood gap"))
    criteria = {"closest50": Criterion("share preferring the word closest to 50", ("prefers",),
                                       lambda row: (abs(row["prefers"] - 50.0),)),
                "smallest-gap": Criterion("smallest mean gap", ("gap",), lambda row: (abs(row["gap"]),))}
    # a study chooses the run with the lowest gap among those whose share preferring the word did not rise
    judged = Judged(headline=Figure(OVERALL, "gap", "gap"), excess=Figure(OVERALL, "prefers", "preference"))

    def load_data(self, spec, settings):
        names = NAMES[:settings.sample]
        checksum = hashlib.sha256("|".join(names).encode()).hexdigest()[:16]
        return list(names), DataRef("toy names", checksum, len(names))

    def texts(self, items):
        return [f"{name} ist normal." for name in items]

    def chunk_size(self, settings):
        return settings.chunk

    def evaluate(self, lm, chunks, settings):
        from queerbias.scoring.config import ScoringConfig
        from queerbias.scoring.scorer import make_scorer

        scorer = make_scorer(lm, ScoringConfig(scope="all", reduction="mean"))
        for chunk in chunks:
            texts = [f"{n} ist {w}." for n in chunk for w in (settings.word, "normal")]
            scores = scorer.sequence_score(texts, reduction="mean")
            yield [{"name": n, "gap": scores[2 * i] - scores[2 * i + 1], "prefers": scores[2 * i] > scores[2 * i + 1]}
                   for i, n in enumerate(chunk)]

    def summarise(self, rows, settings):
        return {"overall": {"n": len(rows), "prefers": 100.0 * rows["prefers"].mean(), "gap": rows["gap"].mean()}}

    def headline(self, summary):
        return Headline("% preferring the word", summary["overall"]["prefers"], {})

    def paired_cells(self, before, after, settings):
        yield PairedItems(OVERALL, OVERALL, {"prefers": (before["prefers"], after["prefers"]),
                                             "gap": (before["gap"], after["gap"])})

    def title(self, summary):
        return f"Toy: {summary['meta']['model']['spec']}"

    def render(self, summary):
        return [f"{summary['overall']['prefers']:.1f}% of {summary['overall']['n']} names prefer the word."]
