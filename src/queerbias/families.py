"""The model families: what a masked and a causal LM each do their own way, asked of one object per family.

After minicons, which gives each family one scorer class with one vocabulary, a family is one `Family`
object. Its file (`scoring/masked.py`, `scoring/causal.py`) holds its scorer and everything else that
differs by family: how a sentence is tokenised for scoring, which aligned positions carry a score and
what a position's score reads, the reference scripts' one-token loop, how a training corpus becomes
examples, the collator, the targets of held-out perplexity and the LoRA defaults. Models, scoring,
suites and training ask `get_family(lm.kind)`; none compares a family's name. Adding a family (a
seq2seq LM, say) is one file and one entry in `REGISTRY`.

This module is light (no torch, no transformers): the CLI's `--kind` and a training config's `kind:`
read `names()`, and a family's file loads when it is first asked for.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Collection, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from queerbias.plugins import instantiate

MASKED, CAUSAL = "masked", "causal"
#: family name -> "module:Class" of its `Family`; the order is the order in which a checkpoint's kind is detected
REGISTRY: dict[str, str] = {
    MASKED: "queerbias.scoring.masked:MaskedFamily",
    CAUSAL: "queerbias.scoring.causal:CausalFamily",
}
#: model types whose one LM class serves both families (XLM, FlauBERT: `causal` in the config)
DUAL_KIND_TYPES = ("xlm", "flaubert")


@dataclass(frozen=True)
class Encoding:
    """Token ids of one sentence as the reference method tokenises it (`Family.encode`)."""

    ids: tuple[int, ...]
    scorable: tuple[int, ...]  # positions that carry a score of their own
    word_ids: tuple[int | None, ...]


class Family(ABC):
    """One model family: the attributes say what it is, the methods do what differs by family."""

    name: ClassVar[str]
    #: a position's log-probability reads only the tokens before it, as a causal LM's does: what generating
    #: text, lm-eval's loglikelihood requests, padding-free packing, next-token labels, the pairing term's
    #: positions and a left-to-right attention check rest on
    left_to_right: ClassVar[bool]
    #: endings of transformers' class names of this family's LM heads ("ForMaskedLM")
    architecture_suffixes: ClassVar[tuple[str, ...]]
    #: the Hub's pipeline tag of a model card ("fill-mask")
    pipeline_tag: ClassVar[str]
    #: peft's task type of a LoRA adapter of this family (None: peft's default)
    lora_task_type: ClassVar[str | None] = None
    #: the `scoring.scorer.Scorer` subclass of this family
    scorer: ClassVar[type]
    #: transformers' auto class that loads an LM of this family (`AutoModelForMaskedLM`)
    auto_class: ClassVar[type]
    #: transformers' model types that have an LM head of this family
    model_types: ClassVar[Collection[str]]

    # -- scoring --------------------------------------------------------------------

    @abstractmethod
    def encode(self, tokenizer, config, text: str, max_length: int | None) -> Encoding:
        """A sentence as this family's reference script tokenises it under `config` (a `ScoringConfig`: its BOS
        policy), and the positions that carry a score."""

    @abstractmethod
    def shared_scored(self, template: Sequence[int]) -> list[int]:
        """Of the positions of the tokens two sentences share (in order), those the reference scores."""

    @abstractmethod
    def score_input(self, ids: Sequence[int], position: int) -> Hashable:
        """What the log-probability at `position` is a function of, whatever the weights: two positions with the
        same input get the same score."""

    @abstractmethod
    def reference_logprob(self, lm, ids: list[int], words: Sequence[int | None], position: int,
                          config, lang: int | None = None) -> float:
        """The reference scripts' loop for one token: a fresh forward pass, full logits, batch size 1
        (`suites.pairs.reference`, the yardstick of the fast scorer); `config` is the `ScoringConfig` (its
        `pll`), `lang` the id passed as `langs`."""

    # -- training -------------------------------------------------------------------

    @abstractmethod
    def training_chunks(self, texts: list[str], tokenizer, max_length: int) -> list[list[int]]:
        """Token ids per chunk of at most `max_length` tokens: every document cut, never dropped."""

    @abstractmethod
    def training_examples(self, chunks: list[list[int]], packing: bool, max_length: int) -> tuple[list, bool]:
        """(examples, packed): the chunks as the collator takes them, several to an example where packed."""

    @abstractmethod
    def collator(self, tokenizer, packing: bool, mlm_probability: float, shift_labels: bool):
        """The training batches; `shift_labels` for a model whose loss does not shift its labels itself (XLM)."""

    @abstractmethod
    def perplexity_targets(self, ids, mask, tokenizer, mlm_probability: float, generator) -> tuple[Any, Any]:
        """(inputs, targets) of a right-padded batch for held-out perplexity (-100: not counted)."""

    def lora_modules_to_save(self, model_type: str) -> list[str] | None:
        """The modules a LoRA run trains in full by default (None: none)."""
        return None


def names() -> tuple[str, ...]:
    """The registered families, in detection order."""
    return tuple(REGISTRY)


@functools.cache
def get_family(name: str) -> Family:
    """The family registered as `name` (its file loads now)."""
    return instantiate("model family", REGISTRY, name)


def families() -> list[Family]:
    return [get_family(name) for name in REGISTRY]
