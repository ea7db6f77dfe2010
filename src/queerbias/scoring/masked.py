"""The masked family: pseudo-log-likelihood scoring, and what training needs of a masked LM.

`MaskedScorer` masks one position at a time: every masked variant across all requested sentences is
built once, batched by length under a token budget, and the LM head is applied only at the masked
position of each row. `MaskedFamily` is what the registry (`queerbias.families`) hands everyone who
asks about a masked LM: its tokenisation with [CLS]/[SEP], its reference loop, the MLM collator, the
fixed masking of held-out perplexity and the head a LoRA run trains in full.
"""

from __future__ import annotations

import logging

import torch
from transformers import AutoModelForMaskedLM, DataCollatorForLanguageModeling
from transformers.models.auto.modeling_auto import MODEL_FOR_MASKED_LM_MAPPING_NAMES

from queerbias.errors import QueerbiasError
from queerbias.families import MASKED, Encoding, Family
from queerbias.scoring.batching import pad_right
from queerbias.scoring.scorer import Request, Scorer, picked, reference_logits
from queerbias.scoring.words import word_ids

log = logging.getLogger(__name__)

#: model_type -> masked-LM head modules a LoRA run trains in full (the tied decoder excluded; empty: the head is
#: the tied decoder alone): the MLM objective needs a head that can move with the encoder
MLM_HEAD_MODULES = {
    "bert": ("cls.predictions.transform",),
    **dict.fromkeys(["roberta", "xlm-roberta", "camembert"], ("lm_head.dense", "lm_head.layer_norm")),
    "distilbert": ("vocab_transform", "vocab_layer_norm"),
    **dict.fromkeys(["xlm", "flaubert"], ()),
}


class MaskedScorer(Scorer):
    kind = MASKED

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.tokenizer.mask_token_id is None:
            raise QueerbiasError(f"{self.lm.spec} has no mask token; is it a masked LM?")

    def _split_model(self):
        # BERT's head is `cls`, RoBERTa's `lm_head`; XLM's is its output projection alone
        head = getattr(self.model, "cls", None) or getattr(self.model, "lm_head", None) \
            or self.model.get_output_embeddings()
        if head is None or self.model.base_model is self.model:
            return None
        return self.model.base_model, head

    def _mask_positions(self, encoding: Encoding, position: int) -> list[int]:
        """The position itself, plus the rest of its word under `within_word_l2r`."""
        if self.config.pll == "original":
            return [position]
        word = encoding.word_ids[position]
        if word is None:
            return [position]
        return [position] + [q for q in range(position + 1, len(encoding.ids))
                             if encoding.word_ids[q] == word]

    def _forward(self, requests: list[Request]) -> torch.Tensor:
        """Log-probability of each request's true token with its position masked."""
        return picked(self.distribution_tensor(requests), [ids[position] for ids, position in requests])

    def distribution_tensor(self, requests: list[Request]) -> torch.Tensor:
        """Log-softmax over the vocabulary at each request's position with that position masked,
        one row per request; keeps the autograd graph unless called under inference mode."""
        mask_id = self.tokenizer.mask_token_id
        pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        rows = []
        for ids, position in requests:
            masked = list(ids)
            for q in self._mask_positions(self._by_ids[ids], position):
                masked[q] = mask_id
            rows.append(masked)
        device = self.lm.device
        input_ids, attention = pad_right(rows, pad_id, device)
        where = torch.tensor([position for _, position in requests], device=device)
        return self._logits_at(input_ids, attention, torch.arange(len(requests), device=device), where)

    def _compute_logprobs(self, requests: list[Request]) -> dict[Request, float]:
        results: dict[Request, float] = {}

        def step(batch: list[int]) -> None:
            with torch.inference_mode():
                values = self._forward([requests[i] for i in batch]).tolist()
            for index, value in zip(batch, values):
                results[requests[index]] = value

        self.batch_size.run([len(ids) for ids, _ in requests], step)
        return results


