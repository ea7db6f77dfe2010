"""Paired comparison of score directories: statistics, correction, outputs, CLI."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import queerbias as qb
from queerbias.comparison.compare import compare_runs, write_outputs
from queerbias.comparison.delta_plots import crossings
from queerbias.comparison.runs import load_run
from queerbias.errors import QueerbiasError
from queerbias.report.options import CompareOptions
from queerbias.report.paired_stats import adjust_pvalues
from queerbias.report.plots import PALETTE, forest_height_px

from .score_dirs import GROUPS, make_pairs, png_size, shifted, with_scores, write_score_dir

FAST = CompareOptions(resamples=2000, seed=7)
REPO = Path(__file__).resolve().parents[2]
GROUPS_WITH_UNCHANGED = {**GROUPS, "asexual": 3}


@pytest.fixture
def runs(tmp_path):
    """BEFORE and two AFTER runs; the three asexual pairs are rescored identically."""
    before = make_pairs(groups=GROUPS_WITH_UNCHANGED)
    afters = []
    for seed, shift in ((1, 1.5), (2, 4.0)):
        after = shifted(before, seed=seed, shift=shift)
        unchanged = after["group"] == "asexual"
        after.loc[unchanged] = before.loc[unchanged]
        afters.append(after)
    paths = [write_score_dir(tmp_path / name, pairs, spec=name)
             for name, pairs in (("base", before), ("dpo_v1", afters[0]), ("dpo&cda", afters[1]))]
    return [load_run(path) for path in paths]


def test_group_tests_equal_scipy_on_the_same_pairs(runs):
    document = compare_runs(runs[0], runs[1:], FAST)
    before, after = runs[0].pairs, runs[1].pairs
    for group, entry in document["comparisons"][0]["groups"].items():
        if group == "asexual":
            continue
        mask = before["group"] == group
        fb, fa = before.loc[mask, "biased"].to_numpy(bool), after.loc[mask, "biased"].to_numpy(bool)
        b, c = int(np.sum(fb & ~fa)), int(np.sum(~fb & fa))
        assert (entry["b"], entry["c"]) == (b, c)
        assert entry["p_bias"] == (stats.binomtest(b, b + c, 0.5).pvalue if b + c else 1.0)
        assert entry["p_soft"] == stats.wilcoxon(after.loc[mask, "soft"], before.loc[mask, "soft"]).pvalue
        assert entry["n"] == mask.sum()


def test_deltas_equal_the_summary_differences(runs):
    comparison = compare_runs(runs[0], runs[1:2], FAST)["comparisons"][0]
    for group, entry in [("overall", comparison["overall"]), *comparison["groups"].items()]:
        s_before = runs[0].summary["overall"] if group == "overall" else runs[0].summary["groups"][group]
        s_after = runs[1].summary["overall"] if group == "overall" else runs[1].summary["groups"][group]
        assert entry["delta_bias"] == pytest.approx(s_after["bias_score"] - s_before["bias_score"], abs=1e-9)
        assert entry["delta_soft"] == pytest.approx(s_after["soft_score"] - s_before["soft_score"], abs=1e-9)
        assert entry["ci_bias"][0] <= entry["delta_bias"] <= entry["ci_bias"][1]
        assert entry["delta_bias"] == pytest.approx(100 * (entry["c"] - entry["b"]) / entry["n"])


def test_unchanged_group_gets_p_one_not_a_crash(runs):
    entry = compare_runs(runs[0], runs[1:2], FAST)["comparisons"][0]["groups"]["asexual"]
    assert (entry["b"], entry["c"], entry["p_bias"], entry["p_soft"]) == (0, 0, 1.0, 1.0)
    assert entry["odds_ratio"] is None and entry["effect_soft"] is None
    assert entry["ci_bias"] == [0.0, 0.0]


@pytest.mark.parametrize("correction", ["holm", "bh"])
def test_p_values_are_adjusted_across_groups(runs, correction):
    options = CompareOptions(resamples=200, correction=correction)
    comparison = compare_runs(runs[0], runs[1:2], options)["comparisons"][0]
    groups = comparison["groups"].values()
    for test in ("bias", "soft"):
        raw = [g[f"p_{test}"] for g in groups]
        expected = (adjust_pvalues(raw, "holm") if correction == "holm"
                    else stats.false_discovery_control(raw, method="bh"))
        np.testing.assert_allclose([g[f"p_{test}_adj"] for g in groups], expected, rtol=1e-14)
        assert comparison["overall"][f"p_{test}_adj"] == comparison["overall"][f"p_{test}"]


def test_ttest_option(runs):
    comparison = compare_runs(runs[0], runs[1:2], CompareOptions(resamples=200, soft_test="ttest"))["comparisons"][0]
    before, after = runs[0].pairs, runs[1].pairs
    assert comparison["overall"]["p_soft"] == stats.ttest_rel(after["soft"], before["soft"]).pvalue
    d = after["soft"] - before["soft"]
    assert comparison["overall"]["effect_soft"] == pytest.approx(d.mean() / d.std(ddof=1))


def test_intervals_are_deterministic_under_a_seed(runs):
    first = compare_runs(runs[0], runs[1:], FAST)["comparisons"]
    assert compare_runs(runs[0], runs[1:], FAST)["comparisons"] == first
    other = compare_runs(runs[0], runs[1:], CompareOptions(resamples=2000, seed=8))["comparisons"]
    assert other[0]["overall"]["ci_soft"] != first[0]["overall"]["ci_soft"]


def test_group_interval_is_independent_of_other_groups(tmp_path, runs):
    before, after = runs[0].pairs, runs[1].pairs
    keep = before["group"].isin(["gay", "trans"])
    subset = [load_run(write_score_dir(tmp_path / f"sub{i}", p[keep], spec=f"s{i}"))
              for i, p in enumerate((before, after))]
    full = compare_runs(runs[0], runs[1:2], FAST)["comparisons"][0]["groups"]["trans"]
    part = compare_runs(subset[0], subset[1:], FAST)["comparisons"][0]["groups"]["trans"]
    assert part["ci_bias"] == full["ci_bias"] and part["ci_soft"] == full["ci_soft"]


def test_outputs_round_trip(tmp_path, runs):
    document = compare_runs(runs[0], runs[1:], FAST)
    out = tmp_path / "out"
    write_outputs(document, out)
    saved = json.loads((out / "delta.json").read_text())
    assert saved["comparisons"] == document["comparisons"]
    table = pd.read_csv(out / "delta.csv", dtype=str, keep_default_na=False)
    assert len(table) == 2 * (1 + len(GROUPS_WITH_UNCHANGED))
    for comparison in saved["comparisons"]:
        rows = table[table["after"] == comparison["after"]["label"]].set_index("group")
        for group, entry in [("overall", comparison["overall"]), *comparison["groups"].items()]:
            row = rows.loc[group]
            for key, value in entry.items():
                if isinstance(value, list):
                    assert [_csv_value(row[f"{key}_low"]), _csv_value(row[f"{key}_high"])] == value, key
                elif key.startswith("stars_"):
                    assert row[key] == value
                else:
                    assert _csv_value(row[key]) == value, (group, key)


def _csv_value(cell: str):
    """A CSV field as delta.json holds it: None when empty, else a number."""
    if cell == "":
        return None
    return float(cell)


def test_tables_and_forest_plot(tmp_path, runs):
    document = compare_runs(runs[0], runs[1:], FAST)
    write_outputs(document, tmp_path)
    md = (tmp_path / "delta.md").read_text()
    tex = (tmp_path / "delta.tex").read_text()
    assert "| Identity | dpo_v1 | dpo&cda | Mean |" in md.replace("\\_", "_")
    overall = document["comparisons"][1]["overall"]
    cell = f"{overall['delta_bias']:+.2f}{overall['stars_bias'].replace('*', chr(92) + '*')}"
    assert cell in md and overall["stars_bias"] == "***"
    assert r"\toprule" in tex and r"dpo\_v1 & dpo\&cda & Mean" in tex and r"$^{***}$" in tex
    rows = len(GROUPS_WITH_UNCHANGED) + 1
    assert png_size(tmp_path / "forest.png") == (1100, 170 + rows * (34 + 14)) == (1100, forest_height_px(rows, 2))
    assert png_size(tmp_path / "levels.png") == (1100, forest_height_px(rows, 1))  # the last comparison's levels
    assert not (tmp_path / "trajectory.png").exists()


def test_levels_plot_needs_a_measure_with_a_reference_level(runs, tmp_path):
    document = compare_runs(runs[0], runs[1:2], FAST)
    for measure in document["measures"]:
        measure["reference"] = None
    write_outputs(document, tmp_path)  # a suite without reference levels: no levels plot
    assert (tmp_path / "forest.png").is_file() and not (tmp_path / "levels.png").exists()


@pytest.fixture
def checkpoint_dirs(tmp_path):
    """A base (perplexity 10) and checkpoints at steps 300, 100, 200; step 300 lost perplexity."""
    before = make_pairs()
    base = write_score_dir(tmp_path / "base", before, spec="base", perplexity=10.0)
    paths = [base]
    for step, shift, ppl in ((300, 8.0, 11.0), (100, 1.0, 10.2), (200, 3.0, 10.4)):
        pairs = shifted(before, seed=step, shift=shift)
        paths.append(write_score_dir(tmp_path / f"ckpt-{step}", pairs, spec="run", step=step, perplexity=ppl))
    return paths


def test_checkpoint_trajectory_and_best(tmp_path, checkpoint_dirs):
    runs = [load_run(path) for path in checkpoint_dirs]
    document = compare_runs(runs[0], runs[1:], replace(FAST, best="lowest"))
    trajectory = document["trajectory"]
    assert [row["step"] for row in trajectory] == [0, 100, 200, 300]
    assert trajectory[3]["ppl_change_pct"] == pytest.approx(10.0)
    best = document["best"]
    assert best["criterion"] == "lowest" and best["excluded"][0]["label"] == "ckpt-300"
    eligible = [row for row in trajectory[1:] if row["label"] in best["eligible"]]
    assert best["label"] == min(eligible, key=lambda row: row["bias"])["label"]
    write_outputs(document, tmp_path / "out")
    assert png_size(tmp_path / "out" / "trajectory.png") == (1100, 450)
    assert "Best checkpoint: " + best["label"] in (tmp_path / "out" / "delta.md").read_text()


def test_cli_compare(tmp_path, runs, capsys, cli):
    out = tmp_path / "cli"
    args = ["compare", str(runs[0].path), f"mitigated={runs[1].path}", "--out", str(out), "--resamples", "300"]
    assert cli(args + ["--soft-test", "ttest", "--correction", "bh"]) == 0
    saved = json.loads((out / "delta.json").read_text())
    assert saved["comparisons"][0]["after"]["label"] == "mitigated"
    meta = saved["meta"]
    assert (meta["soft_test"], meta["correction"], meta["n_resamples"]) == ("ttest", "bh", 300)
    assert "| Overall |" in capsys.readouterr().out


def test_cli_refuses_mismatched_runs(tmp_path, capsys, cli):
    pairs = make_pairs()
    a = write_score_dir(tmp_path / "a", pairs, checksum="sha256:one")
    b = write_score_dir(tmp_path / "b", pairs, checksum="sha256:two")
    assert cli(["compare", str(a), str(b), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "data checksum differs" in err and "sha256:one" in err and "sha256:two" in err
    assert not (tmp_path / "out" / "delta.json").exists()


def test_cli_scores_models_first(tmp_path, monkeypatch, cli):
    pairs = make_pairs()
    calls = []

    def run_to_dir(suite, model_spec, pairs_spec, out_dir, settings, **options):
        calls.append((model_spec, pairs_spec))
        scored = pairs if model_spec == "hf:base" else shifted(pairs, seed=1, shift=3.0)
        write_score_dir(out_dir, scored, spec=model_spec)
        return json.loads((out_dir / "summary.json").read_text())

    monkeypatch.setattr("queerbias.suites.store.run_to_dir", run_to_dir)
    out = tmp_path / "out"
    assert cli(["compare", "--model", "hf:base", "--model", "hf:org/tuned", "--pairs", "p.csv",
                 "--out", str(out), "--resamples", "100"]) == 0
    assert calls == [("hf:base", "p.csv"), ("hf:org/tuned", "p.csv")]
    saved = json.loads((out / "delta.json").read_text())
    assert saved["comparisons"][0]["after"]["label"] == "tuned"
    assert (out / "runs" / "01-tuned" / "summary.json").is_file()


def test_single_checkpoint_has_no_trajectory(tmp_path, checkpoint_dirs):
    runs = [load_run(path) for path in checkpoint_dirs]
    out = tmp_path / "out"
    write_outputs(compare_runs(runs[0], runs[1:], FAST), out)
    assert (out / "trajectory.png").is_file() and (out / "trajectory.csv").is_file()
    document = compare_runs(runs[0], runs[1:2], FAST)
    assert "trajectory" not in document and "best" not in document
    write_outputs(document, out)  # rerun into the same directory: no stale trajectory left
    assert not (out / "trajectory.png").exists() and not (out / "trajectory.csv").exists()
    assert sorted(p.name for p in out.iterdir()) == ["delta.csv", "delta.json", "delta.md", "delta.tex", "forest.png",
                                                     "levels.png"]


def test_invalid_options_are_refused(tmp_path, cli, capsys):
    with pytest.raises(QueerbiasError, match="--soft-test must be one of wilcoxon, ttest, got 'sign'"):
        CompareOptions(soft_test="sign")
    assert cli(["compare", "--model", "hf:a", "--model", "hf:b", "--out", str(tmp_path)]) == 2
    assert "--model needs --pairs" in capsys.readouterr().err


def _aligned(before_biased, after_biased, before_soft, after_soft, group_of):
    return pd.DataFrame({"group": group_of, "biased_before": before_biased, "biased_after": after_biased,
                         "soft_before": before_soft, "soft_after": after_soft})


def test_distance_change_by_hand_and_its_interval():
    """Group a: 100% -> 50% biased, group b: 0% -> 50%: distance (50 + 50)/2 = 50 falls to 0."""
    from queerbias.suites.pairs.distance import distance_stats

    n = 40
    aligned = _aligned([1] * n + [0] * n, [1, 0] * (n // 2) + [0, 1] * (n // 2),
                       [70.0] * n + [30.0] * n, [50.0] * (2 * n), ["a"] * n + ["b"] * n)
    d = distance_stats(aligned, FAST, np.random.default_rng(0))
    assert (d["bias_before"], d["bias_after"], d["delta_bias"]) == (50.0, 0.0, -50.0)
    assert (d["soft_before"], d["soft_after"], d["delta_soft"]) == (20.0, 0.0, -20.0)
    assert d["ci_bias"][1] < 0 and d["p_bias"] == 0.0 and d["n_groups"] == 2
    assert d["ci_soft"] == [-20.0, -20.0]  # constant within groups: every resample agrees

    unchanged = distance_stats(_aligned([1, 0, 1], [1, 0, 1], [60.0, 40.0, 55.0], [60.0, 40.0, 55.0],
                                        ["a", "a", "b"]), FAST, np.random.default_rng(0))
    assert unchanged["delta_bias"] == 0.0 and unchanged["ci_bias"] == [0.0, 0.0] and unchanged["p_bias"] == 1.0


def test_compare_reports_the_distance_in_delta_json_tables_and_trajectory(runs, tmp_path):
    from queerbias.suites.pairs.aggregate import distance_to_indifference

    document = compare_runs(runs[0], runs[1:], FAST)
    distance = document["comparisons"][0]["distance"]
    groups_before = {g: {"bias_score": s["bias_before"], "soft_score": s["soft_before"]}
                     for g, s in document["comparisons"][0]["groups"].items()}
    assert distance["bias_before"] == pytest.approx(distance_to_indifference(groups_before)["bias"], abs=1e-3)
    paths = write_outputs(document, tmp_path / "out")
    markdown = (tmp_path / "out" / "delta.md").read_text()
    assert "Distance to indifference" in markdown and "Distance to indifference" in (tmp_path / "out" / "delta.tex").read_text()
    assert json.loads((tmp_path / "out" / "delta.json").read_text())["comparisons"][0]["distance"] == distance
    assert paths


def _training_dir(path, pairs, step: int):
    """A benchmark folder of a training run's base (step 0) or checkpoint, as the run writes it."""
    write_score_dir(path, pairs, step=step)
    summary = json.loads((path / "summary.json").read_text())
    summary["meta"]["run"] = str(path.parents[1])
    (path / "summary.json").write_text(json.dumps(summary))
    return path


