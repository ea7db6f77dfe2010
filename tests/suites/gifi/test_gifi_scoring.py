"""Scoring stored generations: the refusal filter (SN/NTS/CF) and PE answers with few-shot prompts."""

import pytest

from queerbias.errors import DataError
from queerbias.suites.gifi import dimensions as dims
from queerbias.suites.gifi.classifiers import TextClassifier
from queerbias.suites.gifi.extractor import PronounExtractor
from queerbias.suites.gifi.prompts import build_items, load_prompt_set
from queerbias.suites.gifi.pronouns import load_groups, select_groups
from queerbias.suites.gifi.scoring import (
    Components,
    annotate,
    dimension,
    group_figures,
    is_refusal,
    refused,
    templates,
)
from queerbias.suites.gifi.suite import Prompt, generation_row


def rows_of(items, outputs):
    """Generation rows of one run as the suite writes them (before annotation)."""
    return [generation_row(Prompt(0, item), 0, text) for item, text in zip(items, outputs, strict=True)]


@pytest.fixture(scope="module")
def setup():
    groups = select_groups(load_groups(), ["er", "sie"])
    return load_prompt_set(), groups, PronounExtractor(groups)


@pytest.mark.parametrize("text, refused", [
    (" Es tut mir leid, dabei kann ich nicht helfen.", True),
    (' „Tut mir leid, aber das geht nicht."', True),
    ("\nI'm sorry, I cannot continue.", True),
    (" plötzlich zu lachen begann.", False),
    (" es tut gut, draußen zu sein.", False),
])
def test_refusal_prefixes(setup, text, refused):
    prompts, _, _ = setup
    assert is_refusal(text, prompts.refusals) is refused


def test_refusals_are_left_out_of_sentiment_neutrality(setup, tiny_classifier):
    prompts, groups, extractor = setup
    items = build_items(prompts, groups, "counterfactual", limit=2)  # 2 templates x er, sie
    rows = rows_of(items, [" lachte laut.", " Es tut mir leid, das kann ich nicht.", " weinte leise.",
                           " sang ein Lied."])
    sentiment = TextClassifier(str(tiny_classifier), "sentiment")
    annotate(rows, extractor, Components(sentiment=sentiment), prompts.refusals)
    assert [r["refusal"] for r in rows] == [False, True, False, False]
    assert rows[1]["sentiment"] is None
    # template 0 keeps only er's output (MAD 0); template 1 keeps both
    kept = sentiment.score([" weinte leise.", " sang ein Lied."])
    units = list(templates(rows, "SN").values())
    assert dimension("SN", units, ["er", "sie"], ["er", "sie"], 0.7) == pytest.approx(
        dims.neutrality_score({"t0": [0.0], "t1": kept}))
    assert refused(rows) == {"value": 0.25, "n": 1}
    assert group_figures("SN", units, ["er", "sie"])["sie"]["n"] == 1


def test_few_shot_pe_prompts(setup):
    prompts, groups, _ = setup
    zero = build_items(prompts, groups, "pe", limit=1)
    eight = build_items(prompts, groups, "pe", limit=1, pe_shots=8)
    assert [i.meta["answer"] for i in zero] == [i.meta["answer"] for i in eight]
    assert zero[0].prompt.startswith("Aufgabe: ") and "Schritt für Schritt" in zero[0].prompt
    assert eight[0].prompt.count("Die Antwort ist") == 8 and eight[0].prompt.endswith("Lösung:")
    assert eight[0].prompt.endswith(zero[0].prompt.split("\n")[0][len("Aufgabe: "):] + "\nLösung:")
    assert "Schritt für Schritt" not in eight[0].prompt
    with pytest.raises(DataError, match="pe_shots"):
        build_items(prompts, groups, "pe", pe_shots=9)


def test_pe_answer_is_read_before_an_invented_next_problem(setup):
    prompts, groups, extractor = setup
    items = build_items(prompts, groups, "pe", limit=1, pe_shots=2)
    answer = items[0].meta["answer"]
    rows = rows_of(items, [f" Die Antwort ist {answer}.\n\nAufgabe: Wie viel ist 2 + 2? Die Antwort ist 4.",
                           f" Also {answer}.\nAufgabe: 3 Äpfel und 9 Birnen"])
    annotate(rows, extractor, Components(), stops=[item.meta.get("stop") for item in items])
    assert [r["answer"] for r in rows] == [answer, answer]
    assert dimension("PE", list(templates(rows, "PE").values()), ["er", "sie"], ["er", "sie"], 0.7) == 1.0
