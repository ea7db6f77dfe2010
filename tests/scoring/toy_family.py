"""A toy model family, the whole of it in one file, as a new family (a seq2seq LM, say) would be: a causal
LM read from the last token of each sentence only. It has its own scorer class, and it counts the
sentences it tokenised, so that a test sees the registry hand it to everyone who asks."""

from __future__ import annotations

from queerbias.families import Encoding
from queerbias.scoring.causal import CausalFamily, CausalScorer

ENCODED: list[str] = []


class ToyScorer(CausalScorer):
    kind = "toy"


class ToyFamily(CausalFamily):
    name = "toy"
    architecture_suffixes = ()  # never detected: a model is the toy only when asked for
    scorer = ToyScorer

    def encode(self, tokenizer, config, text, max_length):
        """The causal family's tokens, of which only the last carries a score."""
        ENCODED.append(text)
        found = super().encode(tokenizer, config, text, max_length)
        return Encoding(found.ids, found.scorable[-1:], found.word_ids)
