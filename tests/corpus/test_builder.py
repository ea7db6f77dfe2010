"""`corpus build`: merging, filters, split, atomic outputs, stats, datasheet and manifests."""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from queerbias import killpoint
from queerbias.cli import main as cli_main
from queerbias.corpus.builder import BuildConfig, CorpusBuilder, is_validation
from queerbias.corpus.manifest import load_manifest
from queerbias.corpus.sources import SourceSpec
from queerbias.errors import DataError

REPO = Path(__file__).resolve().parents[2]
VOCAB = ("der die das und ist nicht ein eine mit auf für von zu den im sich auch es wir sie "
         "haben werden wurde heute Menschen Stadt queere Gemeinschaft Rechte gleich Gesellschaft "
         "Leben Arbeit Familie Freunde Schule Abend Woche Jahr Politik Gesetz Schutz Vielfalt "
         "sichtbar gemeinsam wichtig lange Geschichte Zukunft").split()
POST = ("Heute waren wir beim CSD in Köln und haben mit vielen queeren Menschen gefeiert, "
        "es war ein wunderschöner Tag für uns alle.")
ARTICLE = ("Die Stadt hat beschlossen, queere Jugendzentren in den kommenden Jahren deutlich "
           "stärker zu fördern. Nach Angaben der Verwaltung sollen zwei neue Beratungsstellen "
           "entstehen, die sich an junge Menschen richten, die Diskriminierung in Schule, Familie "
           "oder Verein erleben. Initiativen begrüßten die Entscheidung, wiesen aber darauf hin, "
           "dass die Wartelisten schon heute lang sind und das Personal seit Jahren fehlt.")


def german(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(VOCAB) for _ in range(words))


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
                    encoding="utf-8")
    return path


def post(doc_id: str, text: str, account: str, language: str = "de") -> dict:
    """A posts.jsonl line of `crawl mastodon`: keyed pseudonyms, no uri, url or handle."""
    return {"doc_id": doc_id, "account": account, "created_at": "2024-05-01T12:00:00Z", "language": language,
            "text": text, "tags": ["queer"], "keywords": ["Queer"], "seen_on": ["a.example"]}


def article(doc_id: str, text: str, published: str) -> dict:
    return {"doc_id": doc_id, "source": "taz", "kind": "article", "text": text, "title": "T",
            "url": f"https://taz.de/!{doc_id}", "published": published, "language": "de",
            "keywords": ["Queer"], "provenance": {}}


@pytest.fixture
def inputs(tmp_path: Path) -> list[SourceSpec]:
    posts = write_jsonl(tmp_path / "posts.jsonl", [
        post("p1", POST, "acc-alice"),
        post("p2", POST.upper().replace(" ", "   "), "acc-bob"),
        post("p3", "Queer!", "acc-alice"),
        post("p4", "Today we celebrated pride with so many queer people, it was wonderful.", "acc-carl",
             language="en"),
        post("p5", POST + " Nochmal von mir.", "acc-optout"),
    ])
    near = ARTICLE.replace("deutlich", "erheblich")
    taz = write_jsonl(tmp_path / "taz.jsonl", [
        article("t1", ARTICLE, "2021-04-01"),
        article("t2", near, "2023-09-30"),
        article("t3", " ".join(ARTICLE.split()[:30]), "2022-01-01"),
    ])
    other = write_jsonl(tmp_path / "other.jsonl", [
        {"text": german(random.Random(1), 30)}])
    return [SourceSpec(posts), SourceSpec(taz, licence="taz licence text"),
            SourceSpec(other, name="misc")]


def config(tmp_path: Path, sources: list[SourceSpec], **overrides) -> BuildConfig:
    opt_out = tmp_path / "opt-out.txt"
    opt_out.write_text("# removal requests\np5\n", encoding="utf-8")
    # These posts files have no crawl state beside them; crawl freshness is tested in tests/crawl.
    settings = {"name": "test", "output_dir": tmp_path / "out", "sources": sources,
                "opt_out": opt_out, "validation_fraction": 0.3, "allow_stale": True, **overrides}
    return BuildConfig(**settings)


