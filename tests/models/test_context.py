"""How many tokens a model takes (`models.context`): RoBERTa-style embeddings number positions from
their padding index, so XLM-RoBERTa takes max_position_embeddings - padding_idx - 1 tokens (issue 46)."""

from __future__ import annotations

import pytest
import torch

from queerbias.models import load_model
from queerbias.models.context import context_limit
from queerbias.models.loading import inspect_model


def test_xlm_roberta_takes_its_positions_below_the_padding_index(tiny_family):
    folder = tiny_family("xlm-roberta")  # max_position_embeddings 130, padding index 1
    lm = load_model(str(folder))
    found = context_limit(lm.model, lm.tokenizer)
    assert found.tokens == 128 and "padding index 1" in found.source
    assert context_limit(inspect_model(str(folder))).tokens == 128  # before the weights load, the same number
    ids = torch.full((1, 128), 5)
    with torch.no_grad():
        assert lm.model(input_ids=ids).logits.shape[1] == 128
        with pytest.raises((IndexError, RuntimeError), match="index 130 is out of bounds"):  # past the table
            lm.model(input_ids=torch.full((1, 129), 5))


@pytest.mark.parametrize("family", ["bert", "gpt2", "opt", "xlm"])
def test_other_families_take_their_whole_position_table(tiny_family, family):
    lm = load_model(str(tiny_family(family)), kind="causal" if family == "xlm" else None)
    assert context_limit(lm.model).tokens == 128  # every tiny model's table has 128 rows
    with torch.no_grad():
        lm.model(input_ids=torch.full((1, 128), 5))
