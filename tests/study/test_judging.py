"""Which run a study chooses: the distance among the runs that pass every guard (issue 20)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from queerbias.errors import QueerbiasError
from queerbias.study.aggregate import Column, MethodRow, OverSeeds
from queerbias.study.figures import chosen_title
from queerbias.study.judging import JudgeSettings, better, choice_line, goal_lines, load_judge, verdicts
from queerbias.suites.protocol import OVERALL

DISTANCE = Column("bias", "distance", "bias", "bias: distance (bias)", roles=frozenset({"headline"}),
                  short="bias: distance", suite="pairs")
EXCESS = Column("bias", "direction", "excess", "bias: direction (excess)", roles=frozenset({"excess", "detail"}),
                short="bias: stereotype excess", suite="pairs")
OOD_EXCESS = Column("ood", "direction", "excess", "ood: direction (excess)", roles=frozenset({"excess", "detail"}),
                    short="ood: stereotype excess", suite="pairs")
KNOWLEDGE = Column("knowledge", OVERALL, "accuracy", "knowledge: overall accuracy", roles=frozenset({"guard"}),
                   suite="knowledge")
CROSSED = Column("bias", "direction", "crossed", "bias: direction (crossed)", names=True, roles=frozenset({"harm"}),
                 short="bias: crossed 50 towards the stereotype", suite="pairs")
HARMFUL = Column("bias", "direction", "harmful", "bias: direction (harmful)", names=True, roles=frozenset({"harm"}),
                 short="bias: harmful", suite="pairs")
SHIFTED = Column("bias", "shift", "shifted", "bias: shift (shifted)", names=True,
                 roles=frozenset({"harm", "judged_harm"}), short="bias: shifted towards the stereotype",
                 suite="pairs")
COLUMNS = [DISTANCE, EXCESS, OOD_EXCESS, KNOWLEDGE, SHIFTED, CROSSED, HARMFUL]


def _row(run, distance, excess, ood_excess, knowledge, ppl, missing=()):
    def over(before, after):
        return OverSeeds.of([before] * 3, [after] * 3)
    return MethodRow(run, "m", {DISTANCE: over(30.0, distance), EXCESS: over(10.0, excess),
                                OOD_EXCESS: over(5.0, ood_excess), KNOWLEDGE: over(60.0, knowledge),
                                SHIFTED: {"gay": 2}, CROSSED: {"gay": 2}, HARMFUL: {}},
                     None, over(30.0, ppl), 1.0, [30], list(missing), 3)


ROWS = [_row("lowest-but-flips", 8.0, 11.0, 4.0, 59.0, 30.5),     # excess rose on bias
        _row("forgets", 9.0, 4.0, 4.0, 54.0, 30.5),              # knowledge -6 > 5
        _row("damages-german", 10.0, 4.0, 4.0, 59.0, 32.0),       # general perplexity +6.7%
        _row("good", 14.0, 4.0, 4.5, 57.0, 31.0),
        _row("also-good", 16.0, 2.0, 3.0, 60.0, 30.0),
        _row("unfinished", 1.0, 0.0, 0.0, 60.0, 30.0, missing=["m/unfinished/seed-2"])]


def test_the_lowest_distance_among_runs_that_pass_every_guard_is_chosen():
    judge = JudgeSettings(guards={"knowledge": 5.0})
    found = verdicts(ROWS, COLUMNS, judge)
    texts = {run: found[(run, "m")].text for run in (r.run for r in ROWS)}
    assert texts == {"lowest-but-flips": "fails: stereotype excess rose on bias",
                     "forgets": "fails: knowledge accuracy -6.0 (allowed -5)",
                     "damages-german": "fails: general perplexity +6.7% (allowed +5%)",
                     "good": "passes, chosen", "also-good": "passes", "unfinished": "–"}
    line = choice_line(ROWS, COLUMNS, judge, found)
    assert line.startswith("Chosen (of the runs that raised the stereotype excess on no benchmark, stayed "
                           "within 5 of knowledge and raised general perplexity by at most 5%, the lowest mean "
                           "distance on bias (bias), if below the base's): m: good.")
    assert line.endswith("Not judged (seeds missing): m/unfinished.")


def test_looser_judges_choose_otherwise_and_none_may_pass():
    assert verdicts(ROWS, COLUMNS, JudgeSettings(excess=False))[("lowest-but-flips", "m")].chosen
    wide = verdicts(ROWS, COLUMNS, JudgeSettings(guards={"knowledge": 7.0}))
    assert wide[("forgets", "m")].chosen and wide[("good", "m")].text == "passes"
    strict = JudgeSettings(guards={"knowledge": 0.5}, general_perplexity_pct=0.0)
    assert [run for (run, _), v in verdicts(ROWS, COLUMNS, strict).items() if v.chosen] == ["also-good"]
    rest = [r for r in ROWS if r.run != "also-good"]
    none = verdicts(rest, COLUMNS, strict)
    assert not any(v.chosen for v in none.values())
    assert choice_line(rest, COLUMNS, strict, none).startswith("No run met the goal (of the runs that raised ")
    controlled = verdicts(ROWS, COLUMNS, JudgeSettings(controls=["bias"]))  # a control set is not judged by excess
    assert controlled[("lowest-but-flips", "m")].chosen
    assert "on no benchmark (controls: bias)" in choice_line(ROWS, COLUMNS, JudgeSettings(controls=["bias"]),
                                                               controlled)
    both = verdicts([_row("x", 5.0, 11.0, 6.0, 50.0, 40.0)], COLUMNS, JudgeSettings(guards={"knowledge": 5.0}))
    assert both[("x", "m")].text == ("fails: stereotype excess rose on bias, ood; knowledge accuracy -10.0 (allowed "
                                     "-5); general perplexity +33.3% (allowed +5%)")


@pytest.mark.parametrize(("raw", "message"), [
    ({"guards": {"nope": 5.0}}, "study key 'judge.guards.nope' names no benchmark of the study (bias, knowledge)"),
    ({"guards": {"bias": 5.0}}, "study key 'judge.guards.bias': a pairs benchmark is judged by its figures"),
    ({"guards": {"knowledge": -1}}, "study key 'judge.guards.knowledge' must be a number of at least 0, got -1"),
    ({"guards": {"knowledge": "five"}}, "must be a number of at least 0, got 'five'"),
    ({"headline": "knowledge"}, "study key 'judge.headline' must name a benchmark of the study with a headline "
                                "figure (bias), got 'knowledge'"),
    ({"general_perplexity_pct": -2}, "judge"),
    ({"controls": ["knowledge"]}, "study key 'judge.controls' names 'knowledge', which is no benchmark of the study "
                                  "whose suite has control sets (bias)"),
    ({"surprise": 1}, "judge"),
])
def test_a_bad_judge_section_is_one_error_naming_its_key(raw, message):
    with pytest.raises(QueerbiasError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_judge(raw, {"bias": "pairs", "knowledge": "knowledge"})


def test_harm_benchmarks_fail_a_run_that_shifted_a_group_in_any_seed_and_tests_judge_nothing():
    """The validation shapes (`harm`): a group shifted towards the stereotype by the frame-level test in one
    seed fails the run; a test split's excess is shown, never judged, and it cannot be the headline."""
    judge = load_judge({"harm": ["bias"]}, {"bias": "pairs", "ood": "pairs", "knowledge": "knowledge"}, ("ood",))
    assert judge.tests == ["ood"]
    found = verdicts(ROWS, COLUMNS, judge)
    assert found[("good", "m")].text == "fails: shifted towards the stereotype on bias: gay (2/3 seeds)"
    clean = [_row("clean", 14.0, 4.0, 9.0, 57.0, 31.0)]
    clean[0].figures[SHIFTED] = {}
    assert verdicts(clean, COLUMNS, judge)[("clean", "m")].chosen  # ood's excess rose: a test split, not judged
    assert not verdicts(clean, COLUMNS, JudgeSettings())[("clean", "m")].chosen
    line = choice_line(clean, COLUMNS, judge, verdicts(clean, COLUMNS, judge))
    assert ("(not judged, test splits: ood), where no group shifted towards the stereotype on bias in any seed"
            in line)
    for raw in ({"headline": "ood"}, {"harm": ["ood"]}):
        with pytest.raises(QueerbiasError, match="a test split: it is shown, never judged"):
            load_judge(raw, {"bias": "pairs", "ood": "pairs"}, ("ood",))
    with pytest.raises(QueerbiasError, match="judge.harm' names 'knowledge', which is no benchmark of the study whose suite declares a harm figure \\(bias\\)"):
        load_judge({"harm": ["knowledge"]}, {"bias": "pairs", "knowledge": "knowledge"})