def read_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_build_filters_merges_and_counts(tmp_path: Path, inputs):
    stats = CorpusBuilder(config(tmp_path, inputs)).run()
    out = tmp_path / "out"

    rows = read_lines(out / "train.jsonl") + read_lines(out / "validation.jsonl")
    assert sorted((r["source"], r["doc_id"]) for r in rows if r["source"] != "misc") == [
        ("mastodon", "p1"), ("taz", "t1")]
    assert len(rows) == 3  # plus the generic text, under its source name
    assert all(set(r) == {"text", "source", "doc_id"} | ({"account"} if r["source"] == "mastodon" else set())
               for r in rows)
    assert {r["source"] for r in rows} == {"mastodon", "taz", "misc"}
    assert stats["dropped"] == {"opted_out": 1, "too_short": 2, "exact_duplicate": 1,
                                "not_german": 1, "near_duplicate": 1}
    assert stats["sources"]["mastodon"]["dropped"]["too_short"] == 1
    assert stats["sources"]["taz"]["dropped"]["near_duplicate"] == 1
    assert stats["sources"]["taz"]["first_published"] == "2021-04-01"
    words = sum(len(r["text"].split()) for r in rows)
    assert stats["totals"]["words"] == words == sum(s["words"] for s in stats["sources"].values())
    assert stats["totals"]["documents"] == 3
    assert stats["inputs"][1]["licence"] == "taz licence text"
    assert json.loads((out / "stats.json").read_text(encoding="utf-8")) == stats
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == [
        "datasheet.md", "stats.json", "train.jsonl", "validation.jsonl"]
    assert out.stat().st_mode & 0o777 == 0o700
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in out.iterdir())


def test_split_is_seeded_stable_and_independent_of_other_documents(tmp_path: Path):
    rng = random.Random(5)
    docs = [{"doc_id": f"d{i}", "text": german(rng, 40)} for i in range(400)]
    first = write_jsonl(tmp_path / "a.jsonl", docs[:300])
    rest = write_jsonl(tmp_path / "b.jsonl", docs[300:])

    def split_of(out: Path) -> dict[str, str]:
        return {r["doc_id"]: split for split in ("train", "validation")
                for r in read_lines(out / f"{split}.jsonl")}

    small = BuildConfig(name="s", output_dir=tmp_path / "s", sources=[SourceSpec(first)],
                        validation_fraction=0.2, seed=3)
    CorpusBuilder(small).run()
    again = split_of(tmp_path / "s")
    CorpusBuilder(small).run()
    assert split_of(tmp_path / "s") == again
    assert 40 <= list(again.values()).count("validation") <= 80  # 20 % of 300, give or take

    bigger = BuildConfig(name="b", output_dir=tmp_path / "b", validation_fraction=0.2, seed=3,
                         sources=[SourceSpec(first), SourceSpec(rest)])
    CorpusBuilder(bigger).run()
    grown = split_of(tmp_path / "b")
    assert {doc: grown[doc] for doc in again} == again

    with_seed = lambda seed: {doc for doc in again if is_validation(doc, seed, 0.2)}  # noqa: E731
    assert with_seed(3) == {doc for doc, split in again.items() if split == "validation"}
    assert with_seed(4) != with_seed(3)


def test_failed_build_keeps_previous_outputs(tmp_path: Path, inputs):
    CorpusBuilder(config(tmp_path, inputs)).run()
    out = tmp_path / "out"
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    broken = write_jsonl(tmp_path / "broken.jsonl", [{"text": german(random.Random(2), 30)},
                                                     {"title": "no text here"}])

    with pytest.raises(DataError, match=r"broken.jsonl, row 2, field 'text'"):
        CorpusBuilder(config(tmp_path, [*inputs, SourceSpec(broken)])).run()

    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # no temp files either

    stats = CorpusBuilder(config(tmp_path, [*inputs, SourceSpec(broken)], skip_bad=True)).run()
    assert stats["inputs"][-1]["bad_records"] == 1 and stats["totals"]["documents"] == 4


def test_killed_build_leaves_no_output_that_looks_complete(tmp_path: Path):
    rng = random.Random(9)
    source = write_jsonl(tmp_path / "many.jsonl",
                         [{"doc_id": f"d{i}", "text": german(rng, 80)} for i in range(6000)])
    out = tmp_path / "out"
    # the build kills itself after writing 500 documents to the split (queerbias.killpoint)
    process = subprocess.run(
        [sys.executable, "-m", "queerbias.cli", "corpus", "build", "--name", "k", "--source",
         str(source), "-o", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, killpoint.ENV: "document:500"})
    assert process.returncode == -signal.SIGKILL, "build finished before it could be killed"

    names = {p.name for p in out.iterdir()}
    assert not names & {"train.jsonl", "validation.jsonl", "stats.json", "datasheet.md"}
    assert any(name.startswith(".train.jsonl.") for name in names)  # only the temp file


