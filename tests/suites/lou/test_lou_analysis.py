"""Lou Sec. 5 iv, Sec. 6 ii (Table 3) and App. A.5 (Table 6): readability, property changes, added tokens,
the ΔF1-flip correlation and the attention of the prediction token, by hand and on a tiny classifier."""

import json

import numpy as np
import pytest
from scipy import stats

from queerbias.cli import main
from queerbias.suites.lou.analysis import (
    added_tokens,
    f1_flip_correlation,
    flip_bins,
    flip_properties,
    normalise,
    performance_cells,
    performance_relation,
    property_changes,
    property_pairs,
)
from queerbias.suites.lou.classifier import load_classifier, prediction_attention, shared_attention
from queerbias.suites.lou.data import load_task, lou_spec
from queerbias.suites.lou.lm_view import summarise as lm_summarise
from queerbias.suites.lou.readability import flesch_amstad, sentence_count, syllables, words


def test_german_flesch_by_hand():
    # 3 words of one syllable in one sentence: 180 - 3 - 58.5
    assert flesch_amstad("Das ist gut.") == pytest.approx(118.5)
    # Die(1) Politikerinnen(o-i-i-e-i-e: 6) lachen(2) | Sie(1) gehen(2): ASL 5/2, ASW 12/5
    assert flesch_amstad("Die Politiker*innen lachen. Sie gehen.") == pytest.approx(180 - 2.5 - 58.5 * 12 / 5)
    assert words("Politiker:innen und Politiker_innen, 3 Leute") == ["Politikerinnen", "und", "Politikerinnen",
                                                                     "Leute"]
    # syllables as German hyphenation and pronunciation have them, hiatus too (issue 31): vowel groups
    # counted Si-tua-tion 3, Me-dien 2, Fa-mi-lien 3, Eier 1, Be-bauung 2
    counted = {"Haus": 1, "See": 1, "Schritt": 1, "Liebe": 2, "Frauen": 2, "Eier": 2, "Bebauung": 3, "Situation": 5,
               "Medien": 3, "Familien": 4, "Idee": 2, "Theater": 3, "Museum": 3, "Nation": 3, "Ozean": 3,
               "Trauer": 2, "Feuer": 2, "Politikerinnen": 6}
    assert {word: syllables(word) for word in counted} == counted
    assert syllables("Familie") == 3  # the error docs/lou.md states: word-final -ie of a Latin loan (Fa-mi-li-e)
    # one sentence of 4 words, 11 syllables (die 1, Medien 3, Situation 5, Eier 2): 180 - 4 - 58.5 * 11 / 4
    assert flesch_amstad("Die Medien Situation Eier.") == pytest.approx(180 - 4 - 58.5 * 11 / 4)
    assert sentence_count("Kein Punkt") == 1 and sentence_count("Eins. Zwei! Drei") == 3
    assert flesch_amstad("... 42") is None


def test_syllables_of_qu_and_ou_by_hand():
    """Sec. 6 ii's Flesch score needs syllables (issue 50): the u of "qu" is part of the consonant, "ou" of
    loans one vowel; by hand Die(1) Quelle(2) der(1) Tour(1) | Qualität(3) Journalisten(4)."""
    counted = {"Quelle": 2, "bequem": 2, "Qualität": 3, "Tour": 1, "Journalisten": 4, "Route": 2, "Couch": 1}
    assert {word: syllables(word) for word in counted} == counted
    assert flesch_amstad("Die Quelle der Tour. Qualität Journalisten.") == pytest.approx(180 - 3 - 58.5 * 12 / 6)
    # the remaining errors docs/lou.md states: hiatus in a part kept whole, silent final e of loans
    assert (syllables("Zoologie"), syllables("online"), syllables("Boutique")) == (3, 3, 3)