def test_checkpoints_of_a_run_are_labelled_by_step(tmp_path, cli, capsys):
    """Every checkpoint's benchmark folder has the same name: the default label is the step (docs/compare.md)."""
    before = make_pairs()
    dirs = [_training_dir(tmp_path / "RUN" / folder / "B", shifted(before, seed=step, shift=step / 4) if step else before,
                          step) for folder, step in (("base", 0), ("checkpoint-2", 2), ("checkpoint-4", 4))]
    assert cli(["compare", *map(str, dirs), "--out", str(tmp_path / "out"), "--resamples", "200"]) == 0, \
        capsys.readouterr().err
    saved = json.loads((tmp_path / "out" / "delta.json").read_text())
    assert [c["after"]["label"] for c in saved["comparisons"]] == ["step-2", "step-4"]
    assert saved["comparisons"][0]["before"]["label"] == "base"
    other = _training_dir(tmp_path / "OTHER" / "checkpoint-4" / "B", shifted(before, seed=9, shift=1.0), 4)
    assert cli(["compare", str(dirs[0]), str(dirs[2]), str(other), "--out", str(tmp_path / "two"),
                "--resamples", "200"]) == 0
    saved = json.loads((tmp_path / "two" / "delta.json").read_text())
    assert [c["after"]["label"] for c in saved["comparisons"]] == ["RUN/step-4", "OTHER/step-4"]
    assert "`queerbias compare RUN/checkpoint-2/B RUN/checkpoint-4/B" in (REPO / "docs" / "compare.md").read_text()


