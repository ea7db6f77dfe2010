"""Lou results as report data: the tables of each view's summary.md, the figures' series
(drawn by `queerbias.report.plots`) and the ranking consistency of several classifiers.
"""

from __future__ import annotations

from pathlib import Path

from queerbias.families import get_family
from queerbias.report.formatting import format_p
from queerbias.report.paired_stats import stars
from queerbias.report.plots import forest, hbar_panels
from queerbias.report.tables import MISSING, Table, fmt, to_markdown
from queerbias.suites.lou.analysis import PROPERTIES, SPLITS
from queerbias.suites.lou.clusters import SCORES
from queerbias.suites.lou.data import ORIGINAL, POOLED

# -- LM view ---------------------------------------------------------------------------

def lm_overview(summary: dict, sentence: bool = False) -> Table:
    """Strategies × scopes: % of instances preferring the reformulation / mean Δ (per token, or summed)."""
    scopes = [*summary["tasks"], POOLED]
    strategies = list(summary[POOLED])

    def view(scope: str, strategy: str) -> dict:
        entry = _scope(summary, scope)[strategy]
        return entry["sentence"] if sentence else entry

    rows = [[s, *[(fmt(view(scope, s)["preference"], 1), fmt(view(scope, s)["mean_delta"], 3, signed=True))
                  for scope in scopes]] for s in strategies]
    unit = "summed over the text (sentence log-likelihood)" if sentence else "per token"
    return Table(header=["Strategy", *scopes], rows=rows,
                 caption=f"Reformulation preferred (%) / mean Δ log-likelihood {unit}",
                 notes="Δ: reformulation minus original (below 0: the original is more likely); a tie counts "
                       "half, so 50% = no preference. Texts equal to "
                       "the original or longer than the model's context are excluded from both figures; "
                       f"'{POOLED}' counts each distinct text pair once (the GermEval tasks share their texts).")


def lm_details(summary: dict, scope: str) -> Table:
    rows = []
    for strategy, e in _scope(summary, scope).items():
        rows.append([strategy, str(e["n"]), str(e["n_identical"]), str(e["n_too_long"]), str(e["n_compared"]),
                     str(e["n_ties"]), _with_ci(e["mean_delta"], e["ci_delta"], 3),
                     _with_ci(e["preference"], e["ci_preference"], 1),
                     _with_ci(e["sentence"]["preference"], e["sentence"]["ci_preference"], 1)])
    return Table(header=["Strategy", "n", "identical", "too long", "compared", "ties", "mean Δ per token [95% CI]",
                         "preferred % per token [95% CI]", "preferred % summed [95% CI]"], rows=rows,
                 caption=f"{scope}: per strategy")


def lm_blocks(summary: dict) -> list:
    """summary.md of the LM view: the question, the overview and one details table per scope."""
    return [("Does the model find gender-fair reformulations as likely as the original German text? "
             f"Length-normalised log-likelihood ({_method(summary['meta'])}); 50% preferred = no preference."),
            lm_overview(summary), lm_overview(summary, sentence=True),
            *[lm_details(summary, scope) for scope in [*summary["tasks"], POOLED]],
            *([added_tokens_table(summary["added_tokens"], "this model's tokenizer")]
              if "added_tokens" in summary else [])]


def lm_plot(summary: dict, path: Path) -> Path:
    """Preference share and mean Δ per strategy with 95% intervals, one colour per task and the pooled scope."""
    scopes = [*summary["tasks"], POOLED]
    strategies = list(summary[POOLED])
    series = [(scope, [_scope(summary, scope)[s] for s in strategies]) for scope in scopes]
    panels = [("preference", "ci_preference", None, "reformulation preferred (% of instances)", 50.0),
              ("mean_delta", "ci_delta", None, "mean Δ log-likelihood per token (reformulation − original)")]
    title = f"Lou, {summary['meta']['model']['spec']}: gender-fair reformulation vs. original"
    return forest(strategies, series, panels, title, path, ylabel="Strategy", summary_row=False)


def _method(meta: dict) -> str:
    kind = meta["model"]["kind"]
    if get_family(kind).left_to_right:
        return f"{kind} LM: mean token log-probability given BOS"
    return f"{kind} LM: mean pseudo-log-likelihood, within_word_l2r"


# -- classifier view -------------------------------------------------------------------

