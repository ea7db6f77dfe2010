"""The taz2024full reader on hand-made month files (fixtures/taz) and generated variants."""

from __future__ import annotations

import gzip
import json
from datetime import date, datetime, timezone
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from queerbias.cli import main as cli_main
from queerbias.corpus.io import BadRecords
from queerbias.corpus.taz import TazReader, default_since_year
from queerbias.crawl.documents import Document
from queerbias.errors import DataError
from queerbias.fileio import iter_jsonl
from queerbias.text.keywords import KeywordMatcher

FIXTURES = Path(__file__).parent / "fixtures" / "taz"


def reader(since: int = 2019, until: int | None = None, skip_bad: bool = False) -> TazReader:
    return TazReader(KeywordMatcher(), since_year=since, until_year=until,
                     bad=BadRecords(skip=skip_bad))


def test_month_files_select_by_keyword_metadata_then_text():
    taz = reader()
    docs = {d.doc_id: d for d in taz.read([FIXTURES])}

    assert sorted(docs) == ["taz:5001", "taz:5002", "taz:5005"]
    assert docs["taz:5001"].provenance["matched_on"] == "metadata"
    assert docs["taz:5002"].provenance["matched_on"] == "text"  # "trans Menschen" in the text
    assert docs["taz:5002"].keywords == ["Trans"]
    assert docs["taz:5005"].published == "2023-06-30"  # DD.MM.YYYY understood
    assert docs["taz:5001"].url == "https://taz.de/!5001"
    assert docs["taz:5001"].provenance["archive_file"] == "2023-06.json"
    # "Transport"/"Internetwirtschaft" are not keywords; 5004 is dated 2015 inside a 2023 file;
    # 2016-01.json is skipped by its name without being parsed.
    assert taz.counts["no_keyword"] == 1
    assert taz.counts["out_of_years"] == 1
    assert taz.counts["files_skipped_by_name"] == 1


def test_default_years_are_the_last_six():
    assert default_since_year(date(2025, 3, 1)) == 2019
    old = reader(since=2010, until=2016)
    # 2023-06.json is skipped by its name, so its misfiled 2015 article is not seen.
    assert [d.doc_id for d in old.read([FIXTURES])] == ["taz:1601"]
    assert old.counts["files_skipped_by_name"] == 1


def test_parquet_and_gzipped_jsonl_with_other_field_names(tmp_path: Path):
    rows = [
        {"article_id": "p1", "Headline": "Pride", "Body": "Ein Bericht über nicht-binäre Menschen.",
         "published": datetime(2022, 7, 1, 10, tzinfo=timezone.utc), "tags": ["Gesellschaft"],
         "link": "https://taz.de/!p1"},
        {"article_id": "p2", "Headline": "Wetter", "Body": "Es regnet.",
         "published": datetime(2022, 7, 2, tzinfo=timezone.utc), "tags": ["Wetter"], "link": None},
    ]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "part-0.parquet")
    with gzip.open(tmp_path / "2024-01.jsonl.gz", "wt", encoding="utf-8") as handle:
        handle.write(json.dumps({"uid": 7, "content": "Queere Kunst im Museum.",
                                 "pubdate": 1704103200, "keyword": "Kultur|Queer"}) + "\n")

    docs = {d.doc_id: d for d in reader().read([tmp_path])}

    assert sorted(docs) == ["taz:7", "taz:p1"]
    assert docs["taz:p1"].title == "Pride" and docs["taz:p1"].published.startswith("2022-07-01T10")
    assert docs["taz:7"].provenance["archive_keywords"] == ["Kultur", "Queer"]
    assert docs["taz:7"].published.startswith("2024-01-01")


@pytest.mark.parametrize(("record", "field", "message"), [
    ({"text": "Queer", "keywords": []}, "date", "no publication date"),
    ({"text": "Queer", "date": "gestern"}, "date", "unrecognised date"),
    ({"body": "", "date": "2023-01-01"}, "text", "empty article text"),
    ({"text": "Queer", "date": "2023-01-01", "tags": {"a": 1}}, "tags", "list of strings"),
])
def test_unusable_record_names_file_row_and_field(tmp_path: Path, record, field, message):
    good = {"text": "Queere Kunst.", "date": "2023-01-01"}
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(record) + "\n", encoding="utf-8")

    with pytest.raises(DataError) as caught:
        list(reader().read([path]))

    assert (caught.value.path, caught.value.row, caught.value.field) == (str(path), 2, field)
    assert message in str(caught.value) and str(path) in str(caught.value)


def test_skip_bad_skips_and_counts(tmp_path: Path):
    path = tmp_path / "2023-05.jsonl"
    path.write_text('{"text": "Queere Kunst.", "date": "2023-05-01"}\n{not json\n'
                    '{"text": "Schwule Väter.", "date": "nie"}\n[1]\n', encoding="utf-8")
    taz = reader(skip_bad=True)

    docs = list(taz.read([path]))

    assert len(docs) == 1
    assert taz.bad.count == 3
    assert "row 2" in taz.bad.examples[0] and "field 'date'" in taz.bad.examples[1]


def test_cli_writes_documents_in_the_common_schema(tmp_path: Path, capsys):
    out = tmp_path / "taz.jsonl"

    assert cli_main(["corpus", "taz", str(FIXTURES), "-o", str(out), "--since-year", "2019"]) == 0

    docs = [Document.from_dict(record, out, row) for row, record in iter_jsonl(out)]
    assert [d.doc_id for d in docs] == ["taz:5001", "taz:5002", "taz:5005"]
    assert all(d.source == "taz" and d.kind == "article" and d.language == "de" for d in docs)
    assert "wrote 3 articles" in capsys.readouterr().out
    assert [p.name for p in tmp_path.iterdir()] == ["taz.jsonl"]  # no temp file left


def test_cli_reports_bad_archive_as_one_line(tmp_path: Path, capsys):
    path = tmp_path / "2023-01.json"
    path.write_text('{"articles": [{"text": "Queer", "date": "2023-01-01"}, {"text": "Queer"}]}',
                    encoding="utf-8")

    assert cli_main(["corpus", "taz", str(path), "-o", str(tmp_path / "o.jsonl")]) == 2

    err = capsys.readouterr().err
    assert f"{path}, row 2, field 'date': no publication date" in err
    assert not (tmp_path / "o.jsonl").exists()
