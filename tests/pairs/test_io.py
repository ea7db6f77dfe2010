import json

import pytest

from queerbias.errors import DataError
from queerbias.pairs.io import normalise_text, read_pairs

WQ_HEADER = "Gender_ID_x,Gender_ID_y,sent_x,sent_y\n"


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
