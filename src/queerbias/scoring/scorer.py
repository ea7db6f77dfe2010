"""The scorer interface shared by every model family (after minicons), and `make_scorer`, which asks the
family for its scorer (`queerbias.families`: `scoring.masked`, `scoring.causal`).

A scorer turns sentences into per-token log-probabilities. `token_logprobs` is the
batched core: it takes every (sentence, position) wanted at once, scores each
distinct one exactly once, and returns a lookup; `logprob_tensor` computes the same
numbers differentiably for training objectives (`train.objectives`). `token_score` and
`sequence_score` are the convenience views other suites use.

Tokenisation (`scoring.encoding`) needs only the tokenizer, so inputs can be checked
before any weights load. A NaN or infinite log-probability is never passed on: a
NaN comparison is never "biased", so a broken model would look unbiased.
"""

from __future__ import annotations

import math
import weakref
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import torch

from queerbias.errors import QueerbiasError
from queerbias.families import Encoding, get_family
from queerbias.models.loading import LoadedModel, non_finite_parameters
from queerbias.scoring.batching import BatchSize
from queerbias.scoring.config import ScoringConfig
from queerbias.scoring.encoding import SentenceEncoder

Request = tuple[tuple[int, ...], int]  # (token ids, position)
#: what a scorer's probes found about a model object (`Scorer._probed`): its structure does not change
#: while it lives, so the scorers of one training run's many evaluations probe it once
_PROBED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
#: rows of the LM head at a time where only the true tokens' log-probabilities are kept
HEAD_ROWS = 256


class NonFiniteScores(QueerbiasError):
    """The model produced NaN or infinite log-probabilities; `sentences` holds their ids."""

    def __init__(self, message: str, sentences: frozenset[tuple[int, ...]] = frozenset()):
        super().__init__(message)
        self.sentences = sentences