def row(index, strategy, *, pred, label=1, prob=0.9, flesch=50.0, words_=10, identical=False, attention=None,
        tokens=10):
    att = dict(zip(("attention_max_original", "attention_sd_original", "attention_max", "attention_sd"),
                   attention or (None,) * 4, strict=True))
    return {"task": "t", "index": index, "label": label, "strategy": strategy, "identical": identical,
            "pred": pred, "prob_max": prob, "flipped": None, "words": words_, "flesch": flesch, "tokens": tokens,
            **att}


def test_property_changes_by_hand():
    rows = [
        row(0, "original", pred=1, prob=0.9, flesch=60.0, words_=10),
        row(1, "original", pred=0, prob=0.8, flesch=40.0, words_=20),
        row(0, "GenderStern", pred=0, prob=0.6, flesch=50.0, words_=12, attention=(0.5, 0.1, 0.6, 0.2)),
        row(1, "GenderStern", pred=0, prob=0.7, flesch=40.0, words_=20, attention=(0.4, 0.1, 0.4, 0.1)),
        row(0, "Neutral", pred=1, prob=0.9, flesch=60.0, words_=10, identical=True),
    ]
    for r in rows:
        r["flipped"] = r["strategy"] != "original" and r["pred"] != (1 if r["index"] == 0 else 0)
    pairs = property_pairs(rows, "t", length="words")
    assert len(pairs) == 2  # the identical Neutral text is left out
    # Flesch over all five texts: min 40, max 60 -> instance 0: 100 -> 50, instance 1: 0 -> 0
    assert pairs[0]["flesch"] == (100.0, 50.0) and pairs[1]["flesch"] == (0.0, 0.0)
    # words: min 10, max 20 -> instance 0: 0 -> 20
    assert pairs[0]["length"] == (0.0, 20.0)
    assert pairs[0]["flip"] and not pairs[1]["flip"] and not pairs[0]["correct"] and not pairs[1]["correct"]
    changes = property_changes(pairs)
    assert changes["overall"]["flesch"]["change"] == pytest.approx(-25.0)
    assert changes["overall"]["certainty"]["change"] == pytest.approx(((60 - 90) + (70 - 80)) / 2)
    assert changes["flip_yes"]["attention_max"] == pytest.approx({"n": 1, "change": 10.0, "p": 1.0})
    assert changes["flip_no"]["attention_sd"]["change"] == pytest.approx(0.0)
    assert changes["correct_yes"]["certainty"] is None  # no reformulation predicted correctly
    after, before = np.array([60.0, 70.0]), np.array([90.0, 80.0])
    assert changes["overall"]["certainty"]["p"] == pytest.approx(stats.wilcoxon(after, before).pvalue)
    assert normalise([1.0, 1.0, None]) == [None, None, None]


def test_flip_properties_and_bins_by_hand():
    """Table 4 and Fig. 7 recomputed from item rows, length in the classifier's tokens (the option)."""
    originals = [row(i, "original", pred=1, prob=p, flesch=f, tokens=t)
                 for i, (p, f, t) in enumerate([(0.9, 60.0, 10), (0.7, 40.0, 30), (0.95, 50.0, 20), (0.6, 30.0, 40)])]
    reformulated = [row(i, "GenderStern", pred=pred, prob=0.8, flesch=f - 5, tokens=t + 3)
                    for i, (pred, f, t) in enumerate([(1, 60.0, 10), (0, 40.0, 30), (1, 50.0, 20), (0, 30.0, 40)])]
    rows = originals + reformulated
    for r in rows:
        r["flipped"] = r["strategy"] != "original" and r["pred"] != 1
    pairs = property_pairs(rows, "t", length="tokens")
    # tokens over all eight texts: min 10, max 43; Flesch: min 25, max 60
    assert [p["length"][0] for p in pairs] == pytest.approx([100 * (t - 10) / 33 for t in (10, 30, 20, 40)])
    table4 = flip_properties(pairs)
    flipped, kept = [100 * (t - 10) / 33 for t in (30, 40)], [100 * (t - 10) / 33 for t in (10, 20)]
    assert table4["length"]["yes"] == pytest.approx({"n": 2, "mean": np.mean(flipped), "sd": np.std(flipped, ddof=1)})
    assert table4["certainty"]["no"]["mean"] == pytest.approx(92.5) and table4["certainty"]["yes"]["mean"] == 65.0
    assert table4["certainty"]["p"] == pytest.approx(stats.mannwhitneyu([70.0, 60.0], [90.0, 95.0]).pvalue)
    assert np.mean(kept) < np.mean(flipped)
    bins = flip_bins(pairs)["certainty"]  # originals at 90, 70, 95, 60: flips at 70 and 60
    assert [(b["low"], b["n"], b["flip_share"]) for b in bins] == [(0.0, 0, None), (20.0, 0, None), (40.0, 0, None),
                                                                    (60.0, 2, 100.0), (80.0, 2, 0.0)]


