"""How sentences are scored; the defaults reproduce the WinoQueer reference scripts.

Every field that deviates from the reference is an explicit choice, and the whole
config (with its hash, `scoring_id`) is written into every result so that runs
scored differently are never compared by accident.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, fields

from queerbias.options import option, validate

SCORING_CHOICES = {
    # which tokens of a sentence count: those shared with the other sentence of the
    # pair (reference), every token, or only the differing ones
    "scope": ("shared", "all", "differing"),
    # sum of log-probabilities (reference) or their mean
    "reduction": ("sum", "mean"),
    # masked LMs: mask one token at a time (reference), or also the rest of its
    # word to the right (Kauf & Ivanova 2023, `within_word_l2r`)
    "pll": ("original", "within_word_l2r"),
    # causal LMs: prepend the BOS token as the reference does, or not
    "bos": ("prepend", "none"),
    # lowercase the text when the tokenizer lowercases (reference) or never
    "lowercase": ("auto", "never"),
    # a sentence longer than the model takes: refuse it (the reference would crash), keep
    # only its first tokens (truncate), or leave its pair out (skip): `--long-sentences`
    "long_sentences": ("error", "truncate", "skip"),
}
# options added after results were first published: they enter `scoring_id` only when
# set, so the ids of earlier runs, scored the same way, stay valid
_LATER_DEFAULTS = {"long_sentences": "error"}


@dataclass(frozen=True)
class ScoringConfig:
    """The scoring method. The pair suite's settings extend it (`suites.pairs.settings`), so
    its fields are also the `queerbias score` flags."""

    scope: str = option("shared", "which tokens count", choices=SCORING_CHOICES["scope"])
    reduction: str = option("sum", "sentence score from token scores", choices=SCORING_CHOICES["reduction"])
    pll: str = option("original", "masked LMs: also mask the rest of the word to the right",
                      choices=SCORING_CHOICES["pll"])
    bos: str = option("prepend", "causal LMs: BOS policy", choices=SCORING_CHOICES["bos"])
    lowercase: str = option("auto", "lowercase like the reference when the tokenizer does",
                            choices=SCORING_CHOICES["lowercase"])
    decimals: int = option(3, "rounding before comparing", ge=0, le=12)
    long_sentences: str = option("error", "a sentence longer than the model takes: refuse it, score its "
                                          "first tokens (truncate) or leave its pair out (skip)",
                                 choices=SCORING_CHOICES["long_sentences"])

    def __post_init__(self) -> None:
        validate(self, lambda name: f"scoring option {name}")

    def scoring(self) -> ScoringConfig:
        """The scoring method alone (of a subclass's settings: without what they add)."""
        return ScoringConfig(**{f.name: getattr(self, f.name) for f in fields(ScoringConfig)})

    def to_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(ScoringConfig)}

    @property
    def scoring_id(self) -> str:
        identity = {k: v for k, v in self.to_dict().items() if _LATER_DEFAULTS.get(k, object()) != v}
        blob = json.dumps(identity, sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:16]

    def deviations(self) -> dict:
        """The options that differ from the reference method."""
        reference = ScoringConfig().to_dict()
        return {key: value for key, value in self.to_dict().items() if value != reference[key]}
