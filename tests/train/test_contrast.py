"""`objective: contrast` (issue 53): the association c trained one-sided, the identity-invariance anchor, the
cell batches, and a real run on a tiny model, each checked by hand or end to end."""

from __future__ import annotations

import json

import pytest
import torch

from queerbias.errors import QueerbiasError
from queerbias.models import load_model
from queerbias.pairs.resolve import load_pairs
from queerbias.pairs.schema import NEUTRAL, STEREOTYPE, Pair
from queerbias.scoring.scorer import make_scorer
from queerbias.suites.pairs.scoring import score_pairs
from queerbias.train.config import config_from_dict
from queerbias.train.objectives.contrast.batches import CellBatches, cells_of, swapped_phrases
from queerbias.train.objectives.contrast.config import ContrastConfig
from queerbias.train.objectives.contrast.loss import (
    association_terms,
    cell_associations,
    contrast_loss,
    identity_anchor,
    predicate_terms,
)
from queerbias.train.objectives.equalise.loss import batch_tensors, training_scorer
from queerbias.train.runner import run_training

from .helpers import TINY_BENCHMARK, small_config

TRAINING = "queerbias-de-contrast:train"


@pytest.fixture(scope="module")
def contrast_pairs():
    return load_pairs(TRAINING).pairs


def test_association_terms_by_hand():
    c = torch.tensor([1.0, -2.0, 3.0])
    groups = ["a", "b", "a"]
    one = ContrastConfig(cell_term=1.0, group_term=0.0)
    assert association_terms(c, groups, one).item() == pytest.approx((1 + 0 + 9) / 3)  # c+ = 1, 0, 3
    grouped = ContrastConfig(cell_term=0.0, group_term=1.0)
    assert association_terms(c, groups, grouped).item() == pytest.approx((2.0 ** 2 + 0.0) / 2)
    # the group's mean before the cut: b's cells average below 0, so its cell above 0 pushes nothing
    leaning = torch.tensor([1.0, -3.0, 0.5])
    assert association_terms(leaning, ["b", "b", "a"], grouped).item() == pytest.approx((0.0 + 0.25) / 2)
    both_sides = ContrastConfig(cell_term=1.0, group_term=0.0, one_sided=False)
    assert association_terms(c, groups, both_sides).item() == pytest.approx((1 + 4 + 9) / 3)


def test_cells_hold_both_kinds_and_batches_are_seeded_and_balanced(contrast_pairs):
    cells, mined = cells_of(contrast_pairs)
    assert not mined and all(c.stereotypes and c.neutral for c in cells)
    assert all({p.predicate_kind for p in c.stereotypes} == {STEREOTYPE} and
               {p.predicate_kind for p in c.neutral} == {NEUTRAL} for c in cells)
    batches = CellBatches(contrast_pairs, cells=4, stereotypes=2, neutral=2, mined=0, seed=7)
    first, again = batches.draw(3, 0, 1), batches.draw(3, 0, 1)
    assert first == again and first != batches.draw(3, 1, 1)
    assert len({cell.group for cell in first.cells}) == 4
    assert all(len(c.stereotypes) == 2 and len(c.neutral) == 2 and {p.frame for p in (*c.stereotypes, *c.neutral)}
               == {c.frame} for c in first.cells)
    # one way of naming the group and its counterfactual per cell: the phrase terms cancel in c
    assert all({swapped_phrases(p) for p in (*c.stereotypes, *c.neutral)} == {c.phrases} for c in first.cells)
    assert swapped_phrases(Pair("x", "Ich finde, Transmenschen lesen.", "Ich finde, Cismenschen lesen.", "t")) == \
        ("Tran", "Ci")  # the characters between the common beginning and end
    groups = [cell.group for step in range(4) for cell in batches.draw(step, 0, 0).cells]  # 16 groups, 4 a draw
    assert sorted(groups) == sorted({cell.group for cell in cells})  # each group once in a cycle
    several = CellBatches(contrast_pairs, cells=2, stereotypes=1, neutral=1, mined=0, seed=7, per_group=3).draw(0, 0, 0)
    assert [cell.group for cell in several.cells] == [several.cells[0].group] * 3 + [several.cells[3].group] * 3
    assert len({cell.frame for cell in several.cells[:3]}) == 3
    with pytest.raises(QueerbiasError, match="needs pairs whose frames hold stereotype and neutral predicates"):
        cells_of(load_pairs("queerbias-de:train").pairs)