def test_fig5_relates_the_changes_to_the_original_f1():
    """Sec. 5 iv, Fig. 5 (issue 50): ΔF1 and the flip rate against the model's F1 on the original texts
    ("relations to the absolute performance", "task difficulty"). The F1 on the reformulations is ΔF1
    plus the task's original F1, so against it ΔF1 had ρ = 1 by construction; within one task of one
    model the original F1 is one value and ρ is undefined, across tasks it is Spearman's ρ by hand."""
    one = {"t": {"original": {"macro_f1": 70.0}, "A": {"macro_f1": 60.0, "delta_f1": -10.0, "flip_rate": 8.0},
                 "B": {"macro_f1": 65.0, "delta_f1": -5.0, "flip_rate": 6.0},
                 "C": {"macro_f1": 72.0, "delta_f1": 2.0, "flip_rate": 1.0}}}
    within = performance_relation(performance_cells(one))
    assert [(c["strategy"], c["original_f1"]) for c in within["cells"]] == [("A", 70.0), ("B", 70.0), ("C", 70.0)]
    assert within["delta_f1"]["rho"] is None and within["flip_rate"]["rho"] is None
    assert within["spread"] == {"tasks": 1, "models": 1, "original_f1_values": 1}
    two = {**one, "u": {"original": {"macro_f1": 50.0}, "A": {"macro_f1": 45.0, "delta_f1": -5.0, "flip_rate": 9.0},
                        "B": {"macro_f1": 49.0, "delta_f1": -1.0, "flip_rate": 7.0},
                        "C": {"macro_f1": 55.0, "delta_f1": 5.0, "flip_rate": 3.0}}}
    across = performance_relation(performance_cells(two))
    f1 = [c["original_f1"] for c in across["cells"]]
    assert f1 == [70.0] * 3 + [50.0] * 3
    delta, flips = [c["delta_f1"] for c in across["cells"]], [c["flip_rate"] for c in across["cells"]]
    assert across["delta_f1"]["rho"] == pytest.approx(stats.spearmanr(f1, delta).statistic)
    assert across["flip_rate"]["rho"] == pytest.approx(stats.spearmanr(f1, flips).statistic)


def test_added_tokens_and_correlation_by_hand():
    added = added_tokens([("a", "S", 2), ("a", "S", 4), ("b", "S", 6), ("a", "N", 1), ("b", "N", 1)],
                         ["a", "b"], ["S", "N"])
    assert added["by_task"] == {"a": {"S": 3.0, "N": 1.0}, "b": {"S": 6.0, "N": 1.0}}
    assert added["by_strategy"] == {"S": 4.5, "N": 1.0} and added["average"] == 2.75
    # ΔF1 ranks 1,2,3,4 against flip ranks 2,1,3,4: d² = 2 -> rho = 1 - 6·2 / (4·15)
    found = f1_flip_correlation([(-2.0, 3.0), (-1.0, 1.0), (0.5, 4.0), (3.0, 9.0)])
    assert found["rho"] == pytest.approx(0.8) and found["n"] == 4


