"""Causal-LM scoring: one forward pass per distinct sentence.

The reference feeds the prefix before each scored token to the model again; a
causal model's logits at position p-1 of the full sentence are the same numbers,
so one pass serves every position. Batches are padded on the right (position
ids then match an unpadded pass) and the LM head runs only where a score is read.

Sentences of a benchmark or of a training batch share long beginnings (a frame's opening, the
words before the identity phrase). Where the model allows it, they are computed as one prefix
tree: every distinct beginning is one token of a single row, its position id its depth and its
attention restricted to its ancestors (a 4D mask), so what the sentences share is computed once,
nothing is padded, and the LM head runs once per distinct beginning; each hidden state is the one
a sentence's own pass computes. Evaluation sorts a chunk's sentences by their tokens and cuts the
trees at a node budget (the tree's attention is dense over its nodes); training
(`distribution_tensor`) makes one tree of its batch. Whether a model honours such a mask
(position ids and a custom 4D mask; ALiBi models, for one, do not) is checked once against the
padded pass, with dropout off, and the padded pass is kept where it does not, and for sentences
longer than the model's sliding attention window (one mask serves every layer).

`CausalFamily` is what the registry (`queerbias.families`) hands everyone who asks about a causal LM:
its tokenisation with the BOS token as text, its reference loop, how a corpus becomes (packed)
examples and batches, next-token targets for held-out perplexity and peft's task type.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from transformers import AutoModelForCausalLM, DataCollatorWithFlattening
from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

from queerbias.errors import QueerbiasError
from queerbias.families import CAUSAL, Encoding, Family
from queerbias.scoring.batching import pad_right
from queerbias.scoring.encoding import causal_text
from queerbias.scoring.scorer import Request, Scorer, group_requests, reference_logits
from queerbias.scoring.words import word_ids


class _SoftcappedHead(torch.nn.Module):
    """LM head followed by Gemma-2/3 style final logit soft-capping."""

    def __init__(self, head: torch.nn.Module, cap: float):
        super().__init__()
        self.head, self.cap = head, cap

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.head(hidden) / self.cap) * self.cap


class CausalScorer(Scorer):
    kind = CAUSAL

    def _split_model(self):
        body, head = self.model.base_model, self.model.get_output_embeddings()
        if head is None or body is self.model:
            return None
        cap = getattr(self.model.config, "final_logit_softcapping", None)
        return body, (_SoftcappedHead(head, cap) if cap else head)

    def _padded(self, wanted: list[tuple[tuple[int, ...], set[int]]]):
        """One right-padded batch of the sentences: (ids, mask, rows, cols, requests), where the
        request (ids, p) is read at (row, p - 1), the model's next-token distribution after ids[:p]."""
        pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        input_ids, attention = pad_right([ids for ids, _ in wanted], pad_id, self.lm.device)
        rows, cols, keys = [], [], []
        for row, (ids, positions) in enumerate(wanted):
            for p in sorted(positions):
                rows.append(row)
                cols.append(p - 1)
                keys.append((ids, p))
        device = self.lm.device
        return input_ids, attention, torch.tensor(rows, device=device), torch.tensor(cols, device=device), keys

    def _distributions(self, wanted: list[tuple[tuple[int, ...], set[int]]]):
        """(requests, log-softmax rows over the vocabulary) of every wanted position of these
        sentences from one right-padded forward pass. Keeps the autograd graph unless called under
        inference mode."""
        input_ids, attention, rows, cols, keys = self._padded(wanted)
        if not keys:
            return keys, None
        return keys, self._logits_at(input_ids, attention, rows, cols)

    def _forward(self, wanted: list[tuple[tuple[int, ...], set[int]]]):
        """(requests, log-probabilities of their true tokens) from one padded pass, the LM head and
        log-softmax a bounded number of rows at a time (`Scorer._picked_at`)."""
        input_ids, attention, rows, cols, keys = self._padded(wanted)
        if not keys:
            return keys, torch.zeros(0, device=self.lm.device)
        return keys, self._picked_at(input_ids, attention, rows, cols, [ids[p] for ids, p in keys])

    def _compute_logprobs(self, requests: list[Request]) -> dict[Request, float]:
        wanted = list(group_requests(requests).items())
        results: dict[Request, float] = {}
        tree = self._tree_serves([ids for ids, _ in wanted])

        def step(batch: list[int]) -> None:
            with torch.inference_mode():
                keys, values = (self._tree_logprobs if tree else self._forward)([wanted[i] for i in batch])
            results.update(zip(keys, values.tolist()))

        self.batch_size.run([len(ids) for ids, _ in wanted], step,
                            (lambda indices: self._tree_batches(wanted, indices)) if tree else None)
        return results

    def _tree_serves(self, sentences: list[tuple[int, ...]]) -> bool:
        """Whether these sentences may be computed as prefix trees (the model checked once, `_probed`)."""
        if self._tree is None:
            self._tree = self._probed("prefix_tree", self._tree_matches_padded)
        return self._tree and self._within_window(sentences)

    #: prefix-tree nodes per evaluation pass on auto batch sizes (at most; half the token budget once
    #: an OOM has lowered it): the tree's attention is dense over its nodes, so at 1,024 it costs
    #: about a tenth of the pass's matrix products (Gemma 3 270M)
    _tree_nodes: int = 1024

    def _tree_batches(self, wanted: list[tuple[tuple[int, ...], set[int]]], indices: list[int]) -> list[list[int]]:
        """These sentences (indices into `wanted`) in token order (shared beginnings side by side), cut
        into trees of at most `_tree_nodes` nodes, or of the fixed batch size's number of sentences."""
        fixed, budget = self.batch_size.max_sequences, self.batch_size.token_budget
        limit = min(self._tree_nodes, max(1, budget // 2)) if budget else None
        batches, current, nodes, previous = [], [], 0, ()
        for index in sorted(indices, key=lambda i: wanted[i][0]):
            ids = wanted[index][0]
            shared = next((i for i, (a, b) in enumerate(zip(ids, previous)) if a != b), min(len(ids), len(previous)))
            full = len(current) >= fixed if fixed else nodes + len(ids) - shared > limit
            if current and full:
                batches.append(current)
                current, nodes, shared = [], 0, 0
            current.append(index)
            nodes += len(ids) - shared
            previous = ids
        return batches + ([current] if current else [])

    def _tree_logprobs(self, wanted: list[tuple[tuple[int, ...], set[int]]]):
        """(requests, log-probabilities of their true tokens) from one pass over the prefix tree of these
        sentences: what sentences share is computed once, the LM head once per distinct beginning."""
        tree = PrefixTree([ids for ids, _ in wanted])
        ids, positions, mask = tree.tensors(self.lm.device)
        keys = [(sentence, p) for sentence, wanted_at in wanted for p in sorted(wanted_at)]
        nodes = torch.tensor([tree.node(sentence[:p]) for sentence, p in keys], dtype=torch.long, device=ids.device)
        return keys, self._picked_at(ids, mask, torch.zeros_like(nodes), nodes,
                                     [sentence[p] for sentence, p in keys], position_ids=positions)

    def distribution_tensor(self, requests: list[Request]) -> torch.Tensor:
        if self._tree_serves([ids for ids, _ in requests]):
            return self._tree_distributions(requests)
        keys, rows = self._distributions(list(group_requests(requests).items()))
        order = {key: i for i, key in enumerate(keys)}
        return rows[torch.tensor([order[r] for r in requests], dtype=torch.long, device=rows.device)]

    _tree: bool | None = None  # whether this model computes a prefix tree as its padded pass (once per model)

    def _tree_distributions(self, requests: list[Request]) -> torch.Tensor:
        """The rows of `distribution_tensor`, in request order, from one pass over the prefix tree
        of the sentences: the row of (ids, p) is the hidden state of the tree node ids[:p] (shared
        by every sentence that begins so) through the LM head."""
        tree = PrefixTree(list(dict.fromkeys(ids for ids, _ in requests)))
        device = self.lm.device
        ids, positions, mask = tree.tensors(device)
        nodes = torch.tensor([tree.node(ids_[:p]) for ids_, p in requests], dtype=torch.long, device=device)
        return self._logits_at(ids, mask, torch.zeros_like(nodes), nodes, position_ids=positions)

    def _within_window(self, sentences: list[tuple[int, ...]]) -> bool:
        """Whether every sentence fits the model's sliding attention window (if it has one): one 4D
        mask serves every layer, so a sliding layer must see each sentence whole, as it does then."""
        window = getattr(self.model.config, "sliding_window", None)
        return not window or max(map(len, sentences), default=0) <= window

    def _tree_matches_padded(self) -> bool:
        """Whether the prefix-tree pass gives the padded pass's rows on two sentences that share their
        beginning (float32, dropout off, within 1e-4)."""
        limits = [n for n in (self.lm.max_length, getattr(self.model.config, "sliding_window", None)) if n]
        fits = min(limits, default=None)  # BLOOM (ALiBi) has no maximum length
        probe = [self.encoder(text).ids[:fits] for text in
                 ("Das ist ein kurzer Test, ob alles passt.", "Das ist ein langer Test.")]
        wanted = [(ids, set(range(1, len(ids)))) for ids in probe]
        was_training = self.model.training
        self.model.eval()
        try:
            with torch.inference_mode(), torch.autocast(self.lm.device.type, enabled=False):
                keys, padded = self._distributions(wanted)
                tree = self._tree_distributions(keys)
        except (AssertionError, RuntimeError, TypeError, ValueError):  # no 4D mask or position ids (XLM asserts)
            return False
        finally:
            self.model.train(was_training)
        return torch.allclose(padded, tree, atol=1e-4, rtol=1e-4)


class PrefixTree:
    """The distinct beginnings of some token sequences as the nodes of one tree, parents first:
    node i holds one token at depth i (its position id) and attends to its ancestors and itself."""

    def __init__(self, sequences: list[tuple[int, ...]]):
        self._index: dict[tuple[int, ...], int] = {}
        self.tokens: list[int] = []
        self.depths: list[int] = []
        self.parents: list[int] = []
        for ids in sequences:
            for end in range(1, len(ids) + 1):
                prefix = ids[:end]
                if prefix not in self._index:
                    self._index[prefix] = len(self.tokens)
                    self.tokens.append(ids[end - 1])
                    self.depths.append(end - 1)
                    self.parents.append(self._index[ids[:end - 1]] if end > 1 else -1)

    def node(self, prefix: tuple[int, ...]) -> int:
        return self._index[prefix]

    def tensors(self, device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """input ids and position ids ([1, nodes]) and the attention mask ([1, 1, nodes, nodes], True
        where a node may attend)."""
        size = len(self.tokens)
        mask = torch.zeros((size, size), dtype=torch.bool)
        for node, parent in enumerate(self.parents):
            if parent >= 0:
                mask[node] = mask[parent]
            mask[node, node] = True
        return (torch.tensor([self.tokens], device=device), torch.tensor([self.depths], device=device),
                mask[None, None].to(device))


class CausalFamily(Family):
    name = CAUSAL
    left_to_right = True
    architecture_suffixes = ("ForCausalLM", "LMHeadModel")
    pipeline_tag = "text-generation"
    lora_task_type = "CAUSAL_LM"
    scorer = CausalScorer
    auto_class = AutoModelForCausalLM
    model_types = MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    def encode(self, tokenizer, config, text, max_length):
        """BOS as text, no special tokens; every position after the first carries a score."""
        encoded = tokenizer(causal_text(tokenizer, text, config.bos), add_special_tokens=False,
                            truncation=max_length is not None, max_length=max_length)
        ids = tuple(encoded["input_ids"])
        return Encoding(ids, tuple(range(1, len(ids))), word_ids(tokenizer, encoded, ids))

    def shared_scored(self, template):
        """All but the first aligned position: the prepended BOS."""
        return list(template[1:])

    def score_input(self, ids, position):
        """The tokens up to and including the position: a causal LM reads no later one."""
        return tuple(ids[:position + 1])

    @torch.inference_mode()
    def reference_logprob(self, lm, ids, words, position, config, lang=None):
        prefix = torch.tensor([ids[:position]], device=lm.device)
        logits = reference_logits(lm.model, prefix, lang)[0, -1]
        return torch.log_softmax(logits.float(), dim=0)[ids[position]].item()

    def training_chunks(self, texts, tokenizer, max_length):
        """With BOS (if the tokenizer adds one) and EOS; a chunk of one token teaches nothing and is left out."""
        eos, chunks = tokenizer.eos_token_id, []
        for ids in tokenizer(texts)["input_ids"]:
            if eos is not None and (not ids or ids[-1] != eos):
                ids = ids + [eos]
            chunks += [ids[i:i + max_length] for i in range(0, len(ids), max_length)
                       if len(ids[i:i + max_length]) > 1]
        return chunks

    def training_examples(self, chunks, packing, max_length):
        return (pack(chunks, max_length), True) if packing else (chunks, False)

    def collator(self, tokenizer, packing, mlm_probability, shift_labels):
        if packing:
            if shift_labels:
                raise QueerbiasError("padding-free packing needs a model that shifts its labels itself")
            return PackedCollator()
        return CausalPadCollator(tokenizer.pad_token_id, shift_labels)

    def perplexity_targets(self, ids, mask, tokenizer, mlm_probability, generator):
        """Each token predicts the next; padding and the last position count nothing."""
        return ids, torch.cat([ids[:, 1:].masked_fill(mask[:, 1:] == 0, -100), torch.full((len(ids), 1), -100)],
                              dim=1)


def pack(chunks: list[list[int]], max_length: int) -> list[list[list[int]]]:
    """Consecutive chunks grouped into examples of at most `max_length` tokens (order kept)."""
    examples, current, size = [], [], 0
    for ids in chunks:
        if current and size + len(ids) > max_length:
            examples.append(current)
            current, size = [], 0
        current.append(ids)
        size += len(ids)
    if current:
        examples.append(current)
    return examples


@dataclass
class CausalPadCollator:
    """Right-padded causal batch; padding is excluded from the loss by position, not by id
    (GPT-2 style models pad with their EOS token, which must still be learned).

    `shift`: the labels at position t are the token at t + 1, for a model whose loss compares
    `logits[t]` with `labels[t]` (XLM, `train.modeling.shifts_labels`); the others shift internally and
    get `labels = input_ids`."""

    pad_id: int
    shift: bool = False

    def __call__(self, features: list[dict]) -> dict:
        width = max(len(f["input_ids"]) for f in features)
        ids = torch.full((len(features), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(features), width), dtype=torch.long)
        for row, feature in enumerate(features):
            ids[row, :len(feature["input_ids"])] = torch.tensor(feature["input_ids"])
            mask[row, :len(feature["input_ids"])] = 1
        labels = ids.masked_fill(mask == 0, -100)
        if self.shift:
            labels = torch.cat([labels[:, 1:], torch.full_like(labels[:, :1], -100)], dim=1)
        return {"input_ids": ids, "attention_mask": mask, "labels": labels}


@dataclass
class PackedCollator:
    """Flattens every document of every packed example into one padding-free row: its position ids restart at
    every document, which the model's attention turns into a block-diagonal mask (with `use_cache=False`), so
    no document attends to another."""

    def __post_init__(self):
        self.flatten = DataCollatorWithFlattening(return_position_ids=True)

    def __call__(self, features: list[dict]) -> dict:
        return self.flatten([{"input_ids": ids} for f in features for ids in f["segments"]])
