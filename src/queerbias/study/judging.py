"""Which run of a study to choose: the headline figure, never alone (issue 20).

What is judged on a benchmark is its suite's declaration (`Declaration.judged`): its
headline figure (the pair benchmark's distance to indifference), its excess figure (the
stereotype excess: a group flipped towards the stereotype lowers the distance but raises
this), its guard figure (the knowledge set's accuracy) and its harm figures (the groups a
frame-level sign test finds shifted towards the stereotype; those that crossed 50 are shown),
the same figures the training guard refuses a checkpoint on. A mitigation run passes when, in the mean over its seeds,
it raised no excess figure on any benchmark but the control sets and the test splits, lost no
more than a guard's allowance on each guard benchmark, raised general perplexity by at most
`general_perplexity_pct`, and on each `harm` benchmark (the validation shapes of
queerbias-de-shapes) the first harm figure named no group in any seed. Of the runs that pass, the one with the lowest mean headline figure on the
headline benchmark is chosen. Test splits (a declared test part, queerbias-de-shapes:test,
and any in `tests`) are shown and never judged: nothing is selected on them. The thresholds
are the study file's `judge` section; they judge, they do not change what any cell ran.
Nothing here names a suite or a figure: a new suite that declares its judged figures is
judged as the built-in ones are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from queerbias.errors import QueerbiasError
from queerbias.options import from_mapping, option
from queerbias.report.tables import fmt
from queerbias.suites.registry import get_declaration, list_declarations


@dataclass
class JudgeSettings:
    headline: str | None = option(None, "the benchmark whose headline figure (its suite's `judged.headline`, e.g. the "
                                        "distance to indifference) chooses among the runs that pass (default: the "
                                        "first benchmark with one)")
    guards: dict = option(help="benchmark name -> the most its guard figure (its suite's `judged.guard`, e.g. "
                               "accuracy points) may fall, mean over seeds", factory=dict)
    general_perplexity_pct: float | None = option(5.0, "the most general perplexity may rise, percent of base, "
                                                       "mean over seeds (null: not judged)", ge=0)
    excess: bool = option(True, "fail a run whose excess figure (e.g. the stereotype excess) rose on any benchmark "
                                "but the controls and the test splits")
    controls: list[str] = option(help="benchmarks that are control sets (the neutral mentions): shown, never "
                                      "judged by their excess figure, which they do not measure", factory=list)
    harm: list[str] = option(help="benchmarks (the validation frames) on which a run fails when a harm figure (its "
                                  "suite's first `judged.harm` figure: the groups shifted towards the stereotype) "
                                  "names a group in any seed", factory=list)
    tests: list[str] = option(help="benchmarks shown and never judged, as nothing may be selected on a test split "
                                   "(every benchmark on a declared test part is added: queerbias-de-shapes:test)",
                              factory=list)


def load_judge(raw, benchmarks: dict[str, str], tests: tuple[str, ...] = ()) -> JudgeSettings:
    """The study file's `judge` section, checked against the study's benchmarks (name -> suite): a
    guard reads its suite's guard figure, a harm benchmark its suite's harm figure, a control set is
    of a suite that allows one, the headline is a benchmark of a suite with a headline figure;
    `tests` (the benchmarks on a declared test part) join `judge.tests` and may judge nothing."""
    judge = from_mapping(JudgeSettings, raw or {}, "study key 'judge'")
    judged = {name: get_declaration(suite).judged for name, suite in benchmarks.items()}
    judge.tests = list(dict.fromkeys([*judge.tests, *tests]))
    for name in judge.tests:
        if name not in benchmarks:
            raise QueerbiasError(f"study key 'judge.tests' names {name!r}, which is no benchmark of the study")
    for key, names in (("headline", [judge.headline]), ("guards", list(judge.guards)), ("harm", judge.harm)):
        for name in names:
            if name in judge.tests:
                raise QueerbiasError(f"study key 'judge.{key}' names {name!r}, a test split: it is shown, never "
                                     "judged or selected on (judge with the validation part)")
    for name in judge.harm:
        if name not in judged or not judged[name].harm:
            raise QueerbiasError(f"study key 'judge.harm' names {name!r}, which is no benchmark of the study whose "
                                 f"suite declares a harm figure ({', '.join(n for n, j in judged.items() if j.harm) or 'none'})")
    for name, allowed in judge.guards.items():
        if name not in benchmarks:
            raise QueerbiasError(f"study key 'judge.guards.{name}' names no benchmark of the study "
                                 f"({', '.join(benchmarks)})")
        if judged[name].guard is None:
            own = [f.title for f in (judged[name].chosen(judged[name].headline), judged[name].chosen(judged[name].excess))
                   if f is not None]
            why = f"is judged by its figures ({', '.join(own)})" if own else "declares no guard figure"
            raise QueerbiasError(f"study key 'judge.guards.{name}': a {benchmarks[name]} benchmark {why}, not "
                                 f"guarded; guard a benchmark of a suite with a guard figure "
                                 f"({', '.join(d.name for d in list_declarations() if d.judged.guard)})")
        if isinstance(allowed, bool) or not isinstance(allowed, (int, float)) or not math.isfinite(allowed) \
                or allowed < 0:
            raise QueerbiasError(f"study key 'judge.guards.{name}' must be a number of at least 0, got {allowed!r}")
    for name in judge.controls:
        if name not in judged or not judged[name].control:
            raise QueerbiasError(f"study key 'judge.controls' names {name!r}, which is no benchmark of the study "
                                 f"whose suite has control sets ("
                                 f"{', '.join(n for n, j in judged.items() if j.control) or 'none'})")
    if judge.headline is not None and (judge.headline not in judged or judged[judge.headline].headline is None):
        raise QueerbiasError(f"study key 'judge.headline' must name a benchmark of the study with a headline figure "
                             f"({', '.join(n for n, j in judged.items() if j.headline) or 'none'}), "
                             f"got {judge.headline!r}")
    return judge


@dataclass(frozen=True)
class Verdict:
    """Why a run fails (empty: it passes every guard), why a run that passes did not meet the goal
    (`unmet`: its headline figure did not fall), and whether it is the one chosen."""

    failures: tuple[str, ...] = ()
    chosen: bool = False
    judged: bool = True  # False: a seed is missing, nothing is judged
    unmet: str = ""  # e.g. "raised bias: distance by 10.3%": passes every guard, yet no mitigation

    @property
    def text(self) -> str:
        if not self.judged:
            return "–"
        if self.failures:
            return "fails: " + "; ".join(self.failures)
        if self.unmet:
            return f"passes every guard, but {self.unmet}"
        return "passes, chosen" if self.chosen else "passes"

    @property
    def met(self) -> bool:
        """Passes every guard and lowered the headline figure: the goal, before the lowest is chosen."""
        return self.judged and not self.failures and not self.unmet


def verdicts(rows, columns, judge: JudgeSettings) -> dict[tuple[str, str], Verdict]:
    """(run, model) -> its verdict. A run that passes every guard meets the goal only where it lowered
    the headline figure (lower is better, `Judged.headline`); per model, of the runs that meet it, the one
    with the lowest headline figure is chosen, and where none does, none is: a run that made the
    headline worse is never chosen for passing its guards."""
    headline = headline_column(columns, judge.headline, judge.tests)
    found: dict[tuple[str, str], Verdict] = {}
    for row in rows:
        figures = [row.figures[c] for c in columns if not c.names]
        if row.missing or any(f is None for f in figures):
            found[(row.run, row.model)] = Verdict(judged=False)
            continue
        failures = tuple(_failures(row, columns, judge))
        lowered = headline is None or row.figures[headline].delta < 0
        found[(row.run, row.model)] = Verdict(failures, unmet="" if failures or lowered else
                                              change_phrase(headline, row.figures[headline]))
    for model in dict.fromkeys(row.model for row in rows):
        met = [row for row in rows if row.model == model and found[(row.run, model)].met]
        if met and headline is not None:
            best = min(met, key=lambda row: row.figures[headline].after)
            found[(best.run, model)] = Verdict(chosen=True)
    return found


def change_phrase(column, figure) -> str:
    """"lowered bias: distance by 11.6%", "raised ... by 10.3%", "left ... unchanged": a run's mean change
    of the headline figure over seeds (in points where a seed's before is 0)."""
    title = short_name(column)
    if figure.delta == 0:
        return f"left {title} unchanged"
    size = (f"{fmt(abs(figure.relative), 1)}%" if figure.relative is not None
            else f"{fmt(abs(figure.delta), column.digits)} points")
    return f"{'lowered' if figure.delta < 0 else 'raised'} {title} by {size}"


def better(column) -> str:
    """Which way a figure improves, for axis labels: "lower is better" for the headline, its details, the
    excess and the floor figure, "higher is better" for a guard's (`Judged`); "" for a figure not judged."""
    if column.roles & {"headline", "detail", "excess", "floor"}:
        return "lower is better"
    return "higher is better" if "guard" in column.roles else ""


def short_name(column) -> str:
    """"bias: distance": the benchmark and the figure's declared title."""
    return column.short or column.title


def _rule(columns, judge: JudgeSettings) -> str:
    """The judge's rule in words: which runs pass, and which of them is chosen."""
    headline = headline_column(columns, judge.headline, judge.tests)
    controls = f" (controls: {', '.join(judge.controls)})" if judge.controls else ""
    tests = f" (not judged, test splits: {', '.join(judge.tests)})" if judge.tests else ""
    harm = (f", where no group {' or '.join(_harm_titles(columns, judge))} on {', '.join(judge.harm)} in any seed"
            if judge.harm else "")
    excess = list(dict.fromkeys(_title(c) for c in columns if "excess" in c.roles)) if judge.excess else []
    rule = (f"of the runs that raised the {' or '.join(excess)} on no benchmark{controls}{tests}" if excess
            else f"of the runs{tests}")
    return rule + ((f"{harm}{', stayed within ' + _guard_text(judge) if judge.guards else ''}"
                    + (f" and raised general perplexity by at most {judge.general_perplexity_pct:g}%"
                       if judge.general_perplexity_pct is not None else ""))
                   + (f", the lowest mean {_title(headline)} on {headline.benchmark} ({headline.measure}), "
                      "if below the base's" if headline else ""))


def choice_line(rows, columns, judge: JudgeSettings, found: dict[tuple[str, str], Verdict]) -> str:
    """One sentence under the method table: what was chosen, by which rule, or that no run met the goal and
    why, run by run."""
    chosen = [f"{model}: {run}" for (run, model), v in found.items() if v.chosen]
    unjudged = [f"{model}/{run}" for (run, model), v in found.items() if not v.judged]
    missed = {row.model for row in rows} - {model for (_, model), v in found.items() if v.chosen}
    text = f"Chosen ({_rule(columns, judge)}): {', '.join(chosen)}." if chosen else \
        f"No run met the goal ({_rule(columns, judge)})."
    if chosen and missed:
        text += f" No run met the goal for {', '.join(sorted(missed))}."
    why = _why_unmet(rows, columns, judge, found, missed)
    return text + (f" {why}" if why else "") + (f" Not judged (seeds missing): {', '.join(unjudged)}." if unjudged
                                                else "")


def _why_unmet(rows, columns, judge: JudgeSettings, found, models: set[str]) -> str:
    """Per run of `models` (those for which no run met the goal), why it did not: "lm lowered bias: distance by
    11.6% but fails: knowledge accuracy -6.2 (allowed -5); equalise passes every guard, but raised ..."."""
    headline = headline_column(columns, judge.headline, judge.tests)
    reasons = []
    for row in rows:
        verdict = found[(row.run, row.model)]
        if row.model not in models or not verdict.judged:
            continue
        name = row.run if len({r.model for r in rows}) == 1 else f"{row.model}/{row.run}"
        if verdict.failures and headline is not None:
            reasons.append(f"{name} {change_phrase(headline, row.figures[headline])} but {verdict.text}")
        else:
            reasons.append(f"{name} {verdict.text}")
    return ("Why: " + "; ".join(reasons) + ".") if reasons else ""


def goal_lines(rows, columns, judge: JudgeSettings, found: dict[tuple[str, str], Verdict],
               random: list[str]) -> tuple[str, str, str]:
    """What the study page leads with: the goal, whether any run met it (per model) and why not, and
    which models have random weights, so that their figures are not read as findings."""
    headline = headline_column(columns, judge.headline, judge.tests)
    goal = (f"Goal: lower {short_name(headline)} (mean over seeds, base → final checkpoint; lower is better) with a "
            f"run that passes every guard: {_rule(columns, judge)}." if headline is not None else
            f"Goal: a run that passes every guard ({_rule(columns, judge)}); no benchmark has a headline figure to "
            "choose it by, so none is chosen.")
    models = list(dict.fromkeys(row.model for row in rows))
    met = {model: run for (run, model), v in found.items() if v.chosen}
    answers = []
    for model in models:
        who = f"{model}: " if len(models) > 1 else ""
        if model in met:
            row = next(r for r in rows if (r.run, r.model) == (met[model], model))
            answers.append(f"{who}{met[model]} {change_phrase(headline, row.figures[headline])} and passes every "
                           "guard (chosen)")
        else:
            answers.append(f"{who}no run met the goal")
    answer = ("No run met the goal." if not met else
              ("Met: " if len(met) == len(models) else "") + "; ".join(answers) + ".")
    why = _why_unmet(rows, columns, judge, found, set(models) - set(met))
    one = len(random) == 1
    noted = (f"Random weights: {', '.join(random)} {'has' if one else 'have'} random weights (built for tests and "
             f"smoke runs), so {'its' if one else 'their'} figures say nothing about bias and are no finding."
             if random else "")
    return goal, f"{answer} {why}".strip(), noted


def _guard_text(judge: JudgeSettings) -> str:
    return ", ".join(f"{allowed:g} of {name}" for name, allowed in judge.guards.items())


def headline_column(columns, name: str | None, tests=()):
    """The headline figure's column of the headline benchmark: `name`, else the first with one that is
    not a test split (`tests`)."""
    for column in columns:
        if "headline" in column.roles and name in (None, column.benchmark) and column.benchmark not in tests:
            return column
    return None


def harm_columns(columns, name: str) -> list:
    """The harm figures' columns (lists of names: the groups shifted towards the stereotype, those that crossed 50)
    of benchmark `name`; empty where it has none."""
    return [c for c in columns if c.benchmark == name and "harm" in c.roles and c.names]


def judged_harm_columns(columns, name: str) -> list:
    """The harm column that fails a run (the first declared harm figure: the groups shifted towards the stereotype);
    the others are shown."""
    return [c for c in harm_columns(columns, name) if "judged_harm" in c.roles]


def _harm_titles(columns, judge: JudgeSettings) -> list[str]:
    return list(dict.fromkeys(_title(c) for name in judge.harm for c in judged_harm_columns(columns, name)))


def guard_column(columns, name: str):
    """The guard figure's column of benchmark `name`, or None."""
    return next((c for c in columns if c.benchmark == name and "guard" in c.roles), None)


def _title(column) -> str:
    """The figure's declared title ("distance", "stereotype excess"), from the column's short title."""
    return column.short.partition(": ")[2] or column.title.partition(": ")[2]


def _failures(row, columns, judge: JudgeSettings) -> list[str]:
    failures = []
    if judge.excess:
        rose = {}
        for c in columns:
            if "excess" in c.roles and c.benchmark not in (*judge.controls, *judge.tests) and row.figures[c].delta > 0:
                rose.setdefault(_title(c), []).append(c.benchmark)
        failures += [f"{title} rose on {', '.join(names)}" for title, names in rose.items()]
    for name in judge.harm:
        harms = judged_harm_columns(columns, name)
        if not harms:
            failures.append(f"{name} not evaluated (its harm check cannot pass)")
        for harm in (h for h in harms if row.figures[h]):
            named = ", ".join(f"{group} ({count}/{row.seeds} seeds)" for group, count in sorted(
                row.figures[harm].items(), key=lambda item: (-item[1], item[0])))
            failures.append(f"{_title(harm)} on {name}: {named}")
    for name, allowed in judge.guards.items():
        first = guard_column(columns, name)
        if first is None:
            failures.append(f"{name} not evaluated (its guard cannot pass)")
        elif row.figures[first].delta < -allowed:
            failures.append(f"{name} {first.measure} {fmt(row.figures[first].delta, 1, signed=True)} "
                            f"(allowed -{allowed:g})")
    general = row.general_perplexity
    if judge.general_perplexity_pct is not None and general is not None and general.relative is not None \
            and general.relative > judge.general_perplexity_pct:
        failures.append(f"general perplexity {fmt(general.relative, 1, signed=True)}% "
                        f"(allowed +{judge.general_perplexity_pct:g}%)")
    return failures
