"""A pair's causal-LM scores as lm-evaluation-harness `loglikelihood` requests.

A sentence's score is the sum of log P(token | every token before it) over its scored
positions (docs/scoring.md; WinoQueer's shared-token method by default). Those positions
form runs of consecutive tokens, and one run [i, j) is exactly one lm-eval request:
context = the text of tokens 0..i-1 (the BOS text included), continuation = the text of
tokens i..j-1, whose log-likelihood lm-eval's causal backend sums over the continuation's
tokens, each conditioned on everything before it.

That holds only if lm-eval tokenises the two strings back into our ids.
`lm_eval_encoding` mirrors how lm-eval 0.4's Hugging Face backend does it
(`TemplateLM._encode_pair`: trailing whitespace of the context moves to the continuation,
context + continuation is encoded whole and split at the length of the encoded context;
`HFLM.tok_encode`: a string starting with the decoded prefix token (BOS, else EOS) is
encoded without special tokens, others with `add_bos_token` or the tokenizer's default).
Every request is checked against it when it is built, and a pair no split can reproduce
is refused with its id: the task never scores other tokens than `queerbias score` does.
Runs are split further where lm-eval's one-token cache would mix them up (`collision_free`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from queerbias.errors import QueerbiasError
from queerbias.families import CAUSAL
from queerbias.pairs.schema import Pair
from queerbias.scoring.config import ScoringConfig
from queerbias.scoring.encoding import SentenceEncoder, causal_text, lowercases
from queerbias.suites.pairs.alignment import scored_positions


@dataclass(frozen=True)
class SentenceRequests:
    """The (context, continuation) requests whose log-likelihoods add up to one sentence's
    score, and how many tokens they cover (the divisor under reduction=mean)."""

    requests: tuple[tuple[str, str], ...]
    n_tokens: int

    def to_dict(self) -> dict:
        return {"requests": [list(r) for r in self.requests], "n_tokens": self.n_tokens}


def lm_eval_encoding(tokenizer, context: str, continuation: str,
                     add_bos_token: bool | None = None) -> tuple[list[int], list[int]]:
    """(context ids, continuation ids) as lm-eval's HF backend builds them for a non-empty context."""
    n_spaces = len(context) - len(context.rstrip())
    if n_spaces:
        context, continuation = context[:-n_spaces], context[-n_spaces:] + continuation
    whole = _tok_encode(tokenizer, context + continuation, add_bos_token)
    context_ids = _tok_encode(tokenizer, context, add_bos_token)
    return context_ids, whole[len(context_ids):]


def _tok_encode(tokenizer, text: str, add_bos_token: bool | None) -> list[int]:
    options = {} if add_bos_token is None else {"add_special_tokens": add_bos_token}
    prefix_id = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    if prefix_id is not None and text.startswith(tokenizer.decode(prefix_id)):
        options["add_special_tokens"] = False
    return tokenizer.encode(text, **options)


def runs(positions: Sequence[int]) -> list[tuple[int, int]]:
    """Sorted positions as half-open runs of consecutive positions: [1, 2, 3, 6] -> [(1, 4), (6, 7)]."""
    found: list[tuple[int, int]] = []
    for p in sorted(positions):
        if found and found[-1][1] == p:
            found[-1] = (found[-1][0], p + 1)
        else:
            found.append((p, p + 1))
    return found


Span = tuple[tuple[int, ...], int, int]  # (sentence ids, start, end): one request in token space


def collision_free(spans) -> dict[Span, list[Span]]:
    """Each span, split where needed so that no two requests trip lm-eval's one-token cache.

    lm-eval's HF backend (0.4.x, `logits_cache` on by default) computes one forward pass per
    distinct `context + continuation[:-1]` and hands its logits to every request with that
    key; a request whose continuation is shorter than the one computed then reads the
    log-probabilities of the wrong positions (the gather starts at the first continuation
    position). Spans sharing a key with a different length are split off their last token
    until every key has one length; the sums are unchanged.
    """
    pieces = {span: [span] for span in spans}
    while True:
        lengths: dict[tuple[int, ...], set[int]] = {}
        for parts in pieces.values():
            for ids, start, end in parts:
                lengths.setdefault(ids[:end - 1], set()).add(end - start)
        colliding = {key for key, found in lengths.items() if len(found) > 1}
        if not colliding:
            return pieces
        for span, parts in pieces.items():
            pieces[span] = [piece for ids, start, end in parts for piece in (
                [(ids, start, end - 1), (ids, end - 1, end)]
                if end - start > 1 and ids[:end - 1] in colliding else [(ids, start, end)])]