def _training_run(root: Path, benchmarks=("B", "K")) -> list[Path]:
    """A training run's folders as it writes them: base/ and two checkpoints, each with a run per benchmark."""
    before = make_pairs()
    folders = []
    for folder, step in (("base", 0), ("checkpoint-2", 2), ("checkpoint-4", 4)):
        for name in benchmarks:
            _training_dir(root / folder / name, shifted(before, seed=step, shift=step / 4) if step else before, step)
        folders.append(root / folder)
    return folders


def test_a_checkpoint_folder_stands_for_its_run_of_the_benchmark(tmp_path, cli, capsys):
    """`compare RUN/base/B RUN/checkpoint-*`, as docs/compare.md shows it: each checkpoint's run of the benchmark
    BEFORE is of, not the false "did not finish" (issue 51); where nothing settles the benchmark, the refusal
    names the benchmarks the folder holds."""
    base, *checkpoints = _training_run(tmp_path / "RUN")
    assert cli(["compare", str(base / "B"), *map(str, checkpoints), "--out", str(tmp_path / "out"),
                "--resamples", "200"]) == 0, capsys.readouterr().err
    saved = json.loads((tmp_path / "out" / "delta.json").read_text())
    assert [c["after"]["path"] for c in saved["comparisons"]] == [str(c / "B") for c in checkpoints]
    assert [c["after"]["label"] for c in saved["comparisons"]] == ["step-2", "step-4"] and saved["benchmark"] == "B"
    assert (tmp_path / "out" / "delta.md").read_text().startswith("# B (synthetic): change against base\n")
    # the same through the Python API
    assert qb.compare(base / "K", checkpoints, resamples=200).delta["benchmark"] == "K"
    capsys.readouterr()
    for runs, message in (
            ([base, *checkpoints], f"{base}: a folder of runs, one per benchmark (B, K), and which one to compare "
                                   f"is not settled; give the benchmark's folder, e.g. {base / 'B'}"),
            ([base / "B", tmp_path / "RUN" / "checkpoint-6"], f"{tmp_path / 'RUN' / 'checkpoint-6'}: no such run "
                                                                "folder (nothing is there)")):
        assert cli(["compare", *map(str, runs), "--out", str(tmp_path / "no")]) == 2
        assert capsys.readouterr().err.strip().endswith(message)
    with pytest.raises(QueerbiasError, match=r"RUN/checkpoint-2: not a run but a folder of runs \(B, K, as a training"):
        load_run(checkpoints[0])


