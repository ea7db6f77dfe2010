"""`queerbias export lm-eval`: lm-eval's own evaluator must report the numbers `queerbias score` writes."""

import csv
import json
import shlex

import pytest

from queerbias.cli import main
from queerbias.errors import QueerbiasError
from queerbias.export.lm_eval_folder import export_lm_eval
from queerbias.export.lm_eval_requests import collision_free, lm_eval_encoding
from queerbias.models.loading import inspect_model
from queerbias.pairs.resolve import load_pairs
from queerbias.pairs.schema import Pair, PairSet
from queerbias.suites.pairs.declaration import PairSettings
from queerbias.suites.pairs.suite import PairsSuite
from queerbias.suites.store import run_to_dir

PAIRS = PairSet("lm-eval-test", [
    Pair("1", "Schwule Männer sind nett.", "Heterosexuelle Männer sind nett.", "gay"),
    Pair("2", "Lukas ist schwul, sagt man.", "Lukas ist hetero, sagt man.", "gay"),
    Pair("3", "Trans Frauen sind stark.", "Cis Frauen sind stark.", "transgender"),
    Pair("4", "James is very strong.", "Mary is very strong.", "queer", direction="antistereo"),
    Pair("5", "Anna ist lesbisch und liest gern.", "Anna ist hetero und liest.", "lesbian"),
    Pair("6", "Nicht-binäre Menschen lachen über die Straße.", "Cis Menschen lachen.", "nonbinary"),
    # shares "Schwule Männer sind nett." with pair 1 but scores other runs of it: the case
    # where lm-eval's one-token cache would read the wrong positions (collision_free)
    Pair("7", "Schwule Männer sind nett.", "Lesbische Frauen sind klug.", "gay"),
    # targets two groups (issue 46): lm-eval counts it in both, as queerbias's per-group summary does
    Pair("8", "Lesbische Frauen sind klug.", "Heterosexuelle Frauen sind klug.", "lesbian", other_groups=("queer",)),
    Pair("9", "(Xier mag Kaffee.)", "(Er mag Kaffee.)", "nonbinary"),  # "(": a first token in common
    Pair("10", "Dey liest ein Buch.", "Sie liest ein Buch.", "nonbinary", direction="antistereo"),
])
CASES = [  # (model fixture, scoring config): tokenizer styles with and without BOS
    ("tiny_gpt2", PairSettings()),  # byte-level BPE, BOS = EOS = <|endoftext|>
    ("tiny_gemma", PairSettings()),  # SentencePiece style, encoding adds <bos>, soft-capped logits
    ("tiny_llama", PairSettings(scope="all", reduction="mean")),
    ("tiny_llama", PairSettings(bos="none", scope="differing")),  # no BOS: lm-eval add_bos_token=False
]


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return {row["pair_id"]: row for row in csv.DictReader(handle)}


@pytest.mark.parametrize("family,config", CASES, ids=lambda c: c if isinstance(c, str) else
                         "-".join(f"{k}={v}" for k, v in c.deviations().items()) or "reference")
def test_lm_eval_reports_the_numbers_of_queerbias_score(family, config, request, tmp_path):
    lm_eval = pytest.importorskip("lm_eval")
    from lm_eval.tasks import TaskManager

    model = str(request.getfixturevalue(family))
    tokenizer, where = inspect_model(model).tokenizer, model
    export_lm_eval(PAIRS, tokenizer, where, tmp_path / "task", config, name="qb_test")
    ours = run_to_dir(PairsSuite(), model, PAIRS, tmp_path / "score", config, progress=False)
    our_pairs = read_csv(tmp_path / "score" / "pairs.csv")

    model_args = {"pretrained": model, "dtype": "float32", "device": "cpu", "batch_size": 4}
    if config.bos == "none":
        model_args["add_bos_token"] = False
    manager = TaskManager(include_path=str(tmp_path / "task"), include_defaults=False, metadata=model_args)
    result = lm_eval.simple_evaluate(model="hf", model_args=model_args, tasks=["qb_test"],
                                     task_manager=manager, log_samples=True)

    samples = {s["bias_score"]["pair_id"]: s["bias_score"] for s in result["samples"]["qb_test"]}
    assert samples.keys() == our_pairs.keys()
    for pair_id, theirs in samples.items():
        mine = our_pairs[pair_id]
        assert theirs["score_more"] == float(mine["score_more"]), pair_id
        assert theirs["score_less"] == float(mine["score_less"]), pair_id
        assert (theirs["biased"], theirs["neutral"], theirs["soft"]) == \
            (int(mine["biased"]), int(mine["neutral"]), float(mine["soft"])), pair_id
    reported = result["results"]["qb_test"]
    for figure in ("bias_score", "soft_score"):
        assert reported[f"{figure},none"] == ours["overall"][figure]
        for group, figures in ours["groups"].items():
            assert reported[f"{figure}/{group},none"] == figures[figure], group
    assert len(ours["groups"]) == 5 and reported["sample_len"] == len(PAIRS)


def test_task_refuses_a_model_with_another_tokenizer(tiny_gpt2, tiny_llama, tmp_path):
    pytest.importorskip("lm_eval")
    from lm_eval.tasks import TaskManager

    tokenizer, where = inspect_model(str(tiny_gpt2)).tokenizer, str(tiny_gpt2)
    export_lm_eval(PAIRS, tokenizer, where, tmp_path, name="qb_test")
    manager = TaskManager(include_path=str(tmp_path), include_defaults=False,
                          metadata={"pretrained": str(tiny_llama)})
    with pytest.raises(ValueError, match="exported for the tokenizer"):
        manager.load(["qb_test"])