def test_c_is_the_stereotypes_d_minus_the_neutral_d_and_the_phrase_term_cancels(tiny_gemma, contrast_pairs):
    lm = load_model(str(tiny_gemma))
    scorer = training_scorer(lm.model, lm.tokenizer, lm.kind)
    batch = CellBatches(contrast_pairs, cells=3, stereotypes=2, neutral=2, mined=0, seed=1).draw(0, 0, 0)
    with torch.no_grad():
        tensors = batch_tensors(scorer, batch.pairs, difference_only=True)
        c = cell_associations(scorer, batch, tensors, ContrastConfig(tokens="all"))
        alone = cell_associations(scorer, batch, tensors, ContrastConfig(tokens="all", reference="none"))
        predicate_c = cell_associations(scorer, batch, tensors, ContrastConfig())
        d = (tensors.more - tensors.less).tolist()
        full = batch_tensors(scorer, batch.pairs)  # every position: the same d
        assert (full.more - full.less).tolist() == pytest.approx(d, abs=1e-4)
        predicate = predicate_terms(scorer, batch.pairs, tensors).tolist()
    for i, cell in enumerate(batch.cells):
        stereotypes, neutral = slice(2 * i, 2 * i + 2), slice(6 + 2 * i, 6 + 2 * i + 2)
        assert c[i].item() == pytest.approx(sum(d[stereotypes]) / 2 - sum(d[neutral]) / 2, abs=1e-5)
        assert alone[i].item() == pytest.approx(sum(d[stereotypes]) / 2, abs=1e-5)
        assert predicate_c[i].item() == pytest.approx(sum(predicate[stereotypes]) / 2 - sum(predicate[neutral]) / 2,
                                                      abs=1e-5)
    # the predicate term is the scorer's own split: d_predicate of score_pairs, before rounding
    split = score_pairs(make_scorer(lm), batch.pairs)
    assert [s.d_predicate for s in split] == pytest.approx(predicate, abs=2e-3)
    assert any(abs(s.d_phrase) > 1e-3 for s in split)  # and it leaves the phrase's own tokens out


def test_the_anchor_is_zero_at_the_base_and_the_loss_reaches_the_adapter(tiny_llama, tmp_path, contrast_pairs):
    config = config_from_dict(small_config(tiny_llama, tmp_path / "run", objective="contrast",
                                           pairs__train=TRAINING, eval__benchmarks=TINY_BENCHMARK))
    from queerbias.train.modeling import attach_adapter

    lm = load_model(str(tiny_llama))
    model = attach_adapter(lm.model, config, lm.kind)
    scorer = training_scorer(model, lm.tokenizer, lm.kind)
    batch = CellBatches(contrast_pairs, cells=2, stereotypes=2, neutral=2, mined=0, seed=3).draw(0, 0, 0)
    tensors = batch_tensors(scorer, batch.pairs, difference_only=True)
    anchor = identity_anchor(scorer, batch.pairs[4:], tensors, model.disable_adapter, 64)
    assert anchor.item() == pytest.approx(0.0, abs=1e-6)  # LoRA starts as the identity: the model is its base
    loss, _ = contrast_loss(scorer, batch, ContrastConfig(one_sided=False, tokens="all"), model.disable_adapter)
    loss.backward()
    grads = [p.grad for name, p in model.named_parameters() if "lora_" in name and p.grad is not None]
    assert grads and any(g.abs().sum() > 0 for g in grads)


def test_a_contrast_run_trains_logs_its_terms_and_is_judged(tiny_gemma, tmp_path):
    """A real run (LoRA on a tiny Gemma 3, queerbias-de-contrast with the corpus's mined pairs in the anchor):
    the terms are logged, the base and the checkpoints are scored, the card names the objective."""
    benchmark = [{"suite": "pairs", "data": "queerbias-de-shapes:validation", "sample": 2, "name": "shapes",
                  "options": {"sample_unit": "frame"}, "guard": 0.0}]
    config = config_from_dict(small_config(tiny_gemma, tmp_path / "run", objective="contrast", pairs__train=TRAINING,
                                           pairs__mine=["corpus"], contrast__cells=2, contrast__mined_per_batch=2,
                                           eval__benchmarks=benchmark, max_steps=2, eval_every=2))
    result = run_training(config)
    state = json.loads((result["run_dir"] / "checkpoint-2" / "trainer_state.json").read_text())
    logged = [entry for entry in state["log_history"] if "loss" in entry]
    assert logged and all({"contrast_loss", "identity_anchor", "corpus_anchor"} <= set(entry) for entry in logged)
    delta = json.loads((result["run_dir"] / "compare" / "shapes" / "delta.json").read_text())
    assert {"association", "shift"} <= set(delta["comparisons"][-1])
    card = (result["final"] / "README.md").read_text()
    assert "association-contrast" in card


def test_the_config_refuses_what_it_cannot_train(tiny_gemma, tmp_path):
    base = small_config(tiny_gemma, tmp_path / "run", objective="contrast", pairs__train=TRAINING,
                        eval__benchmarks=TINY_BENCHMARK)
    with pytest.raises(QueerbiasError, match="config key 'contrast.anchor_term' needs method: lora"):
        config_from_dict({**base, "method": "full", "contrast": {"corpus_anchor_term": 0.0, "lm_term": 1.0}})
    with pytest.raises(QueerbiasError, match="config key 'contrast.cell_term' cell_term and group_term cannot"):
        config_from_dict({**base, "contrast": {"cell_term": 0.0, "group_term": 0.0}})
    assert config_from_dict({**base, "method": "full", "objective": "lm", "pairs": {}}).objective == "lm"
