"""Data pipeline: chunking keeps every token, packed batches equal per-document losses."""

from __future__ import annotations

import json

import pytest
import torch

from queerbias.errors import DataError
from queerbias.families import get_family
from queerbias.models import load_model
from queerbias.scoring.causal import CausalPadCollator, PackedCollator, pack
from queerbias.train.config import DataSettings
from queerbias.train.data import read_texts, resolve_validation


def test_corpus_folder_and_validation(demo_corpus):
    settings = DataSettings(train=str(demo_corpus))
    assert resolve_validation(settings) == str(demo_corpus / "validation.jsonl")
    assert len(read_texts(settings.train, settings, "train", None)) >= 60
    assert len(read_texts(settings.train, settings, "train", 5)) == 5


def test_bad_jsonl_names_row_and_field(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"text": "gut"}) + "\n" + json.dumps({"body": "x"}) + "\n")
    with pytest.raises(DataError, match=r"row 2, field 'text'"):
        read_texts(str(path), DataSettings(train=str(path)), "train", None)


def test_chunks_keep_every_token(tiny_llama, tiny_bert):
    text = "Queere Menschen lesen gern. " * 40
    llama = load_model(str(tiny_llama)).tokenizer
    chunks = get_family("causal").training_chunks([text], llama, 32)
    assert all(len(c) <= 32 for c in chunks)
    full = llama(text)["input_ids"] + [llama.eos_token_id]
    kept = [t for c in chunks for t in c]
    assert full[:len(kept)] == kept and len(full) - len(kept) <= 1  # a 1-token tail has no target
    bert = load_model(str(tiny_bert)).tokenizer
    chunks = get_family("masked").training_chunks([text], bert, 32)
    assert all(len(c) <= 32 and c[0] == bert.cls_token_id and c[-1] == bert.sep_token_id
               for c in chunks)
    inner = [t for c in chunks for t in c[1:-1]]
    assert inner == bert(text, add_special_tokens=False)["input_ids"]


def test_pack_keeps_order_and_limit():
    chunks = [[1] * 5, [2] * 9, [3] * 3, [4] * 10]
    assert pack(chunks, 12) == [[[1] * 5], [[2] * 9, [3] * 3], [[4] * 10]]


@pytest.mark.parametrize("fixture", ["tiny_llama", "tiny_gpt2"])
def test_packed_loss_equals_per_document_loss(fixture, request):
    """A packed, padding-free batch: no document attends to another."""
    lm = load_model(str(request.getfixturevalue(fixture)))
    texts = ["Lukas ist schwul.", "Anna ist lesbisch und klug.", "Queere Menschen lesen gern."]
    chunks = get_family("causal").training_chunks(texts, lm.tokenizer, 64)
    batch = PackedCollator()([{"segments": chunks[:2]}, {"segments": chunks[2:]}])
    assert batch["input_ids"].shape[0] == 1
    with torch.no_grad():
        packed = lm.model(**batch, use_cache=False).loss
        padded = CausalPadCollator(lm.tokenizer.pad_token_id)([{"input_ids": c} for c in chunks])
        reference = lm.model(**padded).loss  # padding excluded by the attention mask and labels
    torch.testing.assert_close(packed, reference, rtol=1e-5, atol=1e-5)


def test_pad_collator_masks_padding_only():
    batch = CausalPadCollator(pad_id=0)([{"input_ids": [5, 0, 7]}, {"input_ids": [9]}])
    assert batch["labels"].tolist() == [[5, 0, 7], [9, -100, -100]]  # a real 0 stays a target