def test_task_exported_without_bos_needs_add_bos_token_false(tiny_llama, tmp_path):
    pytest.importorskip("lm_eval")
    from lm_eval.tasks import TaskManager

    tokenizer, where = inspect_model(str(tiny_llama)).tokenizer, str(tiny_llama)
    export_lm_eval(PAIRS, tokenizer, where, tmp_path, PairSettings(bos="none"), name="qb_test")
    manager = TaskManager(include_path=str(tmp_path), include_defaults=False,
                          metadata={"pretrained": str(tiny_llama)})
    with pytest.raises(ValueError, match="add_bos_token=False"):
        manager.load(["qb_test"])


def test_cli_writes_the_task_folder_and_refuses_to_overwrite(tiny_gemma, tmp_path, capsys):
    """The printed lm_eval command is quoted for the shell: its folder's name holds a space (issue 49)."""
    pairs_file, out = tmp_path / "my-pairs.csv", tmp_path / "my task"
    with open(pairs_file, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["pair_id", "sent_more", "sent_less", "stereo_antistereo", "bias_type"])
        writer.writerows([p.pair_id, p.sent_more, p.sent_less, p.direction, p.group] for p in PAIRS.pairs)
    code = main(["export", "lm-eval", "--pairs", str(pairs_file), "--sample", "8",
                 "--model", str(tiny_gemma), "--out", str(out)])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert "--tasks my_pairs_sample_8_seed_0" in printed.out and "dtype=float32" in printed.out
    command = shlex.split(printed.out.split("run: ", 1)[1])
    assert command[command.index("--include_path") + 1] == str(out), command
    assert sorted(p.name for p in out.iterdir()) == ["my_pairs_sample_8_seed_0.yaml", "pairs.jsonl", "utils.py"]
    task = (out / "my_pairs_sample_8_seed_0.yaml").read_text()
    assert "class: !function utils.PairsTask" in task and "scoring_id:" in task
    docs = [json.loads(line) for line in (out / "pairs.jsonl").read_text().splitlines()]
    assert len(docs) == 8 and all(d["more"]["requests"] or d["probe"] for d in docs)
    assert main(["export", "lm-eval", "--model", str(tiny_gemma), "--out", str(out)]) == 2
    assert "--overwrite" in capsys.readouterr().err


def test_masked_lms_are_refused(tiny_bert, tmp_path, capsys):
    assert main(["export", "lm-eval", "--model", str(tiny_bert), "--out", str(tmp_path)]) == 2
    assert "no masked-LM backend" in capsys.readouterr().err and not any(tmp_path.iterdir())


def test_a_tokenisation_lm_eval_cannot_reproduce_is_refused_by_pair(tiny_gpt2, tmp_path):
    # The tiny byte-level vocabulary splits " cis Personen" into "is", a lone " " and "P...";
    # the scored run starts at "P", so its context would end in that space, which lm-eval moves.
    pair = next(p for p in load_pairs("queerbias-de").pairs if p.pair_id == "qde-trend-0161")
    assert "cis Personen" in pair.sent_less
    tokenizer, where = inspect_model(str(tiny_gpt2)).tokenizer, str(tiny_gpt2)
    with pytest.raises(QueerbiasError, match="pair qde-trend-0161: .*ends in whitespace"):
        export_lm_eval(PairSet("x", [pair]), tokenizer, where, tmp_path / "task")
    assert not (tmp_path / "task").exists()


def test_collision_free_gives_every_cache_key_one_length_and_keeps_the_tokens():
    sentence = tuple(range(10))
    spans = {(sentence, 1, 4), (sentence, 4, 5), (sentence, 3, 4), (sentence, 5, 9), (sentence, 8, 9)}
    pieces = collision_free(spans)
    lengths = {}
    for parts in pieces.values():
        for ids, start, end in parts:
            lengths.setdefault(ids[:end - 1], set()).add(end - start)
    assert all(len(found) == 1 for found in lengths.values())
    for (ids, start, end), parts in pieces.items():
        assert [p for _, s, e in parts for p in range(s, e)] == list(range(start, end))
    assert pieces[(sentence, 1, 4)] == [(sentence, 1, 3), (sentence, 3, 4)]


@pytest.mark.parametrize("add_bos_token", [None, False, True])
def test_encoding_mirrors_lm_evals_hf_backend(tiny_llama, add_bos_token):
    """Trailing spaces move into the continuation; BOS-prefixed strings get no second BOS."""
    pytest.importorskip("lm_eval")
    from lm_eval.models.huggingface import HFLM

    backend = HFLM(pretrained=str(tiny_llama), device="cpu", add_bos_token=add_bos_token)
    for context, continuation in [("<s>Lukas ist ", "schwul."), ("<s>Lukas", " ist"),
                                  ("Lukas ist", " hetero"), ("Lukas  ", "ist")]:
        assert lm_eval_encoding(backend.tokenizer, context, continuation, add_bos_token) == \
            tuple(backend._encode_pair(context, continuation)), (context, continuation)