class RequestBuilder:
    """Builds and checks the requests of every pair for one tokenizer and scoring config.

    `add_bos_token` is the value the lm-eval run will be given (None: not given);
    `max_length` the model's context length (None: unknown), as the scorer checks it.
    """

    def __init__(self, tokenizer, config: ScoringConfig, add_bos_token: bool | None = None,
                 max_length: int | None = None):
        if not getattr(tokenizer, "is_fast", False):
            raise QueerbiasError(f"{tokenizer.name_or_path}: the lm-eval export needs a fast "
                                 "tokenizer (it maps tokens back to text through their offsets)")
        if config.long_sentences != "error":
            raise QueerbiasError(f"long_sentences={config.long_sentences} cannot be exported: "
                                 "lm-eval would score whole sentences; shorten or drop them")
        self.tokenizer, self.config, self.add_bos_token = tokenizer, config, add_bos_token
        self.encoder = SentenceEncoder(tokenizer, CAUSAL, config, max_length)
        self._lowercase = lowercases(tokenizer, config)
        self._texts: dict[tuple[int, ...], tuple[str, list[tuple[int, int]]]] = {}

    def build(self, pairs: Sequence[Pair]) -> list[dict]:
        """Per pair {"more": SentenceRequests, "less": SentenceRequests, "probe": [...]}, the
        sentences aligned in the reference's order. A pair with no scored token at all (both
        scores 0, a tie) still needs one request, as lm-eval cannot process a document without
        any: "probe" then holds one whose result is ignored."""
        plans = [self._plan(pair) for pair in pairs]
        probes = [[] if any(positions for _, positions in plan) else [self._probe(pair, plan)]
                  for pair, plan in zip(pairs, plans)]
        pieces = collision_free({(ids, start, end) for plan in plans for ids, positions in plan
                                 for start, end in runs(positions)}
                                | {span for probe in probes for span in probe})
        strings: dict[Span, tuple[str, str]] = {}
        built = []
        for pair, plan, probe in zip(pairs, plans, probes):
            first, second = (SentenceRequests(tuple(
                self._request(pair, piece, strings) for start, end in runs(positions)
                for piece in pieces[(ids, start, end)]), len(positions)) for ids, positions in plan)
            more, less = (second, first) if pair.direction == "antistereo" else (first, second)
            built.append({"more": more, "less": less, "probe": [
                self._request(pair, piece, strings) for span in probe for piece in pieces[span]]})
        return built

    def _plan(self, pair: Pair) -> list[tuple[tuple[int, ...], list[int]]]:
        """(ids, scored positions) of both sentences, as the scorer aligns them."""
        ids1, ids2 = (self._tokenize(sentence) for sentence in pair.aligned_order)
        pos1, pos2 = scored_positions(ids1, ids2, CAUSAL, self.config.scope,
                                      range(1, len(ids1)), range(1, len(ids2)))
        return [(ids1, pos1), (ids2, pos2)]

    @staticmethod
    def _probe(pair: Pair, plan) -> Span:
        ids = max((ids for ids, _ in plan), key=len)
        if len(ids) < 2:
            raise QueerbiasError(f"pair {pair.pair_id}: both sentences are a single token, which "
                                 "lm-eval cannot score; drop the pair")
        return ids, 1, len(ids)

    def _tokenize(self, sentence: str) -> tuple[int, ...]:
        """The scorer's ids of the sentence, and the text and offsets they come from."""
        encoding = self.encoder(sentence)
        ids = encoding.ids
        if self.encoder.too_long(encoding):
            raise QueerbiasError(f"{sentence[:50]!r}... is {len(ids)} tokens long, more than the "
                                 f"model's {self.encoder.max_length}; shorten it or drop its pair")
        text = causal_text(self.tokenizer, sentence.lower() if self._lowercase else sentence,
                           self.config.bos)
        encoded = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        if tuple(encoded["input_ids"]) != ids:
            raise QueerbiasError(f"{text!r}: the tokenizer gives other ids with offsets than "
                                 "without; this tokenizer cannot be exported")
        self._texts.setdefault(ids, (text, encoded["offset_mapping"]))
        return ids

    def _request(self, pair: Pair, span: Span, strings: dict) -> tuple[str, str]:
        """The (context, continuation) strings that lm-eval encodes back into the span's
        context and continuation ids. Offsets may or may not count a token's leading space,
        so both sides of the space are tried."""
        if span in strings:
            return strings[span]
        ids, start, end = span
        text, offsets = self._texts[ids]
        context_ends = dict.fromkeys((offsets[start - 1][1], offsets[start][0]))
        continuation_ends = dict.fromkeys((offsets[end - 1][1],
                                           offsets[end][0] if end < len(ids) else len(text)))
        for c in context_ends:
            for e in continuation_ends:
                if 0 < c < e and lm_eval_encoding(self.tokenizer, text[:c], text[c:e], self.add_bos_token) \
                        == (list(ids[:start]), list(ids[start:end])):
                    strings[span] = text[:c], text[c:e]
                    return strings[span]
        tokens = self.tokenizer.convert_ids_to_tokens(list(ids[start:end]))
        why = ("the token before them ends in whitespace, and lm-eval moves a context's trailing "
               "whitespace into the continuation" if text[:offsets[start - 1][1]][-1:].isspace()
               else "this tokenizer splits a prefix of the sentence into other tokens")
        raise QueerbiasError(
            f"pair {pair.pair_id}: lm-eval cannot score the tokens {tokens} of {text!r} as "
            f"queerbias does ({why}), so its numbers would differ; this tokenizer cannot be "
            "exported for these pairs")


def sentence_score(loglikelihoods: Sequence[float], n_tokens: int, reduction: str) -> float:
    """A sentence's score from its requests' log-likelihoods (scorer.reduce over the tokens)."""
    total = float(sum(loglikelihoods))
    if reduction == "mean":
        return total / n_tokens if n_tokens else 0.0
    return total