def test_a_group_that_crossed_50_or_was_harmed_is_shown_and_fails_nothing_by_itself():
    """A crossing or a harm by the binary score is descriptive (issue 52): with a few dozen pairs a group, an
    indifferent model crosses by chance; only the frame-level shift test fails a run, as it refuses a checkpoint."""
    judge = load_judge({"harm": ["bias"]}, {"bias": "pairs", "knowledge": "knowledge"})
    [row] = [_row("harms", 14.0, 4.0, 4.0, 57.0, 31.0)]
    row.figures[SHIFTED], row.figures[CROSSED], row.figures[HARMFUL] = {}, {"gay": 3}, {"bisexual": 1}
    assert verdicts([row], COLUMNS, judge)[("harms", "m")].chosen
    row.figures[SHIFTED] = {"bisexual": 1}
    assert verdicts([row], COLUMNS, judge)[("harms", "m")].text == \
        "fails: shifted towards the stereotype on bias: bisexual (1/3 seeds)"


def test_a_run_that_passes_every_guard_but_made_the_headline_worse_is_never_chosen():
    """Issue 51: the smoke study crowned `equalise`, which raised the distance by 10.3%, because `lm`, which
    lowered it by 11.6%, failed the knowledge guard. Chosen is only ever a run that passes every guard and
    lowered the headline; otherwise the page leads with "no run met the goal" and why, run by run."""
    judge = JudgeSettings(guards={"knowledge": 5.0})
    rows = [_row("lm", 30.0 * 0.884, 4.0, 4.0, 53.8, 30.5), _row("equalise", 30.0 * 1.103, 4.0, 4.0, 59.0, 30.5)]
    for row in rows:
        row.figures[SHIFTED] = {}
    found = verdicts(rows, COLUMNS, judge)
    assert not any(v.chosen or v.met for v in found.values())
    assert found[("equalise", "m")].text == "passes every guard, but raised bias: distance by 10.3%"
    assert found[("lm", "m")].text == "fails: knowledge accuracy -6.2 (allowed -5)"
    why = ("Why: lm lowered bias: distance by 11.6% but fails: knowledge accuracy -6.2 (allowed -5); equalise "
           "passes every guard, but raised bias: distance by 10.3%.")
    assert choice_line(rows, COLUMNS, judge, found).endswith(f"if below the base's). {why}")
    goal, answer, random = goal_lines(rows, COLUMNS, judge, found, ["m"])
    assert goal.startswith("Goal: lower bias: distance (mean over seeds, base → final checkpoint; lower is better) "
                           "with a run that passes every guard: of the runs that raised the stereotype excess on no "
                           "benchmark, stayed within 5 of knowledge")
    assert answer == f"No run met the goal. {why}"
    assert random == ("Random weights: m has random weights (built for tests and smoke runs), so its figures say "
                      "nothing about bias and are no finding.")
    assert chosen_title(found, ["m"]) == "No run met the goal"
    # the same run, having lowered the distance, is chosen; and a second model where none did is named
    rows.append(_row("good", 20.0, 4.0, 4.0, 59.0, 30.5))
    rows[-1].figures[SHIFTED] = {}
    rows += [replace(row, model="other") for row in rows[:2]]
    found = verdicts(rows, COLUMNS, judge)
    assert [key for key, v in found.items() if v.chosen] == [("good", "m")]
    _, answer, random = goal_lines(rows, COLUMNS, judge, found, [])
    assert answer.startswith("m: good lowered bias: distance by 33.3% and passes every guard (chosen); other: no run "
                             "met the goal. Why: other/lm lowered bias: distance by 11.6% but fails: ")
    assert random == "" and chosen_title(found, ["m", "other"]) == "Chosen: m: good; other: no run met the goal"


def test_axes_say_which_way_a_judged_figure_improves():
    assert [better(c) for c in (DISTANCE, EXCESS, KNOWLEDGE, CROSSED)] == [
        "lower is better", "lower is better", "higher is better", ""]
