"""The Python API: score, run, load and compare from a notebook, with the CLI's numbers.

Each function is a thin layer over what the commands run: `run_suite` (and `score`, the
pair suite) evaluates through the run store (`suites.store.evaluate_run` in memory,
`run_to_dir` with `out=`), `compare` through the one comparator (`report.compare`), and
`load_run` is the store's. So the API, the CLI and the files read back give the same
numbers, and results are the store's `RunRecord` and a `Comparison` view of the delta
document, not a second results model. Reference: docs/api.md.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

import pandas as pd

from queerbias.comparison import delta_plots
from queerbias.comparison.compare import compare_runs, write_outputs
from queerbias.comparison.delta_tables import delta_rows, render_delta_tables
from queerbias.comparison.runs import benchmark_folders, check_labels, unique_defaults
from queerbias.errors import QueerbiasError
from queerbias.options import from_mapping, to_dict
from queerbias.report import plots
from queerbias.report.options import CompareOptions
from queerbias.study.run import run_study
from queerbias.suites import registry
from queerbias.suites.paths import checked_out, slug
from queerbias.suites.protocol import Suite
from queerbias.suites.store import RunRecord, evaluate_run, load_run, run_to_dir

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from queerbias.models.loading import LoadedModel
    from queerbias.pairs.schema import PairSet
    from queerbias.study.report_folder import StudyReport

__all__ = ["Comparison", "RunRecord", "ScoreRun", "compare", "list_suites", "load_run", "run_suite", "score", "study"]

#: what `score` returns: the run record every suite's runs share
ScoreRun = RunRecord

#: a model spec (Hub id, folder, adapter folder, embedded:...), a loaded model, or (model, tokenizer)
ModelLike = Union[str, os.PathLike, "LoadedModel", tuple[Any, Any]]
#: options that load a model from its spec; settings are the suite's own
LOAD_OPTIONS = ("kind", "force_kind", "dtype", "device", "trust_remote_code", "allow_pickle_weights", "lang")
RUN_OPTIONS = "out, label, overwrite, progress"


def score(model: ModelLike, pairs: str | os.PathLike | PairSet, *, out: str | os.PathLike | None = None,
          label: str | None = None, overwrite: bool = False, progress: bool = True, **options) -> ScoreRun:
    """Score `model` on sentence pairs with the WinoQueer method (= `queerbias score`).

    `pairs`: a registered benchmark name (`queerbias benchmarks`), a CSV/TSV/JSONL pair file
    or a `PairSet`. `options`: the pair suite's settings (sample, seed, scope, reduction,
    pll, bos, lowercase, decimals, duplicates, identical, layout, unscorable, batch_size, chunk_pairs) and, for a
    spec, the loading options (kind, dtype, device, trust_remote_code, allow_pickle_weights), and `lang`
    (models with language embeddings: the language passed as `langs`; default the set's language).
    `out=None` evaluates in memory and writes nothing; a folder gets pairs.csv, summary.md,
    summary.png and summary.json, and resumes there after an interruption.
    """
    _refuse_empty("score", model=model, pairs=pairs)
    return _run(registry.DEFAULT_SUITE, "score", model, pairs, out, label, overwrite, progress, options)


def run_suite(suite: str, model: ModelLike, data: Any = None, *, out: str | os.PathLike | None = None,
              label: str | None = None, overwrite: bool = False, progress: bool = True, **settings) -> RunRecord:
    """Evaluate `model` on a registered suite (= `queerbias run SUITE`; `list_suites()` names them).

    `data`: the suite's data spec (None: its default), as `--data` takes it. `settings`: the
    suite's settings by field name (`list_suites()` shows them with their defaults) and the
    loading options of `score`. `out` as in `score`.
    """
    _refuse_empty(f"run_suite({suite!r})", model=model, data=data)
    return _run(suite, f"run_suite({suite!r})", model, data, out, label, overwrite, progress, settings)


def _refuse_empty(where: str, **arguments) -> None:
    """An empty spec is no name and no path (argparse refuses it on the command line)."""
    for argument, value in arguments.items():
        if isinstance(value, (str, os.PathLike)) and not os.fspath(value).strip():
            raise QueerbiasError(f"{where}: {argument} is empty; give a name or a path")


def _run(name: str, where: str, model, data, out, label, overwrite: bool, progress: bool, options: dict) -> RunRecord:
    """Options checked and the output folder too, before any model loads; then the store runs."""
    suite = registry.get_suite(name)
    settings, load_options = _options(suite, options, where)
    out = None if out is None else checked_out(out, (model, data))  # paths, or objects read from them
    model = _model(suite, model, load_options, where)
    data = os.fspath(data) if isinstance(data, os.PathLike) else data
    if out is None:
        label = label or slug(model if isinstance(model, str) else model.spec)
        return evaluate_run(suite, model, data, settings, label=label, progress=progress, **load_options)
    run_to_dir(suite, model, data, out, settings, overwrite=overwrite, progress=progress, **load_options)
    return load_run(out, label)


def _options(suite: Suite, options: dict, where: str) -> tuple[Any, dict]:
    """The suite's typed settings and the loading options; an unknown option is refused by name."""
    names = [f.name for f in fields(suite.Settings)]
    unknown = sorted(set(options) - set(names) - set(LOAD_OPTIONS))
    if unknown:
        raise QueerbiasError(f"{where}: unknown option {unknown[0]!r}; options are the {suite.name} settings "
                             f"({', '.join(names)}), the loading options ({', '.join(LOAD_OPTIONS)}) and "
                             f"{RUN_OPTIONS}")
    settings = from_mapping(suite.Settings, {k: v for k, v in options.items() if k in names}, where)
    return settings, {k: v for k, v in options.items() if k in LOAD_OPTIONS}


def _model(suite: Suite, model, load_options: dict, where: str):
    """A spec as text (the store loads it); a (model, tokenizer) pair as a LoadedModel."""
    if isinstance(model, (str, os.PathLike)):
        return os.fspath(model)
    pair = isinstance(model, tuple) and len(model) == 2
    ignored = sorted(set(load_options) - ({"kind"} if pair else set()) - {"lang"})  # lang is the run's
    if ignored:
        raise QueerbiasError(f"{where}: {ignored[0]} applies when the model is loaded from a spec; "
                             "this model is already loaded")
    if pair:
        if type(suite).load_model is not Suite.load_model:
            raise QueerbiasError(f"{where}: {suite.name} evaluates its own kind of model; give a spec")
        from queerbias.models.loading import caller_model  # torch: the caller loaded it, a run needs none

        return caller_model(*model, kind=load_options.get("kind"))
    if not (hasattr(model, "fingerprint") and hasattr(model, "describe")):
        raise QueerbiasError(f"{where}: model must be a spec, a LoadedModel or a (model, tokenizer) pair, "
                             f"not {type(model).__name__}")
    return model


def list_suites() -> pd.DataFrame:
    """The registered suites (= `queerbias suites`): one row each with its description, default
    data, licence and settings (every option `run_suite` takes, with its default)."""
    rows = {suite.name: {"description": suite.description, "data": suite.data_default, "licence": suite.licence,
                         "settings": to_dict(suite.Settings())} for suite in registry.list_declarations()}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("suite")


# -- comparing ----------------------------------------------------------------------

@dataclass(repr=False)
class Comparison:
    """Paired before/after tests of runs of one suite (= `queerbias compare`).

    `delta` is the delta.json document; `table`, `to_markdown()`, `forest()` and `levels()`
    are the delta.csv, delta.md, forest.png and levels.png views of it. `path` is None
    unless written.
    """

    delta: dict
    path: Path | None = None

    @property
    def table(self) -> pd.DataFrame:
        """One row per comparison and entry (overall, each group or other cell): delta.csv, with
        NaN where a statistic is undefined."""
        header, rows = delta_rows(self.delta)
        return pd.DataFrame([[float("nan") if value is None else value for value in row] for row in rows],
                            columns=header)

    def to_markdown(self) -> str:
        """delta.md: the main table, details per comparison and scope, the suite's extras."""
        return render_delta_tables(self.delta)["md"]

    _repr_markdown_ = to_markdown

    def forest(self, ax: Axes | None = None, measure: str | None = None) -> Figure:
        """The forest plot of the changes with their intervals (filled marker: adjusted p < .05).

        Without `ax`, a new figure with a panel per measure (or only `measure`), as forest.png;
        with `ax`, `measure` (default: the first, e.g. the bias score) drawn on it. Returns the figure.
        """
        labels, series, panels, title, ylabel = delta_plots.forest_parts(self.delta)
        if measure is not None:
            panels = [panel for panel in panels if panel[0] == f"delta_{measure}"]
            if not panels:
                known = ", ".join(m["name"] for m in self.delta["measures"])
                raise QueerbiasError(f"forest: no measure {measure!r} in this comparison; measures: {known}")
        if ax is None:
            return delta_plots.highlighted(plots.forest_figure(labels, series, panels, title, ylabel), labels,
                                           delta_plots.entries(self.delta))
        plots.forest_panel(ax, labels, series, panels[0])
        plots.forest_rows(ax, labels, ylabel)
        ax.legend(fontsize="small")
        return ax.figure

    def levels(self) -> Figure:
        """Each group before and after the last comparison, beside the reference level (pairs:
        50 = no preference), as levels.png: where a mitigation moved each group."""
        fig = delta_plots.levels_figure(self.delta)
        if fig is None:
            raise QueerbiasError(f"levels: no measure of suite {self.delta['suite']!r} has a reference level")
        return fig

    def __repr__(self) -> str:
        afters = [c["after"]["label"] for c in self.delta["comparisons"]]
        return (f"Comparison(suite={self.delta['suite']!r}, before={self.delta['comparisons'][0]['before']['label']!r}, "
                f"after={afters!r}, path={self.path!r})")


def compare(before: RunRecord | str | os.PathLike, after: RunRecord | str | os.PathLike | list, *,
            out: str | os.PathLike | None = None, soft_test: str = "wilcoxon", correction: str = "holm",
            resamples: int = 10_000, seed: int | None = 0, best: str | None = None, ppl_margin: float = 5.0
            ) -> Comparison:
    """Compare BEFORE with each AFTER run (objects or run folders) of the same suite and items; a
    training checkpoint's folder stands for its run of the benchmark compared (`runs.benchmark_folders`).

    Options as `queerbias compare`: `soft_test` (wilcoxon or ttest) for continuous measures,
    `correction` (holm or bh) across the entries of a scope, bootstrap `resamples` and `seed`,
    and for checkpoints `best` (the suite's criterion) with `ppl_margin` (percent). `out`
    also writes delta.json/.md/.csv/.tex and the plots there.
    """
    options = from_mapping(CompareOptions, {"soft_test": soft_test, "correction": correction, "resamples": resamples,
                                            "seed": seed, "best": best, "ppl_margin": ppl_margin}, "compare")
    afters = list(after) if isinstance(after, (list, tuple)) else [after]
    given = (before, *afters)
    for run in given:
        if not isinstance(run, (RunRecord, str, os.PathLike)):
            raise QueerbiasError(f"compare: a run is a RunRecord or a run folder, not {type(run).__name__}")
    folders = iter(benchmark_folders([Path(run) for run in given if not isinstance(run, RunRecord)]))
    records = [run if isinstance(run, RunRecord) else load_run(next(folders)) for run in given]
    runs = check_labels(unique_defaults(records, [not isinstance(run, RunRecord) for run in given]),
                        "give them labels: load_run(path, label=...) or score(..., label=...)")
    out = None if out is None else checked_out(out, [run.path for run in runs])
    document = compare_runs(runs[0], runs[1:], options)
    if out is not None:
        write_outputs(document, out)
    return Comparison(document, out)


# -- studies ------------------------------------------------------------------------

def study(config: str | os.PathLike, *, jobs: int = 1, force: bool = False,
          out: str | os.PathLike | None = None) -> StudyReport:
    """Run or resume a study file (= `queerbias study --config FILE`; docs/study.md): every model ×
    training run × seed as a training run in its own process, then STUDY/report/. Returns where the
    report is (`path`, `index`, `methods`), whether it is `complete` and what is `missing`."""
    return run_study(config, jobs=jobs, force=force, out=out)
