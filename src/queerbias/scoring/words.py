"""Which word each token belongs to, for tokenizers with and without offsets.

`within_word_l2r` masks the rest of a token's word (and the reference loop does the same), so
the scorer needs word boundaries. A fast tokenizer gives them (`word_ids()`, from its
pre-tokenizer). A slow one (XLM's: Moses, then BPE) gives no offsets, but its own
detokenisation says where words end: a token starts a new word when the tokenizer writes
whitespace between it and the token before (`convert_tokens_to_string`: WordPiece drops the
`##` of a continuation, XLM's BPE ends a word-final piece with `</w>`, SentencePiece starts a
word with `▁`). For BERT, which has both, the two agree (tests/scoring/test_families.py).
Special tokens belong to no word; the unknown token is a word of its own, as for fast tokenizers.
"""

from __future__ import annotations

from collections.abc import Sequence


def word_ids(tokenizer, encoded, ids: Sequence[int]) -> tuple[int | None, ...]:
    """The word index of each of `ids` (None for special tokens), `encoded` being the tokenizer's output."""
    if getattr(tokenizer, "is_fast", False):
        return tuple(encoded.word_ids())
    return words_from_tokens(tokenizer, ids)


def words_from_tokens(tokenizer, ids: Sequence[int]) -> tuple[int | None, ...]:
    """Word indices from the tokens alone, by the tokenizer's detokenisation (slow tokenizers)."""
    special = set(tokenizer.all_special_ids) - {tokenizer.unk_token_id}
    tokens = tokenizer.convert_ids_to_tokens(list(ids))
    out: list[int | None] = []
    word, previous = -1, None
    for index, token in zip(ids, tokens):
        if index in special:
            out.append(None)
            previous = None
            continue
        if previous is None or len(tokenizer.convert_tokens_to_string([previous, token]).split()) > 1:
            word += 1
        out.append(word)
        previous = token
    return tuple(out)