def test_datasheet_follows_gebru_and_matches_stats(tmp_path: Path, inputs):
    stats = CorpusBuilder(config(tmp_path, inputs, maintainer="Team Q")).run()
    sheet = (tmp_path / "out" / "datasheet.md").read_text(encoding="utf-8")

    headings = [line[3:] for line in sheet.splitlines() if line.startswith("## ")]
    assert headings == ["Motivation", "Composition", "Collection process", "Preprocessing",
                        "Uses", "Distribution", "Maintenance"]
    assert f"{stats['totals']['documents']} documents, {stats['totals']['words']} words" in sheet
    assert "| taz | 1 | " in sheet and "2021-04-01" in sheet
    assert "| near_duplicate | 1 |" in sheet and "| opted_out | 1 |" in sheet
    assert "taz licence text" in sheet
    assert "Maintainer: Team Q." in sheet and "opt-out.txt`. 1 documents were dropped as opted out" in sheet


def test_shipped_manifest_describes_the_seed_corpus():
    cfg = load_manifest(REPO / "corpora" / "manifests" / "seed-mastodon-taz.yaml")

    assert cfg.name == "seed-mastodon-taz" and cfg.output_dir == Path("corpora/seed-mastodon-taz")
    assert [(s.name, s.format) for s in cfg.sources] == [("mastodon", "jsonl"), ("taz", "taz")]
    assert cfg.sources[1].options == {"since_year": 2019, "until_year": 2024}
    assert cfg.near_duplicate_threshold == 0.8 and cfg.validation_fraction == 0.05


def test_manifest_source_can_be_the_raw_taz_archive(tmp_path: Path):
    fixtures = Path(__file__).parent / "fixtures" / "taz"
    manifest = tmp_path / "m.yaml"
    manifest.write_text(
        f"name: raw\noutput_dir: {tmp_path / 'raw'}\nvalidation_fraction: 0\n"
        f"min_words: {{article: 5}}\nsources:\n"
        f"  - {{name: taz-archive, path: {fixtures}, format: taz, since_year: 2019}}\n",
        encoding="utf-8")

    stats = CorpusBuilder(load_manifest(manifest)).run()

    rows = read_lines(tmp_path / "raw" / "train.jsonl")
    assert sorted(r["doc_id"] for r in rows) == ["taz:5001", "taz:5002", "taz:5005"]
    assert {r["source"] for r in rows} == {"taz-archive"}
    assert stats["inputs"][0]["format"] == "taz"
    assert stats["sources"]["taz-archive"]["last_published"] == "2023-06-30"


def test_manifest_errors_name_the_key(tmp_path: Path):
    path = tmp_path / "m.yaml"
    path.write_text("name: x\nvalidation_fraktion: 0.1\nsources: [{path: a.jsonl}]\n")
    with pytest.raises(DataError, match=r"m.yaml, field 'validation_fraktion'"):
        load_manifest(path)
    path.write_text("name: x\nsources: [{path: a, format: taz, since: 2020}]\n")
    with pytest.raises(DataError, match=r"field 'sources\[1\].since'"):
        load_manifest(path)


def test_cli_builds_from_a_manifest_with_overrides(tmp_path: Path, inputs, capsys):
    manifest = tmp_path / "m.yaml"
    manifest.write_text(
        f"name: cli\noutput_dir: {tmp_path / 'cli'}\nsources:\n"
        + "".join(f"  - path: {spec.path}\n" for spec in inputs), encoding="utf-8")

    code = cli_main(["corpus", "build", "--manifest", str(manifest), "--validation-fraction",
                     "0", "--min-words", "article=10", "--allow-stale"])

    assert code == 0
    stats = json.loads((tmp_path / "cli" / "stats.json").read_text(encoding="utf-8"))
    assert stats["splits"]["validation"]["documents"] == 0
    assert stats["settings"]["min_words"]["article"] == 10
    assert stats["dropped"]["too_short"] == 1  # the 30-word article now passes
    assert "cli: " in capsys.readouterr().out


def test_output_folder_alone_names_the_corpus(tmp_path: Path, capsys):
    source = write_jsonl(tmp_path / "a.jsonl", [article("t1", ARTICLE, "2021-04-01")])
    assert cli_main(["corpus", "build", "--source", str(source), "-o", str(tmp_path / "my-corpus")]) == 0
    stats = json.loads((tmp_path / "my-corpus" / "stats.json").read_text(encoding="utf-8"))
    assert stats["name"] == "my-corpus" and capsys.readouterr().out.startswith("my-corpus: ")


