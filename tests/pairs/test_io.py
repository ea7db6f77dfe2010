import json
from pathlib import Path

import pytest

from queerbias.errors import DataError
from queerbias.pairs.io import normalise_text, read_pairs

WQ_HEADER = "Gender_ID_x,Gender_ID_y,sent_x,sent_y\n"
REPO = Path(__file__).resolve().parents[2]


def write(tmp_path, name, text, mode="w"):
    path = tmp_path / name
    if mode == "wb":
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_winoqueer_layout_csv(tmp_path):
    path = write(tmp_path, "wq.csv", WQ_HEADER + "Gay,Straight,Schwule  Männer sind krank., Heteros sind krank.\n")
    pairs = read_pairs(path)
    (pair,) = pairs.pairs
    assert pair.sent_more == "Schwule Männer sind krank." and pair.sent_less == "Heteros sind krank."
    assert pair.group == "gay" and pair.direction == "stereo" and pair.source_row == 2
    assert pairs.meta["layout"] == "winoqueer" and pairs.checksum.startswith("sha256:")


def test_crows_layout_tsv_and_jsonl_agree(tmp_path):
    rows = [{"sent_more": "A b c.", "sent_less": "A d c.", "stereo_antistereo": "antistereo",
             "bias_type": "Lesbian"}]
    tsv = write(tmp_path, "p.tsv", "sent_more\tsent_less\tstereo_antistereo\tbias_type\n"
                "A b c.\tA d c.\tantistereo\tLesbian\n")
    jsonl = write(tmp_path, "p.jsonl", "\n".join(json.dumps(r) for r in rows) + "\n")
    a, b = read_pairs(tsv), read_pairs(jsonl)
    assert a.pairs[0].direction == "antistereo" and a.pairs[0].aligned_order == ("A d c.", "A b c.")
    assert a.checksum == b.checksum


def test_nfc_and_umlauts_are_kept():
    decomposed = "Mu\u0308ller  hei\u00dft   Stra\u00dfe "
    assert normalise_text(decomposed) == "Müller heißt Straße"


@pytest.mark.parametrize("content, row, field, needle", [
    ("a,b\n1,2\n", 1, None, "missing columns"),
    (WQ_HEADER + "Gay,Straight,,Heteros sind krank.\n", 2, "sent_x", "empty"),
    (WQ_HEADER + "Gay,Straight,Gleich.,Gleich.\n", 2, "sent_x/sent_y", "identical"),
    (WQ_HEADER + "Gay,Straight,A.,B.\nGay,Straight,A.,B.\n", 3, None, "duplicate of row 2"),
])
def test_errors_name_file_row_field(tmp_path, content, row, field, needle):
    path = write(tmp_path, "bad.csv", content)
    with pytest.raises(DataError) as info:
        read_pairs(path)
    err = info.value
    assert err.path == str(path) and err.row == row and err.field == field
    assert needle in str(err) and str(path) in str(err)


def test_duplicate_pair_id_is_named(tmp_path):
    path = write(tmp_path, "ids.jsonl", '{"pair_id": "x", "sent_x": "A.", "sent_y": "B.", "Gender_ID_x": "Gay"}\n'
                 '{"pair_id": "x", "sent_x": "C.", "sent_y": "D.", "Gender_ID_x": "Gay"}\n')
    with pytest.raises(DataError, match="row 2, field 'pair_id'"):
        read_pairs(path)
    assert len(read_pairs(path, duplicates="keep")) == 2
    assert len(read_pairs(path, duplicates="drop")) == 1


def test_undecodable_bytes_name_the_row(tmp_path):
    path = write(tmp_path, "latin1.csv", (WQ_HEADER + "Gay,Straight,Gr\xf6\xdfe A.,B.\n").encode("latin-1"), "wb")
    with pytest.raises(DataError, match="row 2.*not UTF-8"):
        read_pairs(path)


def test_bad_json_line(tmp_path):
    path = write(tmp_path, "x.jsonl", '{"sent_x": "A", "sent_y": "B", "Gender_ID_x": "Gay"}\n{oops\n')
    with pytest.raises(DataError, match="row 2: invalid JSON"):
        read_pairs(path)


def test_messy_winoqueer_v0_file(shared_data):
    path = shared_data / "winoqueer-v0" / "winoqueer_benchmark.csv"
    with pytest.raises(DataError, match="identical"):
        read_pairs(path)
    pairs = read_pairs(path, identical="keep")
    assert len(pairs) == 5872
    assert pairs.meta["identical_pairs"] == 2
    directions = {p.direction for p in pairs.pairs}
    assert directions == {"stereo", "antistereo"}  # " stereo" with its leading space normalised
    assert all(not p.sent_less.startswith(" ") for p in pairs.pairs)
    assert sum(p.direction == "antistereo" for p in pairs.pairs) == 210


