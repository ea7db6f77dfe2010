"""Pairs that target several groups (issue 46; Morch & Braun, Appendix C.2: 387 survey pairs, 902 labels):
read in every layout that has a group column, kept through a run's pairs.csv, counted in each of their
groups in every per-group figure and once in Overall, and a set whose pairs have one group each keeps
its checksum and its figures."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd
import pytest

from queerbias.errors import DataError
from queerbias.pairs.io import read_pairs
from queerbias.pairs.schema import Pair, PairSet, content_checksum
from queerbias.report.options import CompareOptions
from queerbias.suites import rows as suite_rows
from queerbias.suites.pairs.declaration import PAIR_COLUMNS, PairSettings
from queerbias.suites.pairs.indifference import gap_change
from queerbias.suites.pairs.multilabel import group_rows
from queerbias.suites.pairs.suite import PairsSuite
from report.score_dirs import with_scores

LAYOUTS = {
    "winoqueer": "Gender_ID_x,Gender_ID_y,sent_x,sent_y\n\"Lesbian; Non-binary\",Straight,A ist x.,B ist x.\n"
                 "Gay,Straight,C ist y.,D ist y.\n",
    "crows-pairs": "sent_more,sent_less,stereo_antistereo,bias_type\nA ist x.,B ist x.,stereo,\"lesbian, nonbinary\"\n"
                   "C ist y.,D ist y.,stereo,gay\n",
    "queerbias": "sent_more,sent_less,group,other_groups\nA ist x.,B ist x.,lesbian,nonbinary\nC ist y.,D ist y.,gay,\n",
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_every_layout_with_a_group_column_reads_several_groups(layout, tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text(LAYOUTS[layout], encoding="utf-8")
    first, second = read_pairs(path).pairs
    assert (first.group, first.other_groups, first.groups) == ("lesbian", ("nonbinary",), ("lesbian", "nonbinary"))
    assert (second.group, second.other_groups) == ("gay", ())
    assert read_pairs(path).groups() == ["lesbian", "nonbinary", "gay"]


def test_labels_that_name_one_group_twice_count_it_once(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text("Gender_ID_x,Gender_ID_y,sent_x,sent_y\n\"Trans; Transgender, NB\",Cis,A ist x.,B ist x.\n",
                    encoding="utf-8")
    assert read_pairs(path).pairs[0].groups == ("transgender", "nonbinary")


def test_a_set_of_single_group_pairs_keeps_its_checksum():
    """other_groups enters a pair's checksum only where it is set, as frame and the other annotations do."""
    pair = Pair("1", "A ist x.", "B ist x.", "gay", "straight")
    record = {"pair_id": "1", "sent_more": "A ist x.", "sent_less": "B ist x.", "group": "gay",
              "counterfactual_group": "straight", "category": "", "direction": "stereo"}
    before = "sha256:" + hashlib.sha256((json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
                                        .encode("utf-8")).hexdigest()
    assert content_checksum([pair]) == before
    assert content_checksum([Pair("1", "A ist x.", "B ist x.", "gay", "straight", other_groups=("trans",))]) != before


@pytest.mark.parametrize(("others", "message"), [
    (("gay",), "a group is named twice among gay, gay"),
    (("trans; lesbian",), "holds one of ; ,, which separate a pair's groups"),
    (["trans"], "other_groups must be a tuple of non-empty labels"),
    (("",), "other_groups must be a tuple of non-empty labels"),
])
def test_a_pair_built_in_python_is_checked_as_the_reader_checks_it(others, message):
    with pytest.raises(DataError, match=message):
        PairSet("mine", [Pair("1", "A ist x.", "B ist x.", "gay", other_groups=others)])


def _scored(groups: list[tuple[str, str]], more: list[float]) -> pd.DataFrame:
    rows = [{"pair_id": str(i), "group": group, "other_groups": others, "counterfactual_group": "cis",
             "category": "", "direction": "stereo", "sent_more": f"q {i}.", "sent_less": f"c {i}."}
            for i, (group, others) in enumerate(groups)]
    return suite_rows.frame(suite_rows.records(with_scores(pd.DataFrame(rows), more, [-10.0] * len(rows))),
                            PAIR_COLUMNS)


#: pair 0 targets lesbian and nonbinary, pair 2 nonbinary, trans and gay
GROUPS = [("lesbian", "nonbinary"), ("gay", ""), ("nonbinary", "transgender;gay"), ("lesbian", "")]
BEFORE = _scored(GROUPS, [-9.0, -11.0, -8.0, -10.5])
AFTER = _scored(GROUPS, [-10.5, -10.2, -9.9, -10.1])


def test_per_group_figures_count_a_pair_in_each_of_its_groups_and_overall_once():
    summary = PairsSuite().summarise(BEFORE, PairSettings())
    assert {g: (f["n"], f["bias_score"]) for g, f in summary["groups"].items()} == {
        "gay": (2, 50.0), "lesbian": (2, 50.0), "transgender": (1, 100.0), "nonbinary": (2, 100.0)}
    assert (summary["overall"]["n"], summary["overall"]["bias_score"]) == (4, 50.0)
    assert summary["group_labels"]["labels"] == 7 and summary["group_labels"]["multi_label_pairs"] == 2
    assert summary["pair_gap"]["overall"]["n"] == 4 and summary["pair_gap"]["groups"]["nonbinary"]["n"] == 2
    assert summary["pair_gap"]["overall"]["mean_abs_d"] == pytest.approx(np.mean([1.0, 1.0, 2.0, 0.5]))
    cells = {(cell.scope, cell.name): cell for cell in PairsSuite().paired_cells(BEFORE, AFTER, PairSettings())}
    assert len(cells[("overall", "overall")].values["bias"][0]) == 4
    assert list(cells[("groups", "nonbinary")].values["soft"][1]) == list(AFTER["soft"].iloc[[0, 2]])


def test_the_comparisons_pair_gap_counts_each_pair_once():
    """Over groups each labelled row is in its group's stratum; weighted 1/k, the figures over pairs are
    the pairs' own means."""
    labelled_before, labelled_after = group_rows(BEFORE), group_rows(AFTER)
    aligned = pd.DataFrame({"group": labelled_before["group"], "weight": labelled_before["weight"],
                            "d_before": labelled_before["score_more"] - labelled_before["score_less"],
                            "d_after": labelled_after["score_more"] - labelled_after["score_less"]})
    gap = gap_change(aligned, 0.693, np.random.default_rng(0), 200)
    d_before = (BEFORE["score_more"] - BEFORE["score_less"]).abs()
    d_after = (AFTER["score_more"] - AFTER["score_less"]).abs()
    assert gap["n"] == 4 and gap["abs_d_before"] == pytest.approx(d_before.mean())
    assert gap["abs_d_after"] == pytest.approx(d_after.mean())
    assert gap["below_margin_before"] == pytest.approx(100 * (d_before < 0.693).mean())
    extras = PairsSuite().extras(BEFORE, AFTER, CompareOptions(resamples=200, seed=0), PairSettings())
    assert extras["pair_gap"]["abs_d_before"] == pytest.approx(d_before.mean())
    assert extras["distance"]["n_groups"] == 4 and set(extras["direction"]["groups"]) == {
        "gay", "lesbian", "transgender", "nonbinary"}
    single = BEFORE.assign(other_groups="")
    assert group_rows(single) is single  # one group a pair: the rows themselves, the paper's figures exact
