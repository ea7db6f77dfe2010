"""Evaluation through prefix trees (`scoring.causal`): sentences that share their beginning are
computed once per beginning, and every log-probability is the padded pass's; trees are cut at the
node budget or at a fixed batch size, and a model that does not take the tree keeps the padded pass."""

from __future__ import annotations

import pytest

from queerbias.models import load_model
from queerbias.scoring.config import ScoringConfig
from queerbias.scoring.scorer import make_scorer

TEXTS = ["Die meisten schwulen Männer sind laut.", "Die meisten heterosexuellen Männer sind laut.",
         "Die meisten schwulen Männer sind leise.", "Viele trans Frauen lesen gern.",
         "Viele cis Frauen lesen gern.", "Lukas ist schwul."]


def requests(scorer):
    encodings = [scorer.encode(text) for text in TEXTS]
    return [(e.ids, p) for e in encodings for p in e.scorable]


@pytest.mark.parametrize("family", ["tiny_gpt2", "tiny_llama", "tiny_gemma"])
@pytest.mark.parametrize("batch_size", ["auto", 2])
def test_the_tree_gives_the_padded_pass_log_probabilities(family, batch_size, request):
    lm = load_model(str(request.getfixturevalue(family)))
    tree, padded = (make_scorer(lm, ScoringConfig(), batch_size=batch_size) for _ in range(2))
    padded._tree = False
    wanted = requests(tree)
    assert requests(padded) == wanted
    by_tree, by_padding = tree.token_logprobs(wanted), padded.token_logprobs(wanted)
    assert tree._tree is True
    for key in wanted:
        assert by_tree[key] == pytest.approx(by_padding[key], abs=1e-5)


def test_trees_are_cut_at_the_node_budget_with_shared_beginnings_together(tiny_llama):
    scorer = make_scorer(load_model(str(tiny_llama)), ScoringConfig())
    wanted = [(ids, {1}) for ids in dict.fromkeys(ids for ids, _ in requests(scorer))]
    scorer._tree_nodes = 20
    batches = [[wanted[i] for i in batch] for batch in scorer._tree_batches(wanted, list(range(len(wanted))))]
    assert sorted(ids for batch in batches for ids, _ in batch) == sorted(ids for ids, _ in wanted)
    for batch in batches:
        nodes = {ids[:end] for ids, _ in batch for end in range(1, len(ids) + 1)}
        assert len(nodes) <= 20 or len(batch) == 1
    flat = [ids for batch in batches for ids, _ in batch]
    assert flat == sorted(flat)  # token order: a frame's sentences side by side


def test_each_distinct_beginning_goes_through_the_head_once(tiny_llama, monkeypatch):
    scorer = make_scorer(load_model(str(tiny_llama)), ScoringConfig())
    assert scorer._tree_serves([])  # the once-per-scorer check, before counting
    body, head = scorer._project
    rows = []
    monkeypatch.setattr(scorer, "_project", (body, lambda hidden: rows.append(len(hidden)) or head(hidden)))
    wanted = requests(scorer)
    scorer.token_logprobs(wanted)
    distinct = {ids[:p] for ids, p in wanted}
    assert sum(rows) == len(distinct) < len(wanted)


def test_a_model_without_4d_masks_keeps_the_padded_pass_in_evaluation(tiny_llama, monkeypatch):
    lm = load_model(str(tiny_llama))
    scorer, reference = make_scorer(lm, ScoringConfig()), make_scorer(lm, ScoringConfig())
    reference._tree = False

    def refuses(*args, **kwargs):
        raise TypeError("forward() got an unexpected keyword argument 'position_ids'")

    monkeypatch.setattr(scorer, "_tree_distributions", refuses)
    wanted = requests(scorer)
    assert requests(reference) == wanted
    assert scorer.token_logprobs(wanted) == pytest.approx(reference.token_logprobs(wanted))
    assert scorer._tree is False


def test_a_model_is_probed_once_however_many_scorers_read_it(tiny_llama, monkeypatch):
    """A training run builds a scorer per benchmark and evaluation; the head split and the tree are
    checked on the first and remembered for the model object (a new object is probed again)."""
    from queerbias.scoring.causal import CausalScorer

    calls = []
    for name in ("_head_splits", "_tree_matches_padded"):
        original = getattr(CausalScorer, name)
        monkeypatch.setattr(CausalScorer, name, lambda self, o=original, n=name: calls.append(n) or o(self))
    lm = load_model(str(tiny_llama))
    for _ in range(3):
        scorer = make_scorer(lm, ScoringConfig())
        scorer.token_logprobs(requests(scorer))
        assert scorer._project is not None and scorer._tree is True
    assert sorted(calls) == ["_head_splits", "_tree_matches_padded"]
    make_scorer(load_model(str(tiny_llama)), ScoringConfig())
    assert calls.count("_head_splits") == 2


def test_an_out_of_memory_tree_is_cut_smaller_by_the_shared_batch_back_off(tiny_llama, monkeypatch):
    """The tree path re-plans through `BatchSize.run`: after an OOM the token budget halves, so do the
    trees, and every log-probability is still the padded pass's."""
    import torch

    lm = load_model(str(tiny_llama))
    scorer, reference = make_scorer(lm, ScoringConfig()), make_scorer(lm, ScoringConfig())
    reference._tree = False
    wanted = requests(scorer)
    assert requests(reference) == wanted
    original, sizes = scorer._tree_logprobs, []

    def tight(batch):
        sizes.append(len(batch))
        if len(batch) > 2:
            raise torch.OutOfMemoryError("tree too large")
        return original(batch)

    monkeypatch.setattr(scorer, "_tree_logprobs", tight)
    scorer.batch_size.token_budget = 200  # trees of at most 100 nodes: several sentences each
    assert scorer.token_logprobs(wanted) == pytest.approx(reference.token_logprobs(wanted), abs=1e-5)
    assert sizes[0] > 2 and scorer.batch_size.token_budget < 200  # refused, halved, re-planned
