"""Generation: counts follow the paper's formulas, samples are balanced, seeded and stable."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest

from queerbias.errors import DataError
from queerbias.suites.gruff.forms import SYSTEMS
from queerbias.suites.gruff.generation import (
    SETTINGS,
    GenerationConfig,
    closed_form_count,
    count_instances,
    enumerate_setting,
    generate,
    n_distractors,
    unrank_permutation,
)
from queerbias.suites.gruff.templates import load_templates
from tiny_data import CONTEXTS, TASKS, write_templates

# the shared templates: 240 task templates, 5 context templates per case and polarity
PAPER_COUNTS = {"none": 960, "d0": 9_600, "d1": 115_200, "d2": 460_800, "d3": 1_382_400,
                "d4": 2_764_800, "d5": 2_764_800}


def test_paper_counts_on_the_published_templates(shared_templates):
    assert len(shared_templates.tasks) == 240 and len(shared_templates.contexts) == 40
    for setting, expected in PAPER_COUNTS.items():
        assert count_instances(shared_templates, setting) == expected
        assert closed_form_count(240, 5, setting) == expected


def test_balanced_sample_sizes_and_cells_match_the_paper(shared_templates):
    items = generate(shared_templates, GenerationConfig())
    sizes = Counter(item.setting for item in items)
    assert sizes == {"none": 960, **{s: 2_880 for s in SETTINGS[1:]}}
    d0 = Counter((i.occupation, i.case, i.target) for i in items if i.setting == "d0")
    assert len(d0) == 60 * 4 * 4 and set(d0.values()) == {3}
    d3 = Counter((i.occupation, i.case, i.target, i.distractor) for i in items if i.setting == "d3")
    assert len(d3) == 60 * 4 * 4 * 3 and set(d3.values()) == {1}
    assert len({(i.setting, i.item_id) for i in items}) == len(items)


def _brute_force(setting: str) -> int:
    """Count the tiny fixture's instances by plain loops over the paper's rules."""
    d = n_distractors(setting)
    contexts = [dict(zip(CONTEXTS[0], row), row=n) for n, row in enumerate(CONTEXTS[1:], start=1)]
    total = 0
    for task in TASKS[1:]:
        case_contexts = [c for c in contexts if c["pronoun_type"] == task[3]]
        if d is None:
            total += len(SYSTEMS)
            continue
        for i in case_contexts:
            if d == 0:
                total += len(SYSTEMS)
                continue
            for j in case_contexts:
                same_content = (case_contexts.index(j) % 3) == (case_contexts.index(i) % 3)
                if j["polarity"] == i["polarity"] or same_content:
                    continue
                rest = [k for k in case_contexts if k["polarity"] == j["polarity"] and k is not j]
                orders = sum(1 for _ in itertools.permutations(rest, d - 1))
                total += orders * len(SYSTEMS) * (len(SYSTEMS) - 1)
    return total


@pytest.mark.parametrize("setting", SETTINGS)
def test_tiny_counts_agree_with_loops_formula_and_enumeration(tiny_templates, setting):
    expected = _brute_force(setting)
    assert count_instances(tiny_templates, setting) == expected
    assert closed_form_count(4, 3, setting) == expected
    items = list(enumerate_setting(tiny_templates, setting))
    assert len(items) == expected and len({i.item_id for i in items}) == expected


def test_tiny_counts_by_hand(tiny_templates):
    # T=4 tasks, C=6 contexts per case, m=3, S=4: d1 = 4*6*2*4*3, d2 = d1*2, d3 = d1*2, d4 = 0
    assert [count_instances(tiny_templates, s) for s in SETTINGS] == [16, 96, 576, 1152, 1152, 0, 0]


def test_distractor_structure(tiny_templates):
    for item in enumerate_setting(tiny_templates, "d3"):
        assert item.distractor_system != item.system and item.distractor != item.target
        assert len(item.context) == 1 + 3
        intro, second, *implicit = item.context
        assert len(set(implicit)) == len(implicit)  # each implicit template at most once
        negated = ["nicht" in sentence for sentence in (second, *implicit)]
        assert len(set(negated)) == 1  # implicit sentences share the participant intro's polarity
        assert ("nicht" in intro) != negated[0]  # the two introductions differ in polarity


def test_unrank_permutation_matches_itertools():
    items = ("a", "b", "c", "d", "e")
    for length in range(5):
        expected = list(itertools.permutations(items, length))
        assert [unrank_permutation(r, items, length) for r in range(math.perm(5, length))] == expected


def test_sampling_is_seeded_and_n_spreads_over_cells(tiny_templates):
    config = GenerationConfig(settings=("d1", "d2"), n=24, seed=3)
    first, again = generate(tiny_templates, config), generate(tiny_templates, config)
    assert [i.item_id for i in first] == [i.item_id for i in again]
    other = generate(tiny_templates, GenerationConfig(settings=("d1", "d2"), n=24, seed=4))
    assert [i.item_id for i in first] != [i.item_id for i in other]
    d1 = [i for i in first if i.setting == "d1"]
    assert len(d1) == 24
    cells = Counter((i.case, i.target, i.distractor) for i in d1)
    assert len(cells) == 24 and set(cells.values()) == {1}  # 2 cases x 12 ordered pronoun pairs


def test_small_n_covers_cases_and_pronoun_sets_evenly(shared_templates):
    items = generate(shared_templates, GenerationConfig(settings=("none", "d1", "d5"), n=32))
    for setting in ("none", "d1", "d5"):
        part = [i for i in items if i.setting == setting]
        assert len(part) == 32
        assert set(Counter(i.case for i in part).values()) == {8}
        assert set(Counter(i.target for i in part).values()) == {8}


def test_replicates_are_independent_draws(tiny_templates):
    items = generate(tiny_templates, GenerationConfig(settings=("d2",), replicates=2))
    by_replicate = [[i.item_id for i in items if i.replicate == r] for r in (0, 1)]
    assert len(by_replicate[0]) == len(by_replicate[1]) == 2 * 2 * 4 * 3
    assert by_replicate[0] != by_replicate[1]


def test_swapped_pairing_exchanges_neopronouns(tiny_templates):
    items = generate(tiny_templates, GenerationConfig(settings=("none",), pairing="swapped"))
    targets = {i.system: i.target for i in items}
    assert targets == {"masculine": "er", "feminine": "sie", "de_e": "xier", "sternchen": "en"}


def test_template_errors_name_file_row_and_field(tmp_path):
    bad = [list(row) for row in TASKS]
    bad[2][2] = "Heute räumte $ARTICLE_AND_OCCUPATION $POSS_PRONOUN Praxis auf."
    folder = write_templates(tmp_path / "bad", tasks=bad)
    with pytest.raises(DataError, match=r"task.tsv, row 2, field 'sentence'"):
        load_templates(folder)
    bad = [list(row) for row in TASKS]
    bad[1][3] = "$GEN_PRONOUN"
    with pytest.raises(DataError, match="unknown pronoun type"):
        load_templates(write_templates(tmp_path / "bad2", tasks=bad))
    contexts = [list(row) for row in CONTEXTS]
    contexts[3][3] = "Es war spät."
    with pytest.raises(DataError, match=r"context.tsv, row 3, field 'implicit_template'"):
        load_templates(write_templates(tmp_path / "bad3", contexts=contexts))


def test_checksum_changes_with_the_templates(tmp_path, tiny_templates):
    edited = [list(row) for row in TASKS]
    edited[1][2] = edited[1][2].replace("Hund", "Kater")
    other = load_templates(write_templates(tmp_path / "edited", tasks=edited))
    assert other.checksum != tiny_templates.checksum


def test_no_context_accepts_either_neopronoun_for_gender_neutral_nouns(tiny_templates):
    """Paper Sec. 6: de-e and Sternchen nouns can correctly take en or xier. A model that
    always answers xier is right for those two of the four noun systems: 50%, not 25%."""
    import numpy as np
    import pandas as pd

    from queerbias.suites.gruff.forms import PRONOUN_SETS
    from queerbias.suites.gruff.scoring import item_rows

    items = generate(tiny_templates, GenerationConfig(settings=("none", "d0")))
    accepted = {(i.setting, i.system): i.accepted for i in items}
    assert accepted[("none", "de_e")] == accepted[("none", "sternchen")] == ("en", "xier")
    assert accepted[("none", "masculine")] == ("er",) and accepted[("d0", "de_e")] == ("en",)
    always_xier = np.tile(np.eye(len(PRONOUN_SETS))[PRONOUN_SETS.index("xier")], (len(items), 1))
    frame = pd.DataFrame(item_rows(items, always_xier))
    none = frame[frame["setting"] == "none"]
    assert 100 * none["correct"].mean() == 50.0
    assert set(none.loc[none["correct"], "system"]) == {"de_e", "sternchen"}
    d0 = frame[frame["setting"] == "d0"]
    assert 100 * d0["correct"].mean() == 25.0  # with a context only the introduced xier counts