def test_lm_view_reports_added_tokens():
    rows = [{"task": "t", "index": i, "strategy": s, "pair_key": f"{i}{s}", "identical": False, "too_long": False,
             "tokens_original": 10, "tokens_reformulated": 10 + extra, "delta": 0.1, "delta_sum": -1.0}
            for i, (s, extra) in enumerate([("GenderStern", 3), ("GenderStern", 5), ("De-e", 1)])]
    summary = lm_summarise(rows, ["t"], ["GenderStern", "De-e"], n_resamples=50)
    assert summary["added_tokens"]["by_strategy"] == {"GenderStern": 4.0, "De-e": 1.0}


def test_shared_attention_keeps_the_unchanged_tokens():
    original = ([5, 6, 7, 8], np.array([0.1, 0.4, 0.2, 0.3]))
    reformulated = ([5, 6, 9, 9, 8], np.array([0.1, 0.2, 0.3, 0.1, 0.3]))  # 7 replaced by 9 9
    found = shared_attention(original, reformulated)
    assert found["attention_max_original"] == pytest.approx(0.4) and found["attention_max"] == pytest.approx(0.3)
    assert found["attention_sd_original"] == pytest.approx(np.std([0.1, 0.4, 0.3]))
    assert found["attention_sd"] == pytest.approx(np.std([0.1, 0.2, 0.3]))
    assert shared_attention(([1], np.array([1.0])), ([2], np.array([1.0]))) is None


def test_prediction_attention_on_a_tiny_classifier(tiny_classifier, monkeypatch):
    clf = load_classifier(str(tiny_classifier))
    implementation = clf.model.config._attn_implementation
    inputs = [("die ärzte helfen.", None), ("die ärzt*innen helfen gern.", None)]
    found = prediction_attention(clf, inputs, batch_size=1)
    assert clf.model.config._attn_implementation == implementation  # switched back after the eager pass
    structural = {clf.tokenizer.cls_token_id, clf.tokenizer.sep_token_id}
    for (text, _), (ids, weights) in zip(inputs, found, strict=True):
        assert ids == [i for i in clf.tokenizer(text)["input_ids"] if i not in structural]
        assert len(weights) == len(ids) and (weights >= 0).all() and weights.sum() < 1  # [CLS], [SEP] left out
    batched = prediction_attention(clf, inputs, batch_size=2)  # padding does not change the weights
    assert all(np.allclose(a[1], b[1], atol=1e-5) for a, b in zip(found, batched, strict=True))
    from queerbias.suites.lou import classifier

    monkeypatch.setattr(classifier, "ATTENTION_BUDGET", 1)  # a memory budget below one input: one at a time
    alone = prediction_attention(clf, inputs, batch_size=2)
    assert all(a[0] == b[0] and np.allclose(a[1], b[1], atol=1e-5) for a, b in zip(found, alone, strict=True))


def test_attention_rows_keep_unknown_tokens(tiny_classifier):
    """[UNK] stands for input text (Sec. 6 ii characterises attention over the input's tokens): an emoji or
    an out-of-vocabulary word keeps its attention cell, keyed by the text it covers, and an input of
    unknown tokens only still has them; only the structural tokens ([CLS], [SEP], padding) are left out."""
    clf = load_classifier(str(tiny_classifier))
    unk = clf.tokenizer.unk_token_id
    inputs = [("🏳️‍🌈 ✨", None), ("die 🏳️‍🌈 helfen", None)]
    encoded = [clf.tokenizer(text)["input_ids"] for text, _ in inputs]
    assert encoded[0][1:-1] and set(encoded[0][1:-1]) == {unk}  # all unknown between [CLS] and [SEP]
    for tokens, (keys, weights) in zip(encoded, prediction_attention(clf, inputs), strict=True):
        assert len(keys) == len(tokens) - 2 and len(weights) == len(keys) and weights.sum() < 1
        assert [k for k, t in zip(keys, tokens[1:-1], strict=True) if t == unk] and "🏳️‍🌈" in keys
        assert all(k == t for k, t in zip(keys, tokens[1:-1], strict=True) if t != unk)


