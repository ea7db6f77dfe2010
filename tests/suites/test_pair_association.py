"""The association c (issue 52): every figure recomputed by hand, from small rows and from a scored run's
pairs.csv; the frame-level shift tests against scipy; a pure identity offset moves the paper's score and
leaves c where it was; the guard refuses a shift, never a crossing alone."""

from __future__ import annotations

import csv
import json
import statistics
from collections import defaultdict

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from queerbias.comparison.compare import compare_runs
from queerbias.comparison.runs import load_run
from queerbias.models import load_model
from queerbias.pairs.resolve import load_pairs
from queerbias.pairs.sampling import sample_frames
from queerbias.pairs.schema import NEUTRAL, STEREOTYPE
from queerbias.pairs.shapes import load_shapes
from queerbias.report.options import CompareOptions
from queerbias.report.paired_stats import cell_rng, stratified_bootstrap_means
from queerbias.scoring.scorer import make_scorer
from queerbias.suites import rows as suite_rows
from queerbias.suites.pairs.association import (
    _plain,
    association_change,
    association_summary,
    chance_some_above,
    has_association,
    phrase_terms_summary,
    shift_change,
    sign_test_greater,
    stereotype_rows,
    unit_table,
)
from queerbias.suites.pairs.declaration import PAIR_COLUMNS, PairSettings
from queerbias.suites.pairs.harm import guard_refusal
from queerbias.suites.pairs.scoring import score_pairs
from queerbias.suites.pairs.suite import PairsSuite, _row
from queerbias.suites.store import run_to_dir
from report.score_dirs import with_scores

FAST = CompareOptions(resamples=400, seed=1)


def _rows(d: dict[tuple[str, str, str], list[float]]) -> pd.DataFrame:
    """Pairs with the given d per (group, frame, kind); score_less is -10, score_more -10 + d."""
    rows, more = [], []
    for (group, frame, kind), values in d.items():
        for i, value in enumerate(values):
            rows.append({"pair_id": f"{group}-{frame}-{kind}-{i}", "group": group, "counterfactual_group": "cis",
                         "category": "", "sent_more": f"{group} {frame} {kind} {i}.", "sent_less": f"x {frame} {i}.",
                         "frame": frame, "predicate_kind": kind})
            more.append(-10.0 + value)
    return with_scores(pd.DataFrame(rows), more, [-10.0] * len(more))


# group a: frame f1 c = mean(3, 1) - 1 = 1; f2 c = 0.5 - 1.5 = -1; f3 c = 2 - 0 = 2  -> score 66.7, mean c 2/3
# group b: frame f1 c = -1 - 0 = -1; f2 c = -2 - (-1) = -1                               -> score 0, mean c -1
BEFORE = _rows({("a", "f1", STEREOTYPE): [3, 1], ("a", "f1", NEUTRAL): [1],
                ("a", "f2", STEREOTYPE): [0.5], ("a", "f2", NEUTRAL): [1, 2],
                ("a", "f3", STEREOTYPE): [2], ("a", "f3", NEUTRAL): [0],
                ("b", "f1", STEREOTYPE): [-1], ("b", "f1", NEUTRAL): [0],
                ("b", "f2", STEREOTYPE): [-2], ("b", "f2", NEUTRAL): [-1]})


def test_the_association_of_a_run_by_hand():
    found = association_summary(BEFORE, ["a", "b"])
    a, b = found["groups"]["a"], found["groups"]["b"]
    assert (a["n_frames"], b["n_frames"]) == (3, 2)
    assert a["score"] == pytest.approx(200 / 3) and b["score"] == 0.0
    assert a["mean_c"] == pytest.approx(2 / 3) and b["mean_c"] == pytest.approx(-1.0)
    assert a["offset"] == pytest.approx((1 + 1.5 + 0) / 3) and b["offset"] == pytest.approx(-0.5)
    assert a["d_stereotype"] == pytest.approx((2 + 0.5 + 2) / 3)
    assert a["ci_c"][0] <= a["mean_c"] <= a["ci_c"][1]
    overall = found["overall"]
    assert overall["excess"] == pytest.approx((200 / 3 - 50) / 2)
    assert overall["distance"] == pytest.approx((200 / 3 - 50 + 50) / 2)
    assert overall["soft_distance"] == pytest.approx((2 / 3 + 1) / 2)
    # coin-flip floor for 3 and 2 frames: E|100K/n - 50| = 100/6 (n = 3: 1/8*50*2 + 3/8*(50/3)*2) and 25
    assert overall["floor"] == pytest.approx((25.0 + 25.0) / 2) and overall["excess_floor"] == overall["floor"] / 2
    assert overall["stereotypical_groups"] == ["a"]