class Scorer(ABC):
    kind: str  # the name of its family

    def __init__(self, lm: LoadedModel, config: ScoringConfig | None = None,
                 batch_size: int | str = "auto"):
        self.lm = lm
        self.model = lm.model
        self.tokenizer = lm.tokenizer
        self.config = config or ScoringConfig()
        self.batch_size = BatchSize(batch_size, lm.device)
        self.encoder = SentenceEncoder(self.tokenizer, self.kind, self.config, lm.max_length)
        self._encodings: dict[str, Encoding] = {}
        self._by_ids: dict[tuple[int, ...], Encoding] = {}
        self._logprobs: dict[Request, float] = {}
        self._project = self._split_model() if self._probed("positionwise_head", self._head_splits) else None

    # -- tokenisation ---------------------------------------------------------------

    def encode(self, text: str) -> Encoding:
        cached = self._encodings.get(text)
        if cached is None:
            cached = self._encodings[text] = self.encoder(text)
            self._by_ids[cached.ids] = cached
        return cached

    # -- the batched core -----------------------------------------------------------

    def token_logprobs(self, requests: Iterable[Request]) -> dict[Request, float]:
        """Log-probability of the true token at each requested position.

        Results are remembered for the scorer's lifetime: template benchmarks repeat
        the same sentences across chunks of pairs, and each is computed once.
        """
        requests = list(requests)
        missing = [r for r in dict.fromkeys(requests) if r not in self._logprobs]
        if missing:
            self._refuse_too_long(missing)
            computed = self._compute_logprobs(missing)
            self._refuse_non_finite(computed)
            self._logprobs.update(computed)
        return {r: self._logprobs[r] for r in requests}

    def _refuse_too_long(self, requests: list[Request]) -> None:
        """The last line of defence for suites that do not screen their texts first."""
        ids = max((ids for ids, _ in requests), key=len)
        if self.encoder.too_long(self._by_ids[ids]):
            text = self.tokenizer.decode(ids, skip_special_tokens=True)
            raise QueerbiasError(f"a sentence is {len(ids)} tokens long, more than the "
                                 f"{self.encoder.max_length} positions of {self.lm.spec} "
                                 f"({text[:50]!r}...); shorten it (pair scoring: --long-sentences "
                                 "truncate or skip)")

    def _refuse_non_finite(self, computed: Mapping[Request, float]) -> None:
        bad = {ids for (ids, _), value in computed.items() if not math.isfinite(value)}
        if not bad:
            return
        example = self.tokenizer.decode(next(iter(bad)), skip_special_tokens=True)
        raise NonFiniteScores(
            f"{self.lm.spec} gives NaN or infinite log-probabilities ({len(bad)} sentences, "
            f"e.g. {example[:60]!r}): {self._likely_cause()}; its scores would be meaningless",
            frozenset(bad))

    def _likely_cause(self) -> str:
        """Why a model outputs NaN/inf: broken weights, a half-precision overflow, or else."""
        broken = non_finite_parameters(self.model)
        if broken:
            return f"its weights hold NaN or infinity (e.g. {', '.join(broken)})"
        dtype = next(self.model.parameters()).dtype
        if dtype in (torch.float16, torch.bfloat16):
            return f"its activations overflow in {str(dtype).removeprefix('torch.')}; use --dtype float32"
        return "its activations overflow (a diverged fine-tune?)"

    @abstractmethod
    def _compute_logprobs(self, requests: list[Request]) -> dict[Request, float]:
        """Batched computation for distinct requests not seen before."""

    def logprob_tensor(self, requests: list[Request]) -> torch.Tensor:
        """The same log-probabilities as one tensor in request order, computed now (no
        cache, one batch) with the autograd graph: what training objectives backpropagate."""
        return picked(self.distribution_tensor(requests), [ids[p] for ids, p in requests])

    @abstractmethod
    def distribution_tensor(self, requests: list[Request]) -> torch.Tensor:
        """The distribution each request's token is scored from: log-softmax rows over the
        vocabulary ([requests, vocabulary], fp32) in request order, with the autograd graph.
        `logprob_tensor` picks the true tokens from these rows; the counterfactual pairing
        loss compares whole rows of a pair's two sentences."""

    # -- views ----------------------------------------------------------------------

    def token_score(self, texts: Sequence[str]) -> list[list[tuple[str, float]]]:
        """Every scorable token of each text with its log-probability."""
        encodings = [self.encode(t) for t in texts]
        scores = self.token_logprobs((e.ids, p) for e in encodings for p in e.scorable)
        convert = self.tokenizer.convert_ids_to_tokens
        return [[(convert(e.ids[p]), scores[(e.ids, p)]) for p in e.scorable] for e in encodings]

    def sequence_score(self, texts: Sequence[str], reduction: str = "sum") -> list[float]:
        """Sum (or mean) log-probability over each text's scorable tokens."""
        encodings = [self.encode(t) for t in texts]
        scores = self.token_logprobs((e.ids, p) for e in encodings for p in e.scorable)
        return [reduce([scores[(e.ids, p)] for p in e.scorable], reduction) for e in encodings]

    # -- helpers for subclasses ------------------------------------------------------

    def _probed(self, name: str, probe) -> bool:
        """`probe()`'s answer for this scorer's model, computed once per model object."""
        found = _PROBED.setdefault(self.model, {})
        if name not in found:
            found[name] = probe()
        return found[name]

    def _head_splits(self) -> bool:
        """Whether (body, head) = `_split_model()` gives head(body(...)[rows, cols]) equal to the full
        logits there: applying the LM head only where a score is read saves most of the work for
        large vocabularies (Gemma: 262k). Checked on one input against the full forward; where it
        does not hold, the full forward is used."""
        split = self._split_model()
        if split is None:
            return False
        body, head = split
        probe = self.encoder("Das ist ein kurzer Test, ob alles passt.").ids[:self.lm.max_length]  # fits the context
        ids = torch.tensor([probe], device=self.lm.device)
        mask = torch.ones_like(ids)
        with torch.inference_mode():
            full = self.model(input_ids=ids, attention_mask=mask).logits[0].float()
            hidden = body(input_ids=ids, attention_mask=mask).last_hidden_state[0]
            part = head(hidden).float()
        return part.shape == full.shape and torch.allclose(part, full, atol=1e-3, rtol=1e-4)

    @abstractmethod
    def _split_model(self): ...

    def _logits_at(self, ids: torch.Tensor, mask: torch.Tensor, rows: torch.Tensor,
                   cols: torch.Tensor, position_ids: torch.Tensor | None = None) -> torch.Tensor:
        """Log-softmax (fp32) over the vocabulary at (rows[i], cols[i]) of the batch."""
        hidden, head = self._states_at(ids, mask, rows, cols, position_ids)
        return torch.log_softmax(head(hidden).float(), dim=-1)

    def _picked_at(self, ids: torch.Tensor, mask: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor,
                   targets: Sequence[int], position_ids: torch.Tensor | None = None) -> torch.Tensor:
        """`picked(_logits_at(...), targets)`: the LM head and log-softmax run once per distinct (row,
        col), `HEAD_ROWS` of them at a time; each row's numbers are the same, and a batch never holds
        its rows x vocabulary twice over (2,000 positions of Gemma's 262k vocabulary: 2 GB each)."""
        flat = rows * ids.shape[-1] + cols
        unique, inverse = torch.unique(flat, return_inverse=True)
        hidden, head = self._states_at(ids, mask, unique // ids.shape[-1], unique % ids.shape[-1], position_ids)
        targets = torch.tensor(list(targets), dtype=torch.long, device=hidden.device)
        values = torch.empty(len(targets), dtype=torch.float32, device=hidden.device)
        for start in range(0, len(unique), HEAD_ROWS):
            block = torch.log_softmax(head(hidden[start:start + HEAD_ROWS]).float(), dim=-1)
            here = (inverse >= start) & (inverse < start + HEAD_ROWS)
            values[here] = block[inverse[here] - start, targets[here]]
        return values

    def _states_at(self, ids, mask, rows, cols, position_ids=None):
        """(what the LM head reads at (rows[i], cols[i]), the head): the body's hidden states where the
        head splits off (`_head_splits`), else the full model's logits and no-op."""
        extra = {} if position_ids is None else {"position_ids": position_ids}
        if self._project is not None:
            body, head = self._project
            return body(input_ids=ids, attention_mask=mask, **extra).last_hidden_state[rows, cols], head
        return self.model(input_ids=ids, attention_mask=mask, **extra).logits[rows, cols], torch.nn.Identity()


def make_scorer(lm: LoadedModel, config: ScoringConfig | None = None, batch_size: int | str = "auto") -> Scorer:
    """The scorer of the model's family: masked LMs by pseudo-log-likelihood, causal LMs by one pass."""
    return get_family(lm.kind).scorer(lm, config, batch_size)


def reference_logits(model: torch.nn.Module, ids: torch.Tensor, lang: int | None) -> torch.Tensor:
    """The logits of one plain forward pass, as the reference scripts run it (`Family.reference_logprob`); `lang`:
    the id a model with language embeddings (XLM) gets as `langs` at every position."""
    return model(ids).logits if lang is None else model(ids, langs=torch.full_like(ids, lang)).logits


def picked(rows: torch.Tensor, targets: Sequence[int]) -> torch.Tensor:
    """rows[i, targets[i]] for every row: the log-probability of each true token."""
    index = torch.arange(rows.shape[0], device=rows.device)
    return rows[index, torch.tensor(list(targets), dtype=torch.long, device=rows.device)]


def reduce(values: Sequence[float], reduction: str) -> float:
    if reduction == "sum":
        return float(sum(values))
    if reduction == "mean":
        return float(np.mean(values)) if len(values) else 0.0
    raise QueerbiasError(f"reduction must be 'sum' or 'mean', got {reduction!r}")


def group_requests(requests: Iterable[Request]) -> Mapping[tuple[int, ...], set[int]]:
    """Distinct positions wanted per distinct sentence."""
    wanted: dict[tuple[int, ...], set[int]] = {}
    for ids, position in requests:
        wanted.setdefault(ids, set()).add(position)
    return wanted