def test_an_unknown_token_of_the_reformulation_is_not_the_originals(tiny_classifier):
    """Sec. 6 ii (issue 50): attention max and SD over the tokens the reformulation did not touch. The
    reformulated word is unknown to the tokenizer like the original's; both are [UNK], but they stand for
    different words, so only the tokens around them are shared. Recomputed by hand from the rows."""
    clf = load_classifier(str(tiny_classifier))
    unk = clf.tokenizer.unk_token_id
    original, reformulated = ("die ✨ helfen", None), ("die 🏳️‍🌈 helfen", None)
    assert [t for t in clf.tokenizer(original[0])["input_ids"] if t == unk] == [unk]
    assert [t for t in clf.tokenizer(reformulated[0])["input_ids"] if t == unk] == [unk]
    (keys_o, att_o), (keys_r, att_r) = prediction_attention(clf, [original, reformulated])
    # by hand: the text's tokens between [CLS] and [SEP] but the unknown one, which the reformulation replaced
    unchanged_o, unchanged_r = ([k for k, t in enumerate(clf.tokenizer(text)["input_ids"][1:-1]) if t != unk]
                                for text, _ in (original, reformulated))
    assert len(unchanged_o) == len(keys_o) - 1 and len(unchanged_r) == len(keys_r) - 1
    found = shared_attention((keys_o, att_o), (keys_r, att_r))
    assert found["attention_max_original"] == pytest.approx(att_o[unchanged_o].max())
    assert found["attention_sd_original"] == pytest.approx(att_o[unchanged_o].std())
    assert found["attention_max"] == pytest.approx(att_r[unchanged_r].max())
    assert found["attention_sd"] == pytest.approx(att_r[unchanged_r].std())


@pytest.fixture
def two_final_classifiers(tiny_bert, tmp_path):
    """Two different tiny classifiers saved as .../x/final and .../y/final (the same folder basename)."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    paths = []
    for seed, name in ((1, "x"), (2, "y")):
        path = tmp_path / "runs" / name / "final"
        config = BertConfig.from_pretrained(tiny_bert, num_labels=2, architectures=["BertForSequenceClassification"])
        torch.manual_seed(seed)
        BertForSequenceClassification(config).save_pretrained(path)
        AutoTokenizer.from_pretrained(tiny_bert).save_pretrained(path)
        paths.append(str(path))
    return paths


def test_consistency_keys_classifiers_by_their_path(two_final_classifiers, lou_dir, tmp_path):
    out = tmp_path / "clf"
    args = [arg for path in two_final_classifiers for arg in ("--model", path)]
    assert main(["lou", "classify", *args, "--data", str(lou_dir), "--task", "germeval-toxic", "--out", str(out),
                 "--no-progress"]) == 0
    document = json.loads((out / "consistency.json").read_text())
    assert document["models"] == two_final_classifiers  # not both "final"
    pair = document["tasks"]["germeval-toxic"]["strategy_rankings"]
    assert [(p["a"], p["b"]) for p in pair] == [tuple(two_final_classifiers)]
    assert document["f1_flip_correlation"]["n"] == 2 * 6
    summaries = [json.loads((out / f"{i:02d}-final" / "summary.json").read_text()) for i in range(2)]
    assert summaries[0]["meta"]["model"]["fingerprint"] != summaries[1]["meta"]["model"]["fingerprint"]
    assert "Sec. 5 iv" in (out / "consistency.md").read_text()


def test_the_same_spec_twice_gets_two_labels():
    from queerbias.commands.lou import model_labels

    assert model_labels(["a/final", "b/final"]) == ["a/final", "b/final"]
    assert model_labels(["m", "n", "m"]) == ["m (#1)", "n", "m (#3)"]


def test_shared_lou_added_tokens(shared_data, tiny_classifier):
    """App. A.5 on the real X-Stance reformulations: Doppelnennung adds the most tokens, De-e the least
    (Table 6: 6.6 and 1.6 on average), here in the tiny BERT's tokenizer."""
    folder = shared_data / "lou"
    if not (folder / "lou" / "x-stance-de.jsonl").is_file():
        pytest.skip("no Lou copy in the shared data")
    tokenizer = load_classifier(str(tiny_classifier)).tokenizer
    strategies = lou_spec().strategies
    task = load_task("x-stance-de", folder)

    def count(text):
        return len(tokenizer(text, add_special_tokens=False)["input_ids"])

    pairs = [("x-stance-de", s, count(i.text(s)) - count(i.original)) for i in task.instances for s in strategies]
    by_strategy = added_tokens(pairs, ["x-stance-de"], strategies)["by_strategy"]
    assert max(by_strategy, key=by_strategy.get) == "Doppelnennung"
    assert min(by_strategy, key=by_strategy.get) == "De-e"
    assert all(flesch_amstad(i.original) is not None for i in task.instances)