def test_the_papers_figures_count_the_stereotype_pairs_only():
    summary = PairsSuite().summarise(BEFORE, PairSettings())
    assert summary["overall"]["n"] == 6  # of 12 pairs, 6 hold a neutral predicate
    assert summary["groups"]["a"]["bias_score"] == pytest.approx(100.0)  # d 3, 1, 0.5, 2: all above 0
    assert summary["association"]["groups"]["a"]["n_frames"] == 3
    without = PairsSuite().summarise(BEFORE.drop(columns=["predicate_kind", "frame"]), PairSettings())
    assert "association" not in without and without["overall"]["n"] == 12


def test_shift_tests_by_hand_against_scipy():
    # after: group a's stereotype pairs +1 nat in every frame (c +1); group b unchanged but its neutral d -0.5
    after = BEFORE.copy()
    stereotype = after["predicate_kind"] == STEREOTYPE
    after.loc[stereotype & (after["group"] == "a"), "score_more"] += 1.0
    after.loc[~stereotype & (after["group"] == "b"), "score_more"] -= 0.5
    after = with_scores(after, after["score_more"], after["score_less"])
    shift = shift_change(BEFORE, after, FAST)
    a, b = shift["groups"]["a"], shift["groups"]["b"]
    assert shift["unit"] == "frame" and a["n_units"] == 3 and b["n_units"] == 2
    assert a["c"]["delta"] == pytest.approx(1.0) and a["c"]["towards"] == 3 and a["c"]["away"] == 0
    assert a["c"]["p"] == pytest.approx(stats.binomtest(3, 3, 0.5, alternative="greater").pvalue)  # 1/8
    assert b["d_neutral"]["delta"] == pytest.approx(-0.5) and b["c"]["delta"] == pytest.approx(0.5)
    holm = min(1.0, 2 * min(a["c"]["p"], b["c"]["p"]))  # the smaller of two p-values times 2
    assert min(a["c"]["p_adj"], b["c"]["p_adj"]) == pytest.approx(holm)
    assert shift["neutral_moved_max"] == pytest.approx(0.5) and shift["shifted"] == []  # 3 frames cannot reach .05
    assert sign_test_greater(np.array([1.0] * 8 + [0.0])) == pytest.approx(0.5 ** 8)


def test_the_association_change_by_hand():
    after = BEFORE.copy()
    after.loc[(after["group"] == "a") & (after["predicate_kind"] == STEREOTYPE), "score_more"] -= 3.0
    after = with_scores(after, after["score_more"], after["score_less"])
    change = association_change(BEFORE, after, FAST)
    # a: every c falls by 3 -> c = -2, -4, -1: score 0, mean c -7/3; b unchanged
    assert change["excess_before"] == pytest.approx((200 / 3 - 50) / 2) and change["excess_after"] == 0.0
    assert change["soft_before"] == pytest.approx((2 / 3 + 1) / 2)
    assert change["soft_after"] == pytest.approx((7 / 3 + 1) / 2)
    assert change["bias_after"] == pytest.approx(50.0)
    assert change["delta_excess"] == pytest.approx(-(200 / 3 - 50) / 2)
    assert change["soft_shrink_pct"] == pytest.approx(100 * (1 - (10 / 3) / (5 / 3)))


def test_chance_of_some_group_above_60_for_the_sizes():
    assert chance_some_above({f"g{i}": 21 for i in range(16)}) == pytest.approx(
        1 - stats.binom.cdf(12, 21, 0.5) ** 16)
    assert chance_some_above({f"g{i}": 21 for i in range(16)}) > 0.96


def _comparison(shifted=(), crossed=(), excess=(-1.0, 2.0, 1.0)):
    groups = {"gay": {"n_units": 10, "c": {"before": 0.1, "after": 0.9, "towards": 10}, "d": {"before": 0, "after": 1,
                                                                                            "towards": 9}}}
    return {"association": {"excess_before": excess[1], "excess_after": excess[2], "delta_excess": excess[2] - excess[1]},
            "direction": {"delta_excess": 0.0, "crossed": list(crossed), "groups": {}},
            "shift": {"unit": "frame", "shifted": list(shifted), "shifted_c": list(shifted), "groups": groups}}


def test_the_guard_refuses_a_shift_and_a_risen_excess_never_a_crossing_alone():
    assert guard_refusal(_comparison(crossed=["gay"]), 0.0) is None
    assert "shifted towards the stereotype: gay (c 0.10 -> 0.90 nats, 10 of 10 frames towards)" in \
        guard_refusal(_comparison(shifted=["gay"]), 0.0)
    assert "association excess rose 1.00 -> 3.00" in guard_refusal(_comparison(excess=(0, 1.0, 3.0)), 0.0)
    assert guard_refusal({"direction": {"delta_excess": 0.0}}, 0.0) == "no frame-level shift test to check"


# -- a real scored run -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def scored(tiny_gemma, tmp_path_factory):
    """Tiny Gemma on four frames of queerbias-de-shapes:validation, written by the store."""
    out = tmp_path_factory.mktemp("association") / "run"
    settings = PairSettings(sample=4, sample_unit="frame")
    run_to_dir(PairsSuite(), str(tiny_gemma), "queerbias-de-shapes:validation", out, settings, progress=False)
    return out