def classifier_table(summary: dict, task: str) -> Table:
    entries = summary["tasks"][task]
    base = entries[ORIGINAL]
    rows = [[ORIGINAL, str(base["n"]), MISSING, fmt(base["macro_f1"], 1), MISSING, fmt(base["f1_upstream"], 1),
             MISSING, MISSING, fmt(base["certainty"], 3), MISSING]]
    for strategy, e in entries.items():
        if strategy == ORIGINAL:
            continue
        rows.append([strategy, str(e["n"]), str(e["n_identical"]), fmt(e["macro_f1"], 1),
                     _with_ci(e["delta_f1"], e["ci_delta_f1"], 1, signed=True), fmt(e["f1_upstream"], 1),
                     fmt(e["delta_f1_upstream"], 1, signed=True), _with_ci(e["flip_rate"], e["ci_flip_rate"], 1),
                     fmt(e["certainty"], 3), fmt(e["delta_certainty"], 3, signed=True)])
    return Table(header=["Version", "n", "identical", "macro-F1", "ΔF1 [95% CI]", "F1 upstream", "ΔF1 upstream",
                         "flips % [95% CI]", "certainty", "Δcertainty"],
                 rows=rows, caption=task,
                 notes="ΔF1 and Δcertainty against the original; F1 upstream: what the authors' script logs as "
                       "'f1-macro' (binary tasks: the positive class's F1); flips: % of instances whose predicted label "
                       "changes; certainty: mean max-softmax probability on [0, 1] (the paper's Tables 3-4 give it in "
                       "%). Identical texts are kept (they cannot flip). "
                       "Intervals: paired percentile bootstrap over instances (same resample for both versions).")


def classifier_blocks(summary: dict) -> list:
    blocks = ["Predictions on the original texts and on each gender-fair reformulation (Waldis et al. 2024, "
              "Figures 3-4).", *[classifier_table(summary, task) for task in summary["tasks"]]]
    analysis = summary.get("analysis")
    if analysis is None:
        return blocks
    correlation = analysis["f1_flip_correlation"]
    blocks.append(f"ΔF1 (the signed change of macro-F1, reformulation − original) and flip rate over the "
                  f"{correlation['n']} task × strategy cells (Sec. 5 iv): Spearman ρ = {fmt(correlation['rho'], 2)}, "
                  f"p = {format_p(correlation['p'])} (exact permutation test up to 8 cells: one task's 6 strategies "
                  "give at best p = 2/720 ≈ .003).")
    length = analysis.get("length", "words")
    blocks.extend(property_table(changes, scope, length) for scope, changes in analysis["property_changes"].items()
                  if any(changes["overall"].values()))
    for scope, found in analysis.get("flip_properties", {}).items():
        if any(entry["yes"]["n"] or entry["no"]["n"] for entry in found.values()):
            blocks += [flip_property_table(found, scope, length), flip_bin_table(analysis["flip_bins"][scope], scope)]
    if "performance" in analysis:
        blocks.append(performance_table(analysis["performance"]))
    if "task_data" in summary["meta"]["data"]:
        blocks.append(task_table(summary["meta"]["data"]["task_data"]))
    if analysis.get("layer_clusters"):
        blocks.append(cluster_table(analysis["layer_clusters"]))
    if analysis["added_tokens"] is not None:
        blocks.append(added_tokens_table(analysis["added_tokens"], "the classifier's tokenizer"))
    return blocks


def property_table(changes: dict, scope: str, length: str = "words") -> Table:
    """Paper Table 3: change reformulated − original per property, overall and split by flip and correctness."""
    def cell(entry):
        return MISSING if entry is None else f"{fmt(entry['change'], 2, signed=True)}{stars(entry['p'])}"

    rows = [[label, *[cell(changes[split][name]) for split in SPLITS]] for name, label in PROPERTIES.items()]
    counts = [max((e["n"] for e in changes[split].values() if e is not None), default=0) for split in SPLITS]
    return Table(header=["Property", *SPLITS.values()], rows=rows,
                 summary_rows=[["pairs", *[str(n) for n in counts]]],
                 caption=f"{scope}: change from original to reformulation (paper Sec. 6 ii, Table 3)",
                 notes="Mean change over (instance, strategy) pairs, identical texts left out; all properties on 0-100: "
                       f"Flesch (Amstad's German formula) and length ({length}) min-max normalised per task, certainty "
                       "and attention in percentage points. Attention: the prediction token's maximum and SD over the "
                       "tokens the reformulation left unchanged (last layer, mean over heads). Flip: the prediction "
                       "changed; correct: the reformulation's prediction is right. Stars: Wilcoxon signed-rank "
                       "* p < .05, ** < .01, *** < .001.")


