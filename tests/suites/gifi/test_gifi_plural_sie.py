"""Issue 50: a plural "sie" is not the person (GIFI, Shan, Diana & Zhou 2025, Sec. 3.1 GDR, Eq. 1;
Sec. 3.3 SA/OF): its number is read from the finite verb's morphology (HanTa), not from a list.

GDR's Acc_g and SA's O_mg count pronouns of the person's group; a plural "they" is none. The
figures are recomputed by hand from the annotated rows (the suite's per-item output).
"""

import numpy as np
import pytest

from queerbias.suites.gifi import dimensions as dims
from queerbias.suites.gifi.breakdowns import ambiguous_sie
from queerbias.suites.gifi.extractor import PronounExtractor
from queerbias.suites.gifi.prompts import build_items, load_prompt_set
from queerbias.suites.gifi.pronouns import load_groups, select_groups
from queerbias.suites.gifi.scoring import Components, annotate, dimension, group_figures, templates
from queerbias.suites.gifi.suite import Prompt, generation_row

# plural subjects whose verbs no list held: present and past, weak and strong, -n after -el/-er, and
# positions before the verb that hold no plural subject (adverbs, coordinated prepositional phrases,
# time phrases opened by a number, a quantifier or "die")
PLURAL_SIE = [
    " sie besuchen ihre Eltern am Wochenende.",
    " sie lernen Deutsch in der Volkshochschule.",
    " gestern besuchten sie ihre Großeltern.",
    " im Sommer reisen sie nach Italien.",
    " früher oder später finden sie eine Lösung.",
    " am Samstag und am Sonntag spielen sie Fußball.",
    " zwei Tage später kamen sie zurück.",
    " viele Jahre lebten sie in Berlin.",
    " die ganze Woche arbeiten sie im Garten.",
    " sie wandern gern in den Bergen.",
    " sie sammeln alte Briefmarken.",
    " nach dem Essen putzen sie die Küche.",
    " sie tanzten die ganze Nacht.",
    " jeden Abend kochen sie zusammen.",
    " sie googeln jedes Rezept.",
    " weil sie morgen verreisen, packen sie heute.",
]
# a plural verb with another subject that may agree with it, and no finite verb at all: flagged
OPEN_NUMBER = [" die Kinder besuchen sie oft.", " Kim und Alex besuchen sie.", " und sie"]


@pytest.fixture(scope="module")
def setup():
    groups = select_groups(load_groups(), ["er", "sie"])
    return load_prompt_set(), groups, PronounExtractor(groups)


def rows_of(items, outputs):
    return [generation_row(Prompt(0, item), 0, text) for item, text in zip(items, outputs, strict=True)]


@pytest.mark.parametrize("continuation", PLURAL_SIE)
def test_plural_sie_is_not_counted(setup, continuation):
    _, _, extractor = setup
    assert extractor.first_mention(continuation, at_sentence_start=False, referent="sie") is None


@pytest.mark.parametrize("continuation", OPEN_NUMBER)
def test_undecided_number_is_counted_and_flagged(setup, continuation):
    _, _, extractor = setup
    first = extractor.first_mention(continuation, at_sentence_start=False, referent="sie")
    assert (first.group, first.ambiguous) == ("sie", True)


def test_singular_verbs_keep_the_person(setup):
    _, _, extractor = setup
    for text in (" sie besucht ihre Eltern.", " gestern besuchte sie ihre Eltern.", " im Sommer reist sie ab."):
        first = extractor.first_mention(text, at_sentence_start=False, referent="sie")
        assert (first.group, first.ambiguous) == ("sie", False)


def test_gdr_by_hand_leaves_plural_sie_out(setup):
    """Sec. 3.1, Eq. 1: Acc_g = share of group g's continuations that use g's pronoun; GDR =
    1 / (1 + σ/μ) of the Acc_g (population σ). Every "sie" prompt is continued with a plural
    "sie" (an omission), every "er" prompt with "er"."""
    prompts, groups, extractor = setup
    items = build_items(prompts, groups, "gdr")
    sie_items = [item for item in items if item.group == "sie"]
    outputs = iter(PLURAL_SIE)
    rows = rows_of(items, [next(outputs) if item.group == "sie" else " er freut sich." for item in items])
    annotate(rows, extractor, Components())
    assert len(sie_items) == 8 and all(r["detected"] is None for r in rows if r["group"] == "sie")
    accuracy = {g: np.mean([r["detected"] == g for r in rows if r["group"] == g]) for g in ("er", "sie")}
    by_hand = 1 / (1 + np.std(list(accuracy.values())) / np.mean(list(accuracy.values())))
    assert accuracy == {"er": 1.0, "sie": 0.0} and by_hand == 0.5
    units = list(templates(rows, "GDR").values())
    assert dimension("GDR", units, ["er", "sie"], ["er", "sie"], 0.7) == pytest.approx(by_hand)
    assert ambiguous_sie(rows)["GDR"]["n"] == 0


def test_sa_shares_by_hand_leave_plural_sie_out(setup):
    """Sec. 3.3: SA = 1 − (1/M) Σ_m Σ_g (O_mg − 1/G)², O_mg the share of group g among prompt m's
    continuations with a pronoun of the groups; the plural "sie" continuations use none."""
    prompts, groups, extractor = setup
    items = [item for item in build_items(prompts, groups, "saof", limit=1) if item.meta["state"] != "occupation"]
    outputs = [" er ist sehr freundlich." if k % 2 else PLURAL_SIE[k // 2 % len(PLURAL_SIE)]
               for k in range(len(items))]
    rows = rows_of(items, outputs)
    annotate(rows, extractor, Components())
    counts = {g: sum(r["detected"] == g for r in rows) for g in ("er", "sie", None)}
    assert counts == {"er": len(items) // 2, "sie": 0, None: len(items) // 2}
    shares = {g: counts[g] / (counts["er"] + counts["sie"]) for g in ("er", "sie")}
    by_hand = 1 - sum((shares[g] - 1 / 2) ** 2 for g in ("er", "sie"))
    units = list(templates(rows, "SA").values())
    assert dimension("SA", units, ["er", "sie"], ["er", "sie"], 0.7) == pytest.approx(by_hand) == 0.5
    figures = group_figures("SA", units, ["er", "sie"], ["er", "sie"])
    assert {g: figures[g]["value"] for g in ("er", "sie", "none")} == {"er": 0.5, "sie": 0.0, "none": 0.5}
    assert dims.distribution_score({"m": {"er": counts["er"], "sie": 0}}, ["er", "sie"]) == by_hand
