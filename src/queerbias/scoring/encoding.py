"""Sentences as a scorer tokenises them, from the tokenizer alone (no weights).

Each model family tokenises as its reference script does (`Family.encode`: a masked LM with
[CLS]/[SEP], a causal LM with the BOS token prepended as text), and `SentenceEncoder` adds
lowercasing and the model's length limit, so pairs can be screened before any weights load and
every scorer encodes exactly as the screen did.
"""

from __future__ import annotations

from queerbias.errors import QueerbiasError
from queerbias.families import Encoding, get_family
from queerbias.scoring.config import ScoringConfig


def causal_text(tokenizer, text: str, bos: str) -> str:
    """The string the reference scripts tokenise (without special tokens) for a causal LM:
    `bos_token + text` under bos=prepend (BOS as text), else the text itself (the causal family's
    `encode`, and the lm-eval export's requests, which must stay light)."""
    if bos != "prepend":
        return text
    if tokenizer.bos_token is None:
        raise QueerbiasError(f"{tokenizer.name_or_path} has no BOS token to prepend; "
                             "use the scoring option bos=none")
    return tokenizer.bos_token + text


class SentenceEncoder:
    """Text -> `Encoding` as a scorer of the family `kind` sees it: lowercasing, special tokens or BOS,
    and the model's length limit (`max_length` tokens, None = unknown).

    Under `long_sentences: truncate` a longer sentence keeps its first `max_length`
    tokens; otherwise `too_long` tells callers which sentences to refuse or leave out.
    """

    def __init__(self, tokenizer, kind: str, config: ScoringConfig, max_length: int | None):
        self.tokenizer, self.config, self.max_length = tokenizer, config, max_length
        self._tokenize = get_family(kind).encode
        self._lowercase = lowercases(tokenizer, config)
        self._truncate = config.long_sentences == "truncate" and max_length is not None

    def __call__(self, text: str, cut: bool = True) -> Encoding:
        """The encoding the scorer uses; `cut=False`: never truncated (to measure it)."""
        return self._tokenize(self.tokenizer, self.config, text.lower() if self._lowercase else text,
                              self.max_length if cut and self._truncate else None)

    def too_long(self, encoding: Encoding) -> bool:
        return self.max_length is not None and len(encoding.ids) > self.max_length


def lowercases(tokenizer, config: ScoringConfig) -> bool:
    """Whether text is lower-cased before tokenising: as the reference, when the tokenizer
    lower-cases (uncased BERT), unless the config says never."""
    return config.lowercase == "auto" and bool(getattr(tokenizer, "do_lower_case", False))