def flip_property_table(found: dict, scope: str, length: str) -> Table:
    """Paper Table 4: the originals' properties by whether their reformulation flipped the prediction."""
    def cell(entry: dict) -> str:
        return MISSING if entry["mean"] is None else f"{fmt(entry['mean'], 1)} ± {fmt(entry['sd'], 1)}"

    rows = [[label, cell(found[name]["no"]), cell(found[name]["yes"]), format_p(found[name]["p"])]
            for name, label in PROPERTIES.items()]
    counts = [str(max(entry[side]["n"] for entry in found.values())) for side in ("no", "yes")]
    return Table(header=["Property", "Flip: no", "Flip: yes", "p"], rows=rows, summary_rows=[["pairs", *counts, ""]],
                 caption=f"{scope}: properties of the originals by whether their reformulation flips the prediction "
                         "(paper Sec. 6 iii, Table 4)",
                 notes=f"Mean ± SD over (instance, strategy) pairs of the original's value, on the scales of Table 3 "
                       f"(length in {length}); p: two-sided Mann-Whitney U test of the two groups (the paper names no "
                       "test).")


def flip_bin_table(bins: dict, scope: str) -> Table:
    """Paper Fig. 7: the flip share per fifth of each property's scale."""
    first = next(iter(bins.values()))
    header = ["Property", *[f"{fmt(b['low'], 0)}-{fmt(b['high'], 0)}" for b in first]]
    rows = [[PROPERTIES[name], *[MISSING if b["flip_share"] is None else f"{fmt(b['flip_share'], 1)} ({b['n']})"
                                 for b in entries]] for name, entries in bins.items()]
    return Table(header=header, rows=rows,
                 caption=f"{scope}: label flips (% of pairs, n) by the original's property (paper Sec. 6 iii, Fig. 7)",
                 notes="Bins: fifths of the 0-100 scale of Tables 3-4 (the last includes 100).")


def performance_table(found: dict) -> Table:
    """Paper Fig. 5: ΔF1 and flip rate against the model's macro-F1 on the task's original texts."""
    models = found["spread"]["models"] > 1
    rows = [[*([c["model"]] if models else []), c["task"], c["strategy"], fmt(c["original_f1"], 1),
             fmt(c["delta_f1"], 2, signed=True), fmt(c["flip_rate"], 1)] for c in found["cells"]]
    return Table(header=[*(["Model"] if models else []), "Task", "Strategy", "macro-F1 original", "ΔF1", "flips %"],
                 rows=rows, caption="ΔF1 and label flips against the macro-F1 on the original texts (paper Sec. 5 iv, "
                                    "Fig. 5)", notes=performance_note(found))


def performance_note(found: dict) -> str:
    """Fig. 5's Spearman ρ, or why it is undefined: one task of one model has one original F1."""
    if found["spread"]["original_f1_values"] < 2:
        return ("Spearman ρ against the original F1: undefined, as the original F1 is one value within one task of "
                "one model; Sec. 5 iv relates the changes to performance across tasks and models (run several "
                "tasks, or several models: consistency.json).")

    def rho(entry: dict) -> str:
        return f"ρ = {fmt(entry['rho'], 2)}, p = {format_p(entry['p'])}"

    return (f"Spearman over the {len(found['cells'])} cells ({found['spread']['tasks']} tasks, "
            f"{found['spread']['models']} model(s)): ΔF1 against the original F1 {rho(found['delta_f1'])}; flips "
            f"against it {rho(found['flip_rate'])}.")


def task_table(found: dict) -> Table:
    """Paper App. A.4, Table 5: each task's data, its length in words, Flesch score, size, labels and the
    train-test KL divergence of the labels."""
    def spread(entry: dict) -> str:
        return MISSING if entry["mean"] is None else f"{fmt(entry['mean'], 1)} ± {fmt(entry['sd'], 1)}"

    rows = [[task, ", ".join(f"{split} {s['n']:,}" for split, s in e["splits"].items()), spread(e["length"]),
             spread(e["flesch"]), f"{e['n']:,}", ", ".join(f"{label}: {n:,}" for label, n in e["labels"].items()),
             fmt(e["kl"], 2)] for task, e in found.items()]
    return Table(header=["Task", "Splits read", "Length (words)", "Flesch", "# Samples", "Labels", "KL div."],
                 rows=rows, caption="The task data (paper App. A.4, Table 5)",
                 notes="Over the splits read (train and dev where the data has them, test: the Lou file's originals); "
                       "length in whitespace words, Flesch: Amstad's German formula, mean ± SD; KL div.: KL(train ‖ "
                       "test) of the label distributions in nats (– without a train split).")