class MaskedFamily(Family):
    name = MASKED
    left_to_right = False
    architecture_suffixes = ("ForMaskedLM",)
    pipeline_tag = "fill-mask"
    scorer = MaskedScorer
    auto_class = AutoModelForMaskedLM
    model_types = MODEL_FOR_MASKED_LM_MAPPING_NAMES

    def encode(self, tokenizer, config, text, max_length):
        """With [CLS]/[SEP], as `tokenizer.encode` in the reference (a cut keeps [SEP]); every non-special
        position carries a score."""
        encoded = tokenizer(text, truncation=max_length is not None, max_length=max_length)
        ids = tuple(encoded["input_ids"])
        special = tokenizer.get_special_tokens_mask(list(ids), already_has_special_tokens=True)
        scorable = tuple(i for i, s in enumerate(special) if not s)
        return Encoding(ids, scorable, word_ids(tokenizer, encoded, ids))

    def shared_scored(self, template):
        """All but the first and last aligned positions: the [CLS]/[SEP] ends."""
        return list(template[1:-1])

    def score_input(self, ids, position):
        """The whole sentence with that position masked: any difference between two sentences reaches it."""
        return tuple(ids), position

    @torch.inference_mode()
    def reference_logprob(self, lm, ids, words, position, config, lang=None):
        masked = torch.tensor([ids], device=lm.device)
        masked[0, position] = lm.tokenizer.mask_token_id
        if config.pll == "within_word_l2r" and words[position] is not None:
            for q in range(position + 1, len(ids)):
                if words[q] == words[position]:
                    masked[0, q] = lm.tokenizer.mask_token_id
        logits = reference_logits(lm.model, masked, lang)[0, position]
        return torch.log_softmax(logits.float(), dim=0)[ids[position]].item()

    def training_chunks(self, texts, tokenizer, max_length):
        """The model's special tokens around every chunk."""
        prefix, suffix = _special_template(tokenizer)
        room = max_length - len(prefix) - len(suffix)
        chunks = []
        for ids in tokenizer(texts, add_special_tokens=False)["input_ids"]:
            chunks += [prefix + ids[i:i + room] + suffix for i in range(0, len(ids), room)]
        return chunks

    def training_examples(self, chunks, packing, max_length):
        return chunks, False

    def collator(self, tokenizer, packing, mlm_probability, shift_labels):
        return DataCollatorForLanguageModeling(tokenizer, mlm=True, mlm_probability=mlm_probability)

    def perplexity_targets(self, ids, mask, tokenizer, mlm_probability, generator):
        """A seeded share of the non-special tokens masked, the same in every evaluation; only they count."""
        special = torch.tensor([tokenizer.get_special_tokens_mask(row, already_has_special_tokens=True)
                                for row in ids.tolist()], dtype=torch.bool)
        chosen = (torch.rand(ids.shape, generator=generator) < mlm_probability) & ~special & (mask == 1)
        return ids.masked_fill(chosen, tokenizer.mask_token_id), ids.masked_fill(~chosen, -100)

    def lora_modules_to_save(self, model_type):
        """The head's transform (dense + LayerNorm): the decoder is tied to the input embeddings, so it is never
        adapted, and the MLM objective needs a head that can move with the encoder (XLM's head has no
        transform: its LoRA adapts the encoder)."""
        if model_type not in MLM_HEAD_MODULES:
            log.warning("no known masked-LM head transform for %s; only the encoder is adapted "
                        "(set lora.modules_to_save to train the head)", model_type)
        return list(MLM_HEAD_MODULES.get(model_type, ())) or None


def _special_template(tokenizer) -> tuple[list[int], list[int]]:
    """The special tokens the tokenizer puts before and after one sequence ([CLS] / [SEP])."""
    plain = tokenizer("a", add_special_tokens=False)["input_ids"]
    full = tokenizer("a")["input_ids"]
    start = next(i for i in range(len(full)) if full[i:i + len(plain)] == plain)
    return full[:start], full[start + len(plain):]
