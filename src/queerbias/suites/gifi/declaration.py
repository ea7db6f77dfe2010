"""GIFI-DE's declaration: generations of a causal LM scored on the seven dimensions, its columns,
measure and criterion (light; the settings are `suites.gifi.config`, the implementation
`suites.gifi.suite`). A study may guard with its overall GIFI score.
"""

from __future__ import annotations

from queerbias.suites.gifi.config import GifiConfig
from queerbias.suites.protocol import (
    OVERALL,
    STATISTIC,
    Column,
    Criterion,
    Declaration,
    Figure,
    Judged,
    Measure,
)


class Gifi(Declaration):
    name = "gifi"
    description = "GIFI-DE: how equally a generative model treats German pronoun groups, on seven dimensions"
    Settings = GifiConfig
    data_default = "the packaged prompts"
    data_help = "a GIFI-DE prompts YAML (default: the packaged one, or the config's prompts)"
    licence = "prompts and pronoun data: MIT (written for queerbias)"
    items_file = "generations.jsonl"
    columns = (
        Column("run", int), Column("seed", int), Column("task", str), Column("item_id", str),
        Column("template_id", str), Column("group", str, True), Column("name", str), Column("sample", int),
        Column("state", str, True), Column("attribute", str, True), Column("expected", float, True),
        Column("prompt", str), Column("generation", str), Column("detected", str, True),
        Column("ambiguous", bool, True, optional=True), Column("correct", bool, True), Column("answer", float, True), Column("refusal", bool, True),
        Column("sentiment", float, True),
        Column("toxicity", float, True), Column("embedding", object, True),
    )
    key_columns = ("run", "item_id")
    text_columns = ("prompt",)
    summary_keys = ("gifi", "dimensions")
    measures = (Measure("score", STATISTIC, "GIFI score", digits=3),)
    scope_titles = {"dimensions": "Dimension"}
    criteria = {"highest": Criterion("highest GIFI (most equal treatment)", ("score",), lambda row: (-row["score"],))}
    judged = Judged(guard=Figure(OVERALL, "score"))
    implementation = "queerbias.suites.gifi.suite:GifiSuite"