def test_opt_out_urls_match_at_a_path_boundary_and_ignore_host_case(tmp_path: Path):
    docs = [article(f"t{i}", ARTICLE + f" Teil {i}.", "2021-04-01") | {"url": url}
            for i, url in enumerate(["https://taz.de/@alice/1", "https://taz.de/@alice2/2",
                                     "https://TAZ.de/@alice", "https://taz.de/@alice?x=1"])]
    source = write_jsonl(tmp_path / "taz.jsonl", docs)
    opt_out = tmp_path / "opt-out.txt"
    opt_out.write_text("HTTPS://Taz.DE/@alice\n", encoding="utf-8")
    stats = CorpusBuilder(BuildConfig(name="o", output_dir=tmp_path / "o", sources=[SourceSpec(source)],
                                      opt_out=opt_out, validation_fraction=0, near_duplicate_threshold=None)).run()
    assert stats["dropped"]["opted_out"] == 3
    assert [r["url"] if "url" in r else r["doc_id"] for r in read_lines(tmp_path / "o" / "train.jsonl")] == ["t1"]


def test_build_scrubs_personal_data_from_every_text(tmp_path: Path):
    text = ARTICLE + " Kontakt: presse@taz.de oder 030 2590 20 und @taz_news."
    source = write_jsonl(tmp_path / "a.jsonl", [article("t1", text, "2021-04-01")])
    CorpusBuilder(BuildConfig(name="s", output_dir=tmp_path / "s", sources=[SourceSpec(source)],
                              validation_fraction=0)).run()
    [row] = read_lines(tmp_path / "s" / "train.jsonl")
    assert row["text"].endswith("Kontakt: <email> oder <phone> und <user>.")


def test_mastodon_posts_without_their_crawl_state_are_refused(tmp_path: Path, capsys):
    posts = write_jsonl(tmp_path / "posts.jsonl", [post("p1", POST, "acc-alice")])
    args = ["corpus", "build", "--name", "x", "--source", str(posts), "-o", str(tmp_path / "x")]
    assert cli_main(args) == 2
    err = capsys.readouterr().err.splitlines()[-1]  # after the progress bar
    assert "no crawl state" in err and "--allow-stale" in err
    assert not (tmp_path / "x" / "stats.json").exists()
    assert cli_main([*args, "--allow-stale"]) == 0


def test_old_posts_that_name_their_authors_are_refused(tmp_path: Path, capsys):
    old = post("p1", POST, "acc") | {"uri": "https://a.example/users/alice/statuses/1"}
    source = write_jsonl(tmp_path / "posts.jsonl", [old])
    assert cli_main(["corpus", "build", "--name", "x", "--source", str(source), "-o", str(tmp_path / "x"),
                     "--allow-stale"]) == 2
    assert "older queerbias that names its author" in capsys.readouterr().err


@pytest.mark.parametrize("option", ["--opt-out"])
def test_fifo_file_arguments_are_refused_before_open(tmp_path: Path, capsys, option):
    import os
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    source = write_jsonl(tmp_path / "a.jsonl", [article("t1", ARTICLE, "2021-04-01")])
    args = ["corpus", "build", option, str(fifo)] + (
        [] if option == "--manifest" else ["--name", "x", "--source", str(source), "-o", str(tmp_path / "x")])
    assert cli_main(args) == 2  # would block forever in open() if the FIFO were opened
    assert "not a regular file" in capsys.readouterr().err


def test_the_shipped_manifests_build_says_what_to_create_first(tmp_path: Path, capsys):
    """The README's `corpus build --manifest corpora/manifests/seed-mastodon-taz.yaml` in a fresh clone: the
    git-ignored opt-out list, then each source, refused in one line that says how to create it (issue 51)."""
    shutil.copytree(REPO / "corpora" / "manifests", tmp_path / "corpora" / "manifests")
    args = ["corpus", "build", "--manifest", "corpora/manifests/seed-mastodon-taz.yaml"]
    with contextlib.chdir(tmp_path):
        assert cli_main(args) == 2
        assert capsys.readouterr().err.strip().splitlines() == [
            "queerbias corpus: error: corpora/opt-out.txt: cannot read opt-out list: no such file; create it before "
            "building (an empty file leaves nothing out: touch corpora/opt-out.txt; one doc_id, URL or URL prefix per "
            "line), or name no opt_out in the manifest (docs/corpus.md)"]
        (tmp_path / "corpora" / "opt-out.txt").touch()
        assert cli_main(args) == 2
        assert capsys.readouterr().err.strip().splitlines() == [
            "queerbias corpus: error: corpora/raw/mastodon/posts.jsonl: source mastodon: no such file or folder; write "
            "it before building: a JSONL of documents, as `queerbias crawl mastodon --out DIR` (DIR/posts.jsonl), "
            "`queerbias crawl news` or `queerbias corpus taz` write it (docs/corpus.md), or leave the source out"]
    assert not (tmp_path / "corpora" / "seed-mastodon-taz").exists()
    assert "touch corpora/opt-out.txt" in (REPO / "corpora" / "manifests" / "seed-mastodon-taz.yaml").read_text()