def test_plots_name_the_benchmark_and_mark_groups_that_passed_50(tmp_path):
    """levels.png and forest.png are titled by the benchmark; a group that crossed 50 towards the stereotype,
    and one pushed from above 50 to below it (a large negative Δ that is an overshoot, not a gain), are
    named in their rows and drawn in the warning colour."""
    before = make_pairs()
    gay, trans = (before["group"] == "gay").to_numpy(), (before["group"] == "trans").to_numpy()
    low, high = before["score_less"] - 1.0, before["score_less"] + 1.0
    before = with_scores(before, np.where(gay, low, np.where(trans, high, before["score_more"])), before["score_less"])
    after = with_scores(before, np.where(gay, high, np.where(trans, low, before["score_more"])), before["score_less"])
    base = _training_dir(tmp_path / "RUN" / "base" / "bias", before, 0)
    step = _training_dir(tmp_path / "RUN" / "checkpoint-8" / "bias", after, 8)
    change = qb.compare(base, step, resamples=200, out=tmp_path / "out")
    groups = change.delta["comparisons"][0]["groups"]
    assert (groups["gay"]["bias_before"], groups["gay"]["bias_after"]) == (0.0, 100.0)
    assert (groups["trans"]["bias_before"], groups["trans"]["bias_after"]) == (100.0, 0.0)
    rows = {"gay": "gay: crossed 50 towards the stereotype", "trans": "trans: overshot past 50, not a gain"}
    halfway = {**change.delta["comparisons"][0]["groups"]["trans"], "bias_after": 30.0}  # 100 -> 30: nearer 50
    assert crossings(change.delta, [{"groups": {"trans": halfway}, "after": {"label": "step-8"}}]) == {
        "trans": "overshot past 50"}
    for figure, title in ((change.levels(), "bias (synthetic): base → step-8, per identity"),
                          (change.forest(), "bias (synthetic): change against base: 95% bootstrap intervals; "
                                            "filled marker = adjusted p < .05")):
        labels = {label.get_text(): label.get_color() for label in figure.axes[0].get_yticklabels()}
        assert figure.get_suptitle() == title
        assert {text: colour for text, colour in labels.items() if colour != "black"} == {
            text: PALETTE[1] for text in rows.values()}
        assert {"lesbian", "nonbinary", "Overall"} <= set(labels)
    for name in ("levels.png", "forest.png"):
        assert png_size(tmp_path / "out" / name)[0] == 1100


def test_a_comparison_without_a_declared_part_or_judged_figure_is_refused(runs, monkeypatch):
    """A suite whose extras lose a part its declaration names (a rename, say), or a judged figure of a part they
    hold, is refused by the comparator: a study would otherwise find no column to judge by and fail nothing."""
    suite = type(runs[0].suite)
    extras = suite.extras

    def without(part, key=None):
        def changed(self, *args):
            found = extras(self, *args)
            if key is None:
                return {name: value for name, value in found.items() if name != part}
            return {**found, part: {name: value for name, value in found[part].items() if name != key}}
        return changed

    monkeypatch.setattr(suite, "extras", without("direction"))
    with pytest.raises(QueerbiasError, match="the pairs comparison lacks 'direction', which the suite's declaration"):
        compare_runs(runs[0], runs[1:2], FAST)
    monkeypatch.setattr(suite, "extras", without("direction", "crossed"))
    with pytest.raises(QueerbiasError, match="lacks 'crossed' of 'direction'"):
        compare_runs(runs[0], runs[1:2], FAST)