def test_cluster_scores_match_scikit_learn_and_kmeans_finds_separated_strategies():
    """Sec. 6 i's scores from the contingency table, checked against sklearn.metrics where installed."""
    from queerbias.suites.lou.clusters import kmeans, scores

    rng = np.random.default_rng(3)
    truth, found = rng.integers(0, 4, 60), rng.integers(0, 3, 60)
    metrics = pytest.importorskip("sklearn.metrics")
    expected = {"rand_index": metrics.rand_score(truth, found), "mutual_information": metrics.mutual_info_score(truth, found),
                "completeness": metrics.completeness_score(truth, found),
                "homogeneity": metrics.homogeneity_score(truth, found)}
    assert scores(truth, found) == pytest.approx(expected)
    centres = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]])
    points = np.concatenate([c + rng.normal(0, 0.1, (20, 2)) for c in centres])
    labels = kmeans(points, 3, np.random.default_rng(0))
    assert scores(np.repeat([0, 1, 2], 20), labels) == pytest.approx(
        {"rand_index": 1.0, "mutual_information": np.log(3), "completeness": 1.0, "homogeneity": 1.0})


def test_layer_clusters_of_a_tiny_classifier_recomputed_from_its_items(tiny_classifier, lou_dir, tmp_path):
    """With `layers`, every reformulation row keeps r per layer; the summary's per-layer scores are those of
    KMeans on the rows' r against their strategies."""
    from queerbias.report.paired_stats import cell_rng
    from queerbias.suites.lou.clusters import kmeans, scores

    out = tmp_path / "run"
    assert main(["run", "lou-classifier", "--model", str(tiny_classifier), "--data", str(lou_dir), "--out", str(out),
                 "--tasks", "germeval-toxic", "--sample", "4", "--layers", "--n-resamples", "20",
                 "--no-progress"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    found = summary["analysis"]["layer_clusters"]
    from queerbias.comparison.runs import load_run

    rows = [r for r in load_run(out).rows().to_dict("records") if r["strategy"] != "original" and not r["identical"]]
    vectors = np.asarray([r["reformulation_layers"] for r in rows], dtype=float)
    strategies = sorted({r["strategy"] for r in rows})
    assert (found["n"], found["k"], len(found["layers"])) == (len(rows), len(strategies), vectors.shape[1])
    for layer in (0, vectors.shape[1] - 1):
        labels = kmeans(vectors[:, layer, :], len(strategies), cell_rng(0, "layer clusters", str(layer)))
        assert found["layers"][layer] == pytest.approx({"layer": layer, **scores([r["strategy"] for r in rows], labels)})
    assert "paper Sec. 6 i" in (out / "summary.md").read_text()