def cluster_table(found: dict) -> Table:
    """Paper Sec. 6 i: per layer, how well KMeans on r = s - s' recovers the strategies."""
    rows = [[str(entry["layer"]), *[fmt(entry[name], 3) for name in SCORES]] for entry in found["layers"]]
    rho = [f"{SCORES[name]} ρ = {fmt(c['rho'], 2)} (p {format_p(c['p'])})" for name, c in found["correlation"].items()]
    return Table(header=["Layer", *SCORES.values()], rows=rows,
                 caption=f"Clusters of the reformulation embeddings per layer (paper Sec. 6 i; {found['n']} "
                         f"reformulations, k = {found['k']} strategies)",
                 notes="r = s - s', each the mean over tokens of a layer's hidden states (layer 0: the embeddings); "
                       "KMeans (k-means++, 10 seeded restarts) per layer. Spearman against the layer number: "
                       + "; ".join(rho) + " (the paper: -0.40, -0.56, -0.55, -0.54 over its LMs).")


def added_tokens_table(added: dict, tokenizer: str) -> Table:
    """Paper Table 6: tokens a strategy adds, per task and averaged over tasks."""
    strategies = list(added["by_strategy"])

    def row(name, values, average):
        return [name, *[fmt(values.get(s), 1) for s in strategies], fmt(average, 1)]

    def mean(values):
        return sum(values) / len(values) if values else None

    return Table(header=["Task", *strategies, "Average"],
                 rows=[row(task, values, mean(list(values.values()))) for task, values in added["by_task"].items()],
                 summary_rows=[row("all tasks", added["by_strategy"], added["average"])],
                 caption=f"Tokens added by each reformulation in {tokenizer} (paper App. A.5, Table 6)",
                 notes="Mean over instances of tokens(reformulation) − tokens(original), a reformulation identical to "
                       "its original counting 0 added tokens; 'all tasks': the mean over tasks.")


def classifier_plot(summary: dict, path: Path) -> Path:
    """ΔF1, flip rate and Δcertainty per strategy, one colour per task (the paper's Figures 3-4)."""
    strategies = [s for s in next(iter(summary["tasks"].values())) if s != ORIGINAL]
    panels = [("delta_f1", "Δ macro-F1 (points)", "ci_delta_f1"),
              ("flip_rate", "label flips (% of instances)", "ci_flip_rate"),
              ("delta_certainty", "Δ certainty (mean max-softmax)", None)]
    return hbar_panels(strategies, list(summary["tasks"].items()), panels,
                       f"Lou, {summary['meta']['model']['spec']}: reformulated against original test instances", path)


def consistency_markdown(document: dict) -> str:
    """Agreement of several classifiers: strategy rankings (pairwise) and model rankings (per strategy)."""
    lines = ["# Lou, ranking consistency across classifiers", ""]
    for task, entry in document["tasks"].items():
        pairs = [[f"{p['a']} vs {p['b']}", fmt(p["rho"], 2), format_p(p["p"])] for p in entry["strategy_rankings"]]
        lines += [to_markdown(Table(["Models", "Spearman ρ", "p"], pairs,
                                    caption=f"{task}: strategies ranked by ΔF1")), ""]
        models = [[s, fmt(r["rho"], 2), format_p(r["p"])] for s, r in entry["model_rankings"].items()]
        lines += [to_markdown(Table(["Strategy", "Spearman ρ", "p"], models,
                                    caption=f"{task}: models ranked by F1, original vs. reformulated")), ""]
    if "performance" in document:
        lines += [to_markdown(performance_table(document["performance"])), ""]
    correlation = document.get("f1_flip_correlation")
    if correlation is not None:
        lines += [f"ΔF1 and flip rate over every model × task × strategy cell ({correlation['n']}; paper Sec. 5 iv, "
                  f"ρ = 0.47): Spearman ρ = {fmt(correlation['rho'], 2)}, p = {format_p(correlation['p'])}.", ""]
    lines.append("ρ is undefined (–) for constant scores or fewer than three items; p: exact permutation test up "
                 "to 8 items, else scipy's spearmanr. Model rankings need several models to be informative.")
    return "\n".join(lines) + "\n"


# -- shared ----------------------------------------------------------------------------

def _scope(summary: dict, scope: str) -> dict:
    return summary[POOLED] if scope == POOLED else summary["tasks"][scope]


def _with_ci(value, ci, digits: int, signed: bool = False) -> str:
    if value is None:
        return MISSING
    return f"{fmt(value, digits, signed=signed)} [{fmt(ci[0], digits)}, {fmt(ci[1], digits)}]"


def data_line(meta: dict) -> str:
    return "Lou files: " + ", ".join(f"{t['task']} `{t['checksum'][:12]}` (n={t['n']})"
                                     for t in meta["data"]["tasks"]) + f"; {meta['data']['licence']}"