ANNOTATED = "sent_more,sent_less,group,frame,predicate_kind,phrase_end\n"


def test_frame_predicate_kind_and_phrase_end_columns_are_read(tmp_path):
    path = write(tmp_path, "a.csv", ANNOTATED + "Schwule Männer sind krank.,Heteros sind krank.,gay,f1,stereotype,14\n"
                                                "Schwule Männer lesen gern.,Heteros lesen gern.,gay,f1,neutral,14\n"
                                                "Schwule Männer sind laut.,Heteros sind laut.,gay,,,\n")
    first, second, third = read_pairs(path).pairs
    assert (first.frame, first.predicate_kind, first.phrase_end) == ("f1", "stereotype", 14)
    assert first.sent_more[:first.phrase_end] == "Schwule Männer" and second.predicate_kind == "neutral"
    assert (third.frame, third.predicate_kind, third.phrase_end) == ("", "stereotype", None)


@pytest.mark.parametrize("row, field, message", [
    ("Schwule sind krank.,Heteros sind krank.,gay,f1,stereo,7", "predicate_kind", "must be one of stereotype, neutral"),
    ("Schwule sind krank.,Heteros sind krank.,gay,f1,neutral,99", "phrase_end", "character offset within"),
    ("Schwule sind krank.,Heteros sind krank.,gay,f1,neutral,7.5", "phrase_end", "character offset within"),
])
def test_a_bad_annotation_names_the_row_and_field(tmp_path, row, field, message):
    path = write(tmp_path, "bad.csv", ANNOTATED + row + "\n")
    with pytest.raises(DataError, match=f"row 2.*{field}.*{message}|{message}.*row 2.*{field}") as caught:
        read_pairs(path)
    assert str(path) in str(caught.value)


def test_a_neutral_predicate_needs_its_frame(tmp_path):
    path = write(tmp_path, "bad.csv", ANNOTATED + "Schwule lesen.,Heteros lesen.,gay,,neutral,\n")
    with pytest.raises(DataError, match="a neutral predicate needs its frame"):
        read_pairs(path)


def test_checksums_of_sets_without_annotations_are_those_recorded_before_them(tmp_path):
    """A pair's checksum record gained frame, predicate_kind and phrase_end only where they are set, so
    every earlier run's data checksum still matches its file."""
    import hashlib

    path = write(tmp_path, "wq.csv", WQ_HEADER + "Gay,Straight,Schwule Männer sind krank.,Heteros sind krank.\n")
    (pair,) = read_pairs(path).pairs
    old = {"pair_id": pair.pair_id, "sent_more": pair.sent_more, "sent_less": pair.sent_less, "group": "gay",
           "counterfactual_group": "straight", "category": "", "direction": "stereo"}
    digest = hashlib.sha256(json.dumps(old, ensure_ascii=False, sort_keys=True).encode("utf-8") + b"\n")
    assert read_pairs(path).checksum == "sha256:" + digest.hexdigest()


def test_the_documented_winoqueer_de_layout_reads_every_documented_label(tmp_path):
    """docs/scoring.md, "WinoQueer-DE": a file in its columns, one pair per group label of its table (English
    and German spellings, Gender_ID_x and Gender_ID_y), reads with each label mapped to the group the table names."""
    text = (REPO / "docs" / "scoring.md").read_text().split("### WinoQueer-DE")[1].split("**What is assumed.**")[0]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in text.splitlines()
            if line.startswith("| ") and not line.startswith(("| group", "| column"))]
    labels = {row[0].split(" (")[0]: [label.strip() for cell in row[1:] for label in cell.split(",")]
              for row in rows if len(row) == 3}
    assert set(labels) >= {"lgbtq", "queer", "transgender", "nonbinary", "gay", "lesbian", "straight", "cis"}
    lines = [",Gender_ID_x,Gender_ID_y,sent_x,sent_y"]
    expected = []
    for group, spellings in labels.items():
        counterfactual = group in ("straight", "cis")  # a label of Gender_ID_y
        for label in spellings:
            x, y = ("Gay", label) if counterfactual else (label, "Straight")
            lines.append(f'{len(expected)},"{x}","{y}",Satz {len(expected)} über sie.,Satz {len(expected)} über ihn.')
            expected.append(("gay", group) if counterfactual else (group, "straight"))
    pairs = read_pairs(write(tmp_path, "winoqueer_de.csv", "\n".join(lines) + "\n")).pairs
    assert [p.pair_id for p in pairs] == [str(i) for i in range(len(expected))]
    assert [(p.group, p.counterfactual_group) for p in pairs] == expected
    assert all(p.sent_more.endswith("über sie.") and p.direction == "stereo" for p in pairs)