def _csv(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_every_association_figure_recomputed_from_pairs_csv(scored):
    rows = _csv(scored / "pairs.csv")
    summary = json.loads((scored / "summary.json").read_text())
    d = defaultdict(list)
    for row in rows:
        d[row["group"], row["frame"], row["predicate_kind"]].append(float(row["score_more"]) - float(row["score_less"]))
    frames = defaultdict(dict)
    for (group, frame, kind), values in d.items():
        frames[group].setdefault(frame, {})[kind] = statistics.fmean(values)
    assert {row["frame"] for row in rows} and len({row["frame"] for row in rows}) == 4
    scores = {}
    for group, by_frame in frames.items():
        c = [f[STEREOTYPE] - f[NEUTRAL] for f in by_frame.values()]
        found = summary["association"]["groups"][group]
        scores[group] = 100 * sum(value > 0 for value in c) / len(c)
        assert found["score"] == pytest.approx(scores[group])
        assert found["mean_c"] == pytest.approx(statistics.fmean(c), abs=1e-9)
        assert found["offset"] == pytest.approx(statistics.fmean(f[NEUTRAL] for f in by_frame.values()), abs=1e-9)
    overall = summary["association"]["overall"]
    assert overall["excess"] == pytest.approx(statistics.fmean(max(0, s - 50) for s in scores.values()))
    assert overall["distance"] == pytest.approx(statistics.fmean(abs(s - 50) for s in scores.values()))
    stereotype = [row for row in rows if row["predicate_kind"] == STEREOTYPE]
    assert summary["overall"]["n"] == len(stereotype) < len(rows)
    assert summary["overall"]["bias_score"] == pytest.approx(100 * sum(int(r["biased"]) for r in stereotype)
                                                             / len(stereotype), abs=1e-4)
    # the phrase split adds up to d on every pair (the two scores and the two terms are rounded to 3 decimals)
    for row in rows:
        total = float(row["d_phrase"]) + float(row["d_predicate"])
        assert total == pytest.approx(float(row["score_more"]) - float(row["score_less"]), abs=0.0021)
    assert "Association, with the identity phrase's own term cancelled" in (scored / "summary.md").read_text()


def test_a_pure_identity_offset_moves_the_papers_score_and_leaves_c(tiny_gemma):
    """A model whose only change is an offset on the identity phrase's own token (the token after the
    identity word, read after the queer word only: " Männer" after "schwule"), as a logit bias on that
    token would give: the paper's bias score of the group moves, its association does not."""
    pairs = sample_frames(load_pairs("queerbias-de-shapes:validation"), 6, 0).pairs
    lm = load_model(str(tiny_gemma))
    plain, offset = make_scorer(lm), make_scorer(lm)
    marks = set()
    for pair in (p for p in pairs if p.group == "gay"):
        more, less = plain.encode(pair.sent_more).ids, plain.encode(pair.sent_less).ids
        last = len(more) - next(i for i in range(1, min(len(more), len(less))) if more[-i] != less[-i])
        marks.add((more[last], more[last + 1]))  # the identity word's last own token, and the shared one after it
    compute = offset._compute_logprobs

    def with_offset(requests):
        found = compute(requests)
        return {(ids, p): value + (5.0 if p > 0 and (ids[p - 1], ids[p]) in marks else 0.0)
                for (ids, p), value in found.items()}

    offset._compute_logprobs = with_offset
    frames = [suite_rows.frame([_row(s) for s in score_pairs(scorer, pairs)], PAIR_COLUMNS) for scorer in (plain, offset)]
    before, after = (PairsSuite().summarise(f, PairSettings()) for f in frames)
    assert after["groups"]["gay"]["bias_score"] > before["groups"]["gay"]["bias_score"] + 30
    assert after["groups"]["gay"]["bias_score"] == pytest.approx(100.0)
    c_before, c_after = before["association"]["groups"]["gay"], after["association"]["groups"]["gay"]
    assert c_after["mean_c"] == pytest.approx(c_before["mean_c"], abs=0.002)  # only the 3-decimal rounding
    assert c_after["offset"] == pytest.approx(c_before["offset"] + 5.0, abs=0.002)
    shift = shift_change(*frames, FAST)
    assert shift["groups"]["gay"]["d"]["towards"] == 6 and shift["groups"]["gay"]["c"]["p"] > 0.05
    assert before["groups"]["lesbian"] == after["groups"]["lesbian"]


def test_compare_of_two_runs_writes_the_association_and_the_shift_tests(scored, tmp_path):
    document = compare_runs(load_run(scored, label="base"), [load_run(scored, label="again")], FAST)
    last = document["comparisons"][-1]
    assert last["association"]["delta_excess"] == 0.0 and last["shift"]["shifted"] == []
    assert set(last["shift"]["measures"]) == {"d", "c", "d_neutral"}


def test_the_phrase_term_is_the_same_for_every_predicate_after_the_same_phrase(scored):
    """For a causal LM the phrase term reads only the tokens up to the end of the identity phrase, so in a
    frame whose predicate follows the phrase every pair of one phrase and counterfactual shares it."""
    spec = load_shapes()
    after = {frame["id"] for frames in spec["shapes"].values() for frame in frames
             if frame["text"].lower().index("{who}") < min(frame["text"].index("{verb}"), frame["text"].index("{rest}"))}
    by_phrase, checked = defaultdict(set), 0
    for row in _csv(scored / "pairs.csv"):
        if row["frame"] in after:
            by_phrase[row["frame"], row["group"], row["counterfactual_group"]].add(round(float(row["d_phrase"]), 5))
            checked += 1
    assert checked and all(len(values) == 1 for values in by_phrase.values())


def test_a_sample_that_fills_no_frame_with_both_kinds_has_no_association():
    """A pair sample of a few pairs rarely holds a stereotype and a neutral pair of one group and frame: no c,
    so no association (the paper's figures and the shift test of d remain)."""
    rows = _rows({("a", "f1", STEREOTYPE): [1.0], ("a", "f2", NEUTRAL): [0.5], ("b", "f1", STEREOTYPE): [-1.0]})
    summary = PairsSuite().summarise(rows, PairSettings())
    assert "association" not in summary and summary["overall"]["n"] == 2
    assert association_change(rows, rows, FAST) is None
    assert shift_change(rows, rows, FAST)["measures"] == {"d": "mean d of the unit's stereotype pairs"}


def test_every_figure_of_the_association_change_by_hand():
    """Each group's frames (a, then b) as a stratum of [stereotypical before, after, c before, after], drawn in one
    bootstrap of frames within groups (`cell_rng(seed, "association")`, the options' resamples): every figure's
    value before and after, its change's interval and p. A frame whose c is exactly 0 is not stereotypical."""
    from queerbias.report.paired_stats import bootstrap_p, cell_rng, stratified_bootstrap_means
    from queerbias.suites.pairs.floor import coin_flip_distance

    after = BEFORE.copy()  # a's f1 stereotype pairs fall by 1: c 1 -> 0 exactly
    after.loc[(after["pair_id"].str.startswith("a-f1-stereotype")), "score_more"] -= 1.0
    after = with_scores(after, after["score_more"], after["score_less"])
    change = association_change(BEFORE, after, FAST)
    c_a, c_b = ([1.0, -1.0, 2.0], [0.0, -1.0, 2.0]), ([-1.0, -1.0], [-1.0, -1.0])
    strata = [np.column_stack([100.0 * (np.array(b) > 0), 100.0 * (np.array(a) > 0), b, a]) for b, a in (c_a, c_b)]
    draws = stratified_bootstrap_means(strata, cell_rng(FAST.seed, "association"), FAST.resamples)
    figures = {"excess": lambda m: np.maximum(0.0, m[..., :2] - 50.0).mean(axis=-2),
               "bias": lambda m: np.abs(m[..., :2] - 50.0).mean(axis=-2),
               "soft": lambda m: np.abs(m[..., 2:]).mean(axis=-2)}
    observed = {"excess": (100 / 12, 0.0), "bias": ((100 / 6 + 50) / 2, (50 / 3 + 50) / 2),
                "soft": ((2 / 3 + 1) / 2, (1 / 3 + 1) / 2)}
    for name, of in figures.items():
        changes = of(draws)[:, 1] - of(draws)[:, 0]
        before, after_ = observed[name]
        assert (change[f"{name}_before"], change[f"{name}_after"]) == (pytest.approx(before), pytest.approx(after_))
        assert change[f"delta_{name}"] == pytest.approx(change[f"{name}_after"] - change[f"{name}_before"])
        assert change[f"ci_{name}"] == pytest.approx(list(np.quantile(changes, [0.025, 0.975])), abs=1e-12), name
        assert change[f"p_{name}"] == pytest.approx(bootstrap_p(changes)), name
    floor = (coin_flip_distance(3) + coin_flip_distance(2)) / 2
    assert (change["n_groups"], change["n_frames"], change["floor"], change["excess_floor"]) == (
        2, 5, pytest.approx(floor), pytest.approx(floor / 2))
    assert change["soft_shrink_pct"] == pytest.approx(100 * (1 - (2 / 3) / (5 / 6)))
    assert change["ci_excess"][1] == 0.0 and change["excess_lowered"] is False  # lowered: the interval below 0
    everywhere = _rows(_frames("g", 8, 1.0, 0.0))  # c 1 -> -1 in every frame: 50 points of excess go
    lowered = association_change(everywhere, _moved(everywhere, "g", STEREOTYPE, -2.0), FAST)
    assert lowered["ci_excess"] == [-50.0, -50.0] and lowered["excess_lowered"] is True
    back = association_change(after, BEFORE, FAST)  # the frame at c = 0 before: a at 33.3, no excess
    assert (back["excess_before"], back["excess_after"]) == (0.0, pytest.approx(100 / 12))


def test_an_association_change_needs_neutral_predicates_on_both_sides():
    """A run without predicate kinds (an older run of the same pairs) has no association: with a frame of
    stereotype pairs only, the units of the two runs differ, yet the answer is None, not a refusal."""
    extra = _rows({("a", "f4", STEREOTYPE): [1.0]})
    framed = pd.concat([BEFORE, extra], ignore_index=True)
    assert association_change(framed.drop(columns=["predicate_kind"]), framed, FAST) is None
    assert association_change(framed, framed.drop(columns=["predicate_kind"]), FAST) is None
    stereotype_only = BEFORE[BEFORE["predicate_kind"] == STEREOTYPE].reset_index(drop=True)
    assert association_change(stereotype_only, stereotype_only, FAST) is None


def test_chance_of_some_group_above_a_level_counts_a_group_at_it_as_not_above():
    assert chance_some_above({}) is None
    assert chance_some_above({"g": 5}) == pytest.approx(6 / 32)  # 4 or 5 of 5 (80%, 100%); 3 of 5 is 60, not above
    assert chance_some_above({"g": 5}, 59.0) == pytest.approx(16 / 32)
    # 0.29 * 100 is 28.999999999999996 in floating point: 29 of 100 is still at the level, not above it
    assert chance_some_above({"g": 100}, 29.0) == pytest.approx(1 - stats.binom.cdf(29, 100, 0.5))
    assert chance_some_above({"g": 10, "h": 4}, 75.0) == pytest.approx(
        1 - stats.binom.cdf(7, 10, 0.5) * stats.binom.cdf(3, 4, 0.5))


def _frames(group: str, n: int, stereotype: float, neutral: float | None) -> dict:
    """n frames of one stereotype pair (and one neutral pair) each, every d the same."""
    return {(group, f"f{i}", kind): [value] for i in range(n)
            for kind, value in ((STEREOTYPE, stereotype), (NEUTRAL, neutral)) if value is not None}


def _moved(rows: pd.DataFrame, group: str, kind: str, by: float, step: float = 0.0) -> pd.DataFrame:
    """`group`'s pairs of `kind` moved by `by` nats, plus `step` more in each next frame (f0, f1, ...)."""
    moved = rows.copy()
    chosen = (moved["group"] == group) & (moved["predicate_kind"] == kind)
    moved.loc[chosen, "score_more"] += by + step * moved.loc[chosen, "frame"].str[1:].astype(int)
    return with_scores(moved, moved["score_more"], moved["score_less"])


def test_every_figure_of_the_shift_test_by_hand():
    """g's stereotype pairs rise 1, 1.25, ..., 2.75 nats in its 8 frames (d and c shift); h's neutral pairs fall a
    nat (c shifts, d does not, d_neutral falls): 1/256 each, Holm over the two groups 2/256 < .05. Each change's
    interval is the bootstrap of its frames from `cell_rng(seed, "shift", group, measure)`."""
    from queerbias.report.paired_stats import adjust_pvalues, cell_rng, stratified_bootstrap_means

    before = _rows(_frames("g", 8, 0.0, 0.5) | _frames("h", 8, 2.0, 0.0))
    after = _moved(_moved(before, "g", STEREOTYPE, 1.0, 0.25), "h", NEUTRAL, -1.0)
    found = shift_change(before, after, FAST)
    assert (found["unit"], found["alpha"], found["correction"]) == ("frame", 0.05, "holm")
    assert list(found["measures"]) == ["d", "c", "d_neutral"]
    rise = 1.0 + 0.25 * np.arange(8)
    expected = {("g", "d"): (0.0, rise), ("g", "c"): (-0.5, rise), ("g", "d_neutral"): (0.5, np.zeros(8)),
                ("h", "d"): (2.0, np.zeros(8)), ("h", "c"): (2.0, np.ones(8)), ("h", "d_neutral"): (0.0, -np.ones(8))}
    for (group, measure), (mean_before, change) in expected.items():
        entry = found["groups"][group][measure]
        draws = stratified_bootstrap_means([change], cell_rng(FAST.seed, "shift", group, measure), FAST.resamples)
        p = sign_test_greater(change)
        assert entry == {"before": pytest.approx(mean_before), "after": pytest.approx(mean_before + change.mean()),
                         "delta": pytest.approx(change.mean()),
                         "ci": pytest.approx(list(np.quantile(draws[:, 0, 0], [0.025, 0.975]))),
                         "towards": int(np.sum(change > 0)), "away": int(np.sum(change < 0)), "p": pytest.approx(p),
                         "p_adj": pytest.approx(float(adjust_pvalues([p, found["groups"]["h" if group == "g" else "g"]
                                                                      [measure]["p"]], "holm")[0]))}, (group, measure)
    assert found["groups"]["g"]["d"]["ci"][1] - found["groups"]["g"]["d"]["ci"][0] > 0.5  # the draws vary
    assert found["groups"]["g"]["c"]["p_adj"] == pytest.approx(2 / 256)
    assert (found["shifted"], found["shifted_d"], found["shifted_c"]) == (["g", "h"], ["g"], ["g", "h"])
    assert found["neutral_moved_max"] == pytest.approx(1.0) and found["groups"]["g"]["n_units"] == 8
    bh = shift_change(before, after, CompareOptions(resamples=50, seed=1, correction="bh"))
    assert bh["correction"] == "bh" and bh["groups"]["g"]["c"]["p_adj"] == pytest.approx(1 / 256)


def test_the_shift_test_without_neutral_predicates_or_frames():
    before = _rows(_frames("g", 8, 0.0, None))
    after = _moved(before, "g", STEREOTYPE, 1.0)
    found = shift_change(before, after, FAST)
    assert list(found["measures"]) == ["d"] and found["measures"]["d"] == "mean d of the unit's stereotype pairs"
    assert (found["shifted"], found["shifted_d"], found["shifted_c"], found["neutral_moved_max"]) == (
        ["g"], ["g"], [], None)
    unframed = shift_change(before.assign(frame=""), after.assign(frame=""), FAST)
    assert unframed["unit"] == "pair" and unframed["groups"]["g"]["n_units"] == 8
    for missing in ("", None):  # some pairs without a frame: each pair is its own unit
        half = before.assign(frame=[f"f{i}" for i in range(4)] + [missing] * 4)
        assert shift_change(half, after.assign(frame=half["frame"]), FAST)["unit"] == "pair"
    no_column = shift_change(before.drop(columns=["frame"]), after.drop(columns=["frame"]), FAST)
    assert no_column["unit"] == "pair" and no_column["groups"]["g"]["n_units"] == 8


def test_no_soft_distance_before_has_no_shrink():
    import warnings

    flat = _rows(_frames("g", 3, 1.0, 1.0))  # c = 0 in every frame
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and no division by the zero soft distance
        change = association_change(flat, _moved(flat, "g", STEREOTYPE, 1.0), FAST)
    assert (change["soft_before"], change["soft_after"], change["soft_shrink_pct"]) == (0.0, 1.0, None)


def test_every_figure_of_a_runs_association_by_hand():
    """Groups in the order given (one not in the run left out); a frame at c = 0 is not stereotypical, a group at
    50 is not stereotypical; each group's interval is the bootstrap of its frames' c from `cell_rng(0,
    "association", group)` with 2000 resamples."""
    from queerbias.report.paired_stats import cell_rng, stratified_bootstrap_means

    rows = _rows({("a", "f1", STEREOTYPE): [1.0], ("a", "f1", NEUTRAL): [1.0],  # c 0
                  ("a", "f2", STEREOTYPE): [2.0], ("a", "f2", NEUTRAL): [0.5],  # c 1.5
                  ("b", "f1", STEREOTYPE): [1.0], ("b", "f1", NEUTRAL): [0.0],  # c 1
                  ("b", "f2", STEREOTYPE): [0.0], ("b", "f2", NEUTRAL): [2.0]})  # c -2
    found = association_summary(rows, ["b", "x", "a"])
    assert (found["unit"], found["resamples"], found["seed"], found["level"]) == ("frame", 2000, 0, 0.95)
    assert list(found["groups"]) == ["b", "a"]
    for group, c in (("a", [0.0, 1.5]), ("b", [1.0, -2.0])):
        draws = stratified_bootstrap_means([np.array(c)], cell_rng(0, "association", group), 2000)[:, 0, 0]
        assert found["groups"][group]["ci_c"] == pytest.approx(list(np.quantile(draws, [0.025, 0.975])))
        assert found["groups"][group]["score"] == 50.0 and found["groups"][group]["mean_c"] == pytest.approx(np.mean(c))
    assert found["overall"]["stereotypical_groups"] == [] and found["overall"]["excess"] == 0.0
    assert found["overall"]["n_groups"] == 2 and found["overall"]["distance"] == 0.0
    assert association_summary(rows.drop(columns=["predicate_kind"]), ["a", "b"]) is None
    apart = _rows({("a", "f1", STEREOTYPE): [1.0], ("a", "f2", NEUTRAL): [1.0]})  # no frame holds both kinds
    assert association_summary(apart, ["a"]) is None


def test_the_one_sided_sign_test_leaves_out_zeros_and_balances_signs():
    assert sign_test_greater(np.array([1.0, -1.0, 0.0])) == pytest.approx(0.75)  # 1 of 2 up: P(K >= 1) = 3/4
    assert sign_test_greater(np.array([-1.0, -2.0])) == pytest.approx(1.0)
    assert sign_test_greater(np.array([0.0, 0.0])) == sign_test_greater(np.array([])) == 1.0


def test_the_stereotype_rows_are_the_rows_as_they_were_numbered_afresh():
    found = stereotype_rows(BEFORE)
    assert list(found.columns) == list(BEFORE.columns) and list(found.index) == list(range(6))
    assert found["pair_id"].tolist() == BEFORE.loc[BEFORE["predicate_kind"] == STEREOTYPE, "pair_id"].tolist()
    without = BEFORE.drop(columns=["predicate_kind"])
    assert stereotype_rows(without) is without  # no neutral predicates: every row is a stereotype pair


def test_a_group_at_a_corrected_p_of_exactly_alpha_is_not_shifted():
    """Benjamini-Hochberg over 8 groups: e, 5 of 5 frames up (p 1/32), ranks fifth, 1/32 * 8 / 5 = 0.05."""
    spec: dict = {}
    for group, frames in (("a", 8), ("b", 8), ("c", 8), ("d", 8), ("e", 5), ("f", 1), ("g", 1), ("h", 1)):
        spec |= _frames(group, frames, 0.0, None)
    before = after = _rows(spec)
    for group in "abcdefgh":
        after = _moved(after, group, STEREOTYPE, 1.0 if group <= "e" else -1.0)
    found = shift_change(before, after, CompareOptions(resamples=20, seed=1, correction="bh"))
    assert found["groups"]["e"]["d"]["p_adj"] == 0.05 and found["shifted"] == ["a", "b", "c", "d"]


def test_the_phrase_terms_of_a_run_by_hand():
    rows = pd.DataFrame({"group": ["a", "a", "b", "c", "a"], "d_phrase": [1.0, -3.0, 2.0, None, None],
                         "d_predicate": [0.5, 0.5, -1.0, 4.0, 9.0]})
    found = phrase_terms_summary(rows, ["b", "c", "a", "x"])
    assert found["groups"] == {"b": {"n": 1, "d_phrase": 2.0, "d_predicate": -1.0},
                               "a": {"n": 2, "d_phrase": -1.0, "d_predicate": 0.5}}
    assert list(found["groups"]) == ["b", "a"]  # c has no known phrase term
    assert found["overall"] == {"abs_phrase": 1.5, "abs_predicate": 0.75, "phrase_share": pytest.approx(100 * 1.5 / 2.25)}
    zero = phrase_terms_summary(rows.assign(d_phrase=[0.0, 0.0, 0.0, None, None], d_predicate=0.0), ["a", "b"])
    assert zero["overall"]["phrase_share"] is None
    assert phrase_terms_summary(rows.drop(columns=["d_phrase"]), ["a"]) is None
    assert phrase_terms_summary(rows.assign(d_phrase=None), ["a"]) is None


def test_neutral_pairs_rising_alone_shift_no_group():
    """The neutral pairs' d is the offset, not the association: rising in every frame it lowers c, and names no
    group as shifted towards the stereotype, however clear its own test."""
    before = _rows(_frames("g", 8, 0.0, 0.0))
    found = shift_change(before, _moved(before, "g", NEUTRAL, 1.0), FAST)
    assert found["groups"]["g"]["d_neutral"]["p_adj"] == pytest.approx(1 / 256)
    assert (found["shifted"], found["shifted_d"], found["shifted_c"]) == ([], [], [])


def test_two_runs_whose_units_differ_on_either_side_are_refused():
    extra = pd.concat([BEFORE, _rows({("a", "f9", STEREOTYPE): [1.0], ("a", "f9", NEUTRAL): [0.0]})], ignore_index=True)
    refusal = "^the two runs' units differ; compare aligns runs of the same pairs$"
    for before, after in ((BEFORE, extra), (extra, BEFORE)):
        with pytest.raises(ValueError, match=refusal):
            shift_change(before, after, FAST)


def test_each_groups_interval_is_its_own_draw_at_the_level():
    """Nine frames of varied c a group: the 2.5% and 97.5% quantiles of 2000 means drawn from `cell_rng(0,
    "association", group)` (the two groups' draws differ), not any nearby level or draw."""
    from queerbias.report.paired_stats import cell_rng, stratified_bootstrap_means

    spec: dict = {}
    for group, scale in (("v", 1.0), ("w", -0.5)):
        spec |= {(group, f"f{i}", STEREOTYPE): [scale * i * i] for i in range(9)}
        spec |= {(group, f"f{i}", NEUTRAL): [0.0] for i in range(9)}
    found = association_summary(_rows(spec), ["v", "w"])
    for group, scale in (("v", 1.0), ("w", -0.5)):
        c = scale * np.arange(9.0) ** 2
        draws = stratified_bootstrap_means([c], cell_rng(0, "association", group), 2000)[:, 0, 0]
        assert found["groups"][group]["ci_c"] == pytest.approx(list(np.quantile(draws, [0.025, 0.975])), rel=1e-9)


def test_the_phrase_share_needs_some_term_and_is_the_phrase_terms_part():
    rows = pd.DataFrame({"group": ["a", "b"], "d_phrase": [0.25, -0.25], "d_predicate": [0.5, 0.5]})
    assert phrase_terms_summary(rows, ["a", "b"])["overall"]["phrase_share"] == pytest.approx(100 / 3)


def test_the_chance_above_60_by_default():
    assert chance_some_above({"g": 100}) == pytest.approx(1 - stats.binom.cdf(60, 100, 0.5))


def test_the_change_intervals_by_hand_from_rows_in_any_order():
    """The association's and the shift test's intervals, recomputed here from the frames by hand: the frames of each
    group in sorted order, strata drawn by the named generators (the shift's one per group and measure), the
    interval's ends at (1 - level) / 2. The rows come shuffled: the figures do not depend on their order."""
    rng = np.random.default_rng(11)
    c = {side: {g: rng.normal(0.3 if side == "before" else -0.2, 1.0, 12).round(3) for g in ("a", "b")}
         for side in ("before", "after")}
    frames = [f"f{i:02d}" for i in range(12)]

    def rows(side):  # one stereotype pair of d = c and one neutral pair of d = 0 per frame
        d = {(g, f, STEREOTYPE): [float(c[side][g][i])] for g in ("a", "b") for i, f in enumerate(frames)}
        return _rows(d | {(g, f, NEUTRAL): [0.0] for g in ("a", "b") for f in frames})

    shuffled = [rows(side).sample(frac=1.0, random_state=7).reset_index(drop=True) for side in ("before", "after")]
    options = CompareOptions(resamples=400, seed=1)  # level 0.95: the ends at 0.025 and 0.975
    strata = [np.column_stack([100.0 * (c["before"][g] > 0), 100.0 * (c["after"][g] > 0), c["before"][g],
                               c["after"][g]]) for g in ("a", "b")]
    draws = stratified_bootstrap_means(strata, cell_rng(1, "association"), 400)
    excess = np.maximum(0.0, draws[:, :, :2] - 50.0).mean(axis=1)
    soft = np.abs(draws[:, :, 2:]).mean(axis=1)
    found = association_change(*shuffled, options)
    assert found["ci_excess"] == pytest.approx(np.quantile(excess[:, 1] - excess[:, 0], [0.025, 0.975]).tolist())
    assert found["ci_soft"] == pytest.approx(np.quantile(soft[:, 1] - soft[:, 0], [0.025, 0.975]).tolist())
    shift = shift_change(*shuffled, options)
    for group in ("a", "b"):
        change = c["after"][group] - c["before"][group]
        drawn = stratified_bootstrap_means([change], cell_rng(1, "shift", group, "c"), 400)[:, 0, 0]
        assert shift["groups"][group]["c"]["ci"] == pytest.approx(np.quantile(drawn, [0.025, 0.975]).tolist())


def test_the_unit_table_of_rows_without_kinds_frames_or_a_neutral_predicate():
    """Rows without a predicate kind (a set of stereotypes only, or an older run) are stereotype pairs, also where
    the column is there but empty; rows of which some name no frame are counted per pair; a set whose rows are all
    stereotypes has no association."""
    rows = BEFORE.copy()
    plain = unit_table(rows.drop(columns=["predicate_kind"]))
    assert list(plain.columns) == ["group", "unit", "d"] and len(plain) == 5  # every pair a stereotype, per frame
    assert plain["d"].tolist() == pytest.approx([(3 + 1 + 1) / 3, (0.5 + 1 + 2) / 3, 1.0, -0.5, -1.5])
    unknown = rows.assign(predicate_kind=[None if k == STEREOTYPE else k for k in rows["predicate_kind"]])
    assert unit_table(unknown).equals(unit_table(rows))  # an empty kind is a stereotype
    assert "c" in unit_table(rows).columns
    unframed = unit_table(rows.assign(frame=[None] + rows["frame"].tolist()[1:]))
    assert set(unframed["unit"]) <= set(rows["pair_id"])  # one pair names no frame: units are pairs
    only_stereotypes = rows[rows["predicate_kind"] == STEREOTYPE]
    assert not has_association(only_stereotypes) and has_association(rows)


def test_json_values_of_numpy_types_are_plain():
    assert _plain({"n": np.int64(3), "flag": np.bool_(True), "off": np.bool_(False), "x": np.float64("nan"),
                   "y": np.float32(0.5), "name": "a", "none": None, "list": (np.int32(1), True)}) == \
        {"n": 3, "flag": True, "off": False, "x": None, "y": 0.5, "name": "a", "none": None, "list": [1, True]}
    found = _plain({"n": np.int64(3), "flag": np.bool_(True)})
    assert type(found["n"]) is int and type(found["flag"]) is bool


def test_a_group_just_above_half_is_stereotypical():
    """101 of 200 frames with c > 0: a score of 50.5, above 50."""
    d = {("a", f"f{i:03d}", STEREOTYPE): [1.0 if i < 101 else -1.0] for i in range(200)}
    d |= {("a", f"f{i:03d}", NEUTRAL): [0.0] for i in range(200)}
    summary = association_summary(_rows(d), ["a"])
    assert summary["groups"]["a"]["score"] == pytest.approx(50.5) and summary["overall"]["stereotypical_groups"] == ["a"]
