"""How sentences are scored; the defaults reproduce the WinoQueer reference scripts.

Every field that deviates from the reference is an explicit choice, and the whole
config (with its hash, `scoring_id`) is written into every result so that runs
scored differently are never compared by accident.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, fields

from queerbias.errors import QueerbiasError

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
}
# a sentence longer than the model takes: refuse it (the reference would crash), keep
# only its first tokens (truncate), or leave its pair out (skip): `--long-sentences`
LONG_SENTENCES = ("error", "truncate", "skip")
# options added after results were first published: they enter `scoring_id` only when
# set, so the ids of earlier runs, scored the same way, stay valid
_LATER_DEFAULTS = {"long_sentences": "error"}


@dataclass(frozen=True)
class ScoringConfig:
    scope: str = "shared"
    reduction: str = "sum"
    pll: str = "original"
    bos: str = "prepend"
    lowercase: str = "auto"
    decimals: int = 3
    long_sentences: str = "error"

    def __post_init__(self) -> None:
        for name, allowed in SCORING_CHOICES.items():
            if getattr(self, name) not in allowed:
                raise QueerbiasError(f"scoring option {name} must be one of {allowed}, "
                                     f"got {getattr(self, name)!r}")
        if self.long_sentences not in LONG_SENTENCES:
            raise QueerbiasError(f"scoring option long_sentences must be one of {LONG_SENTENCES}, "
                                 f"got {self.long_sentences!r}")
        if not 0 <= self.decimals <= 12:
            raise QueerbiasError(f"decimals must be between 0 and 12, got {self.decimals}")

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def scoring_id(self) -> str:
        identity = {k: v for k, v in self.to_dict().items() if _LATER_DEFAULTS.get(k, object()) != v}
        blob = json.dumps(identity, sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:16]

    def deviations(self) -> dict:
        """The options that differ from the reference method."""
        reference = ScoringConfig()
        return {f.name: getattr(self, f.name) for f in fields(self)
                if getattr(self, f.name) != getattr(reference, f.name)}

    @classmethod
    def from_dict(cls, data: dict) -> ScoringConfig:
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise QueerbiasError(f"unknown scoring options {sorted(unknown)}; known: {sorted(known)}")
        return cls(**data)
