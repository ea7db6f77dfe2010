"""Every bad input we know of, as one table: the command line, its exit status, and a
fragment of the one-line error it must print (issue 16, docs/refusals.md).

A row runs the real CLI in-process (`queerbias.cli.main`). In `CASES`, `{name}` in a
command line is an input built on first use by `BUILDERS` (a tiny model, a FIFO, a Latin-1
file, ...); `ON_PREPARED_RUNS` builds its command line from finished runs damaged the way
users damage them (`prepared_runs`). Every row must also leave no result behind: no new
`summary.json` (but the base model's scores of a training run), no scored `.partial`
lines, no complete checkpoint. Adding a bad input is one row; a new kind of input is one
builder. Crawl inputs that need a live fake server sit with their servers in tests/crawl.
"""

from __future__ import annotations

import logging
import math
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from prepared_runs import (
    biased_flipped,
    compare,
    config_file,
    emptied,
    fifo,
    fresh_pair_runs,
    gruff_run,
    pair_run,
    row_deleted,
    summary_edit,
    truncated,
    with_nan,
)
from queerbias.cli import main

REPO = Path(__file__).resolve().parents[1]
PAIRS_HEADER = "sent_more,sent_less,stereo_antistereo,bias_type\n"
HELD_OUT = [{"suite": "pairs", "data": "queerbias-de:test", "sample": 12}]
GOOD_ROWS = ("Schwule Männer sind nett.,Heterosexuelle Männer sind nett.,stereo,gay\n"
             "Lesbische Frauen sind klug.,Cis Frauen sind klug.,stereo,lesbian\n")


# -- inputs, built on first use -------------------------------------------------------

def _write(inputs, name: str, text: str | bytes) -> Path:
    path = inputs.tmp / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


def _fifo(inputs) -> Path:
    path = inputs.tmp / "fifo"
    os.mkfifo(path)
    return path


def _folder(inputs, name: str, files: dict[str, str] | None = None) -> Path:
    folder = inputs.tmp / name
    folder.mkdir()
    for file, text in (files or {}).items():
        (folder / file).write_text(text, encoding="utf-8")
    return folder


def _readonly(inputs) -> Path:
    folder = _folder(inputs, "readonly")
    folder.chmod(0o500)
    return folder


def _latin1_gruff(inputs) -> Path:
    folder = _folder(inputs, "gruff", {"context.tsv": "context\n"})
    (folder / "task.tsv").write_bytes("sentence\tpronoun_type\nDie Ärztin\tnom\n".encode("latin-1"))
    return folder


def _model_variant(inputs, name: str, base: str, change) -> Path:
    """A copy of a tiny model folder, changed by `change(folder)`; built once per session."""
    import shutil

    folder = inputs.models / name
    if not folder.exists():
        shutil.copytree(inputs[base], folder)
        change(folder)
    return folder


def _nan_weight(folder: Path) -> None:
    from safetensors.torch import load_file, save_file

    weights = load_file(folder / "model.safetensors")
    weights["bert.encoder.layer.0.attention.self.query.weight"][0, 0] = math.nan
    save_file(weights, folder / "model.safetensors", metadata={"format": "pt"})


def _truncate_weights(folder: Path) -> None:
    file = folder / "model.safetensors"
    file.write_bytes(file.read_bytes()[: file.stat().st_size // 2])


def _tokenizer_only(folder: Path) -> None:
    for name in ("config.json", "model.safetensors"):
        (folder / name).unlink()


def _no_weights(folder: Path) -> None:
    (folder / "model.safetensors").unlink()


def _tiny_gemma(inputs) -> Path:
    """A tiny random Gemma 3 without a tokenizer: the kind check comes before it is needed."""
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    folder = inputs.models / "gemma"
    if not folder.exists():
        config = Gemma3TextConfig(vocab_size=64, hidden_size=16, intermediate_size=32,
                                  num_hidden_layers=1, num_attention_heads=1, num_key_value_heads=1,
                                  head_dim=16, architectures=["Gemma3ForCausalLM"])
        Gemma3ForCausalLM(config).save_pretrained(folder)
    return folder


def _train_config(inputs, name: str, model: str = "gpt2", **overrides) -> Path:
    import yaml

    from train.helpers import small_config

    config = small_config(inputs[model], inputs.tmp / f"run-{name}", **overrides)
    path = inputs.tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


BUILDERS = {
    "tmp": lambda i: i.tmp,
    "bert": lambda i: i.request.getfixturevalue("tiny_bert"),
    "gpt2": lambda i: i.request.getfixturevalue("tiny_gpt2"),
    "pairs": lambda i: _write(i, "pairs.csv", PAIRS_HEADER + GOOD_ROWS),
    "file": lambda i: _write(i, "a-file", "not a folder\n"),
    "fifo": _fifo,
    "readonly": _readonly,
    "latin1_pairs": lambda i: _write(i, "latin1.csv", (PAIRS_HEADER + GOOD_ROWS).encode("latin-1")),
    "open_quote": lambda i: _write(i, "quote.csv", PAIRS_HEADER + GOOD_ROWS
                                   + 'Trans Frauen sind stark.,"Cis Frauen sind stark.,stereo,trans\n'
                                   + GOOD_ROWS * 2),
    "one_line": lambda i: _write(i, "one-line.csv", PAIRS_HEADER.strip() + "x" * 300_000),
    "long_pair": lambda i: _write(i, "long.csv", PAIRS_HEADER + GOOD_ROWS
                                  + f"{'Anna ist nett. ' * 60},{'Lukas ist nett. ' * 60},stereo,gay\n"),
    "unk_pair": lambda i: _write(i, "unk.csv", PAIRS_HEADER + GOOD_ROWS
                                 + "Anna ist Ω.,Anna ist Ψ.,stereo,gay\n"),
    "empty_folder": lambda i: _folder(i, "empty"),
    "tokenizer_only": lambda i: _model_variant(i, "tokenizer-only", "bert", _tokenizer_only),
    "truncated": lambda i: _model_variant(i, "truncated", "bert", _truncate_weights),
    "no_weights": lambda i: _model_variant(i, "no-weights", "bert", _no_weights),
    "nan_bert": lambda i: _model_variant(i, "nan-bert", "bert", _nan_weight),
    "gemma": _tiny_gemma,
    "binary": lambda i: _write(i, "image.jsonl", b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4),
    "latin1_gruff": _latin1_gruff,
    "dup_train": lambda i: _write(i, "dup.yaml", "model: x\nlearning_rate: 1e-5\n"
                                  "data: {train: x}\nlearning_rate: 1000\n"),
    "dup_gifi": lambda i: _write(i, "gifi.yaml", "runs: 1\nseed: 0\nruns: 3\n"),
    "dup_manifest": lambda i: _write(i, "manifest.yaml", "name: a\nsources: []\nname: b\n"),
    "list_yaml": lambda i: _write(i, "list.yaml", "- runs\n- 3\n"),
    "string_yaml": lambda i: _write(i, "string.yaml", "just a sentence\n"),
    "inf_lr": lambda i: _train_config(i, "inf-lr", learning_rate=math.inf),
    "diverging": lambda i: _train_config(i, "diverging", learning_rate=1000, method="full"),
    "exploding": lambda i: _train_config(i, "exploding", learning_rate=1e38),
    "equalise_no_pairs": lambda i: _train_config(i, "equalise-no-pairs", objective="equalise"),
    "dpo_no_pairs": lambda i: _train_config(i, "dpo-no-pairs", objective="dpo"),
    "dpo_masked": lambda i: _train_config(i, "dpo-masked", model="bert", objective="dpo",
                                          pairs__train="queerbias-de:train", eval__benchmarks=HELD_OUT),
    "unknown_identity": lambda i: _train_config(i, "unknown-identity",
                                                data__identities=["transgender", "wizards"]),
    "bad_lexicon": lambda i: _train_config(i, "bad-lexicon", objective="cda", cda__lexicon=str(_write(
        i, "lexicon.yaml", '{"entries": [{"group": "gay", "from": {"adjective": "schwul"}}]}\n'))),
    "dup_lexicon": lambda i: _train_config(i, "dup-lexicon", objective="cda", cda__lexicon=str(_write(
        i, "lexicon-dup.yaml", "entries: []\nnouns: {}\nentries: []\n"))),
    "overlap": lambda i: _train_config(i, "overlap", objective="equalise", pairs__train="queerbias-de:train",
                                       eval__benchmarks=[{"suite": "pairs", "data": "queerbias-de"}]),
    "bad_metrics_run": lambda i: _folder(i, "run", {"config.yaml": "model: x\n", "metrics.jsonl": "{\"step\": 0\n"}),
    # -- issue 21 item 5 and issue 23 (branch structure): typed training config, overlap, criteria --
    "train_ok": lambda i: _train_config(i, "ok"),
    "alpha0": lambda i: _train_config(i, "alpha0", lora__alpha=0),
    "decay": lambda i: _train_config(i, "decay", weight_decay=-0.1),
    "clip0": lambda i: _train_config(i, "clip0", max_grad_norm=0),
    "seed": lambda i: _train_config(i, "seed", seed=-1),
    "scheduler": lambda i: _train_config(i, "scheduler", lr_scheduler="sawtooth"),
    "no_benchmarks": lambda i: _train_config(i, "no-benchmarks", eval__benchmarks=[]),
    "nan_margin": lambda i: _train_config(i, "nan-margin", compare__ppl_margin=math.nan),
    "unknown_best": lambda i: _train_config(i, "unknown-best", compare__best="fastest"),
    "gruff_best": lambda i: _train_config(i, "gruff-best", compare__best="distance",
                                          eval__benchmarks=[{"suite": "pairs", "sample": 2}, {"suite": "gruff"}]),
    "missing_module": lambda i: _train_config(i, "missing-module", lora__modules_to_save=["no_such_head"]),
    "corpus_overlap": lambda i: _train_config(i, "corpus-overlap", data__train=str(_write(
        i, "corpus.jsonl", '{"text": "Ein Satz. Schwule Männer sind nett. Noch einer."}\n')),
        eval__benchmarks=[{"suite": "pairs", "data": str(_write(i, "eval.csv", PAIRS_HEADER + GOOD_ROWS))}]),
    "cased_overlap": lambda i: _train_config(i, "cased-overlap", model="bert", data__train=str(_write(
        i, "corpus-cased.jsonl", '{"text": "schwule männer sind nett."}\n')),
        eval__benchmarks=[{"suite": "pairs", "data": str(_write(i, "eval2.csv", PAIRS_HEADER + GOOD_ROWS))}]),
}


class Inputs(dict):
    """`{name}` -> path, built by `BUILDERS[name]` the first time a row asks for it."""

    def __init__(self, tmp: Path, models: Path, request):
        super().__init__()
        self.tmp, self.models, self.request = tmp, models, request

    def __missing__(self, key: str) -> str:
        value = self[key] = str(BUILDERS[key](self))
        return value


@pytest.fixture(scope="session")
def model_variants(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("model-variants")


# -- the table --------------------------------------------------------------------------

SCORE = "score --no-progress --pairs {pairs} --model {bert} --out {tmp}/out"
CASES = [
    # score: options, checked before anything loads (more in ON_PREPARED_RUNS)
    ("score --pairs {pairs} --model {bert} --out {file}/sub", 2, "a-file is a file, not a directory"),
    ("score --pairs {pairs} --model {bert} --out {readonly}/out", 2, "no permission to write"),
    (SCORE + " --batch-size 0", 2, "--batch-size must be auto or a positive integer"),
    ("score --kind sideways", 2, "argument --kind: invalid choice: 'sideways'"),
    (SCORE + " --sample many", 2, "--sample must be an integer, got 'many'"),
    # score: pair files
    ("score --pairs {fifo} --model {bert}", 2, "pair file is not a regular file but a FIFO (named pipe)"),
    ("score --pairs /dev/null --model {bert}", 2, "pair file is not a regular file but a device"),
    ("score --pairs {tmp} --model {bert}", 2, "pair file is not a regular file but a folder"),
    ("score --pairs {latin1_pairs} --model {bert}", 2, "row 2: not UTF-8"),
    ("score --pairs {open_quote} --model {bert}", 2, "row 4, field 'sent_less': a quote (\") opened"),
    ("score --pairs {one_line} --model {bert}", 2, "is longer than 131072 characters"),
    # score: models
    ("score --pairs {pairs} --model {empty_folder}", 2, "the folder is empty"),
    ("score --pairs {pairs} --model {tokenizer_only}", 2, "holds only a tokenizer but no config.json"),
    ("score --pairs {pairs} --model {truncated}", 2, "model.safetensors: truncated"),
    ("score --pairs {pairs} --model {no_weights}", 2, "holds a config.json but no weights"),
    ("score --pairs {pairs} --model {file}", 2, "is a file; give the model's folder"),
    ("score --pairs {pairs} --model ./no/such/model", 2, "no such model folder"),
    ("score --pairs {pairs} --model {bert} --kind causal", 2, "is a masked LM (BertForMaskedLM, "
                                                              "is_decoder False)"),
    ("score --pairs {pairs} --model {gpt2} --kind masked", 2, "is a causal LM (GPT2LMHeadModel)"),
    ("score --pairs {pairs} --model {gemma} --kind masked", 2, "is a causal LM (Gemma3ForCausalLM)"),
    ("score --pairs {pairs} --model {gemma} --kind masked --force-kind", 2,
     "transformers has no masked-LM class for model type 'gemma3_text'"),
    # score: what the model makes of the pairs
    (SCORE.replace("{pairs}", "{long_pair}"), 2, "pair 3 has a sentence of 2"),
    (SCORE.replace("{pairs}", "{long_pair}"), 2, "pass --long-sentences truncate to score its first "
                                                 "tokens or --long-sentences skip"),
    (SCORE.replace("{pairs}", "{unk_pair}"), 2, "pair 3: its two sentences differ, but the "
                                               "model's tokenizer turns them into the same tokens"),
    (SCORE.replace("{bert}", "{nan_bert}"), 2, "gives NaN or infinite log-probabilities"),
    (SCORE.replace("{bert}", "{nan_bert}"), 2, "its weights hold NaN or infinity "
                                               "(e.g. bert.encoder.layer.0.attention.self.query"),
    # export: the same pair settings as score, checked before anything loads
    ("export lm-eval --pairs {pairs} --model {gpt2} --out {tmp}/task --sample 0", 2, "--sample must be at least 1"),
    ("export lm-eval --pairs {pairs} --model {gpt2} --out {tmp}/task --sample -3", 2, "--sample must be at least 1"),
    # YAML and other inputs of the suites
    ("train --config {dup_train}", 2, "duplicate key 'learning_rate' on lines 2 and 4"),
    ("train --config {fifo}", 2, "training config is not a regular file but a FIFO"),
    ("train --config {list_yaml}", 2, "a training config must be a YAML mapping"),
    ("gifi run --config {dup_gifi}", 2, "duplicate key 'runs' on lines 1 and 3"),
    ("gifi run --config {string_yaml}", 2, "must be a YAML mapping of keys to values, not a string"),
    ("corpus build --manifest {dup_manifest}", 2, "duplicate key 'name' on lines 1 and 3"),
    ("corpus build --manifest {fifo}", 2, "is not a regular file but a FIFO"),
    ("corpus build --name x --source {binary} -o {tmp}/corpus", 2, "image.jsonl"),
    ("crawl news --out {tmp}/news --feeds-file {fifo} --contact me@example.org", 2,
     "feeds file is not a regular file"),
    ("gruff generate --templates {latin1_gruff} --out {tmp}/i.csv", 2, "task.tsv, row 2: not UTF-8"),
    # training: non-finite numbers stop the run, no checkpoint of that step is complete
    ("train --config {inf_lr}", 2, "config key 'learning_rate' must be a (finite) number"),
    ("train --config {diverging}", 2, "held-out perplexity is not finite"),
    ("train --config {exploding}", 2, "step 1: the weights became NaN or infinite"),
    # mitigation objectives (issue 11): refused before any model loads
    ("train --config {equalise_no_pairs}", 2, "'pairs.train' is required for objective equalise"),
    ("train --config {dpo_no_pairs}", 2, "'pairs.train' is required for objective dpo"),
    ("train --config {dpo_masked}", 2, "'objective': dpo needs a causal LM"),
    ("train --config {unknown_identity}", 2, "'data.identities[1]' names unknown group 'wizards'"),
    ("train --config {bad_lexicon}", 2, "lexicon.yaml: entry 1 ({'group': 'gay', 'from': "
                                        "{'adjective': 'schwul'}}): needs group, from and to"),
    ("train --config {dup_lexicon}", 2, "lexicon-dup.yaml: duplicate key 'entries' on lines 1 and 3"),
    ("train --config {overlap}", 2, "sentences with the training pairs"),
    # model cards: a folder that is no training run, a damaged metrics log
    ("card {empty_folder}", 2, "not a training run (no config.yaml)"),
    ("card {file}", 2, "a-file: not a directory"),
    ("card {bad_metrics_run}", 2, "metrics.jsonl, row 1: invalid JSON"),
    ("card {bad_metrics_run} --out {file}/README.md", 2, "a-file is a file, not a directory"),
    # -- issue 21 item 5 and issue 23 (branch structure): every key typed and ranged, strict numbers,
    # the corpus checked against the evaluation items (case-folded for uncased tokenizers) --
    ("train --config {alpha0}", 2, "config key 'lora.alpha' must be positive, got 0"),
    ("train --config {decay}", 2, "config key 'weight_decay' must be at least 0, got -0.1"),
    ("train --config {clip0}", 2, "config key 'max_grad_norm' must be positive, got 0"),
    ("train --config {seed}", 2, "config key 'seed' must be at least 0, got -1"),
    ("train --config {scheduler}", 2, "config key 'lr_scheduler' must be one of linear, cosine"),
    ("train --config {no_benchmarks}", 2, "config key 'eval.benchmarks' is empty"),
    ("train --config {nan_margin}", 2, "config key 'compare.ppl_margin' must be a (finite) number, got nan"),
    ("train --config {unknown_best}", 2, "config key 'compare.best' names 'fastest', which is not a "
                                         "best-checkpoint criterion of suite pairs"),
    ("train --config {gruff_best}", 2, "'compare.best' names 'distance', which is not a best-checkpoint "
                                       "criterion of suite gruff (it has highest); set eval.benchmarks[1].best"),
    ("train --config {missing_module}", 2, "config key 'lora.modules_to_save[0]': gpt2 has no module 'no_such_head'"),
    ("train --config {corpus_overlap}", 2, "share 1 sentences with the training corpus"),
    ("train --config {cased_overlap}", 2, "share 1 sentences with the training corpus"),
    ("train --config {train_ok} seed=--5", 2, "config key 'seed' must be an integer, got '--5'"),
    (SCORE + " --sample=--5", 2, "--sample must be an integer, got '--5'"),
    (SCORE + " --sample ²", 2, "--sample must be an integer, got '²'"),
    (SCORE + " --sample ٣", 2, "--sample must be an integer, got '٣'"),
    (SCORE + " --seed -1", 2, "--seed must be at least 0, got -1"),
    (SCORE + " --decimals nan", 2, "--decimals must be an integer, got 'nan'"),
    ("run gifi --temperature nan", 2, "--temperature must be a (finite) number, got 'nan'"),
    ("run gifi --top-p inf", 2, "--top-p must be a (finite) number, got 'inf'"),
    ("compare {pairs} {pairs} --out {tmp}/d --seed -1", 2, "argument --seed: must be at least 0, got -1"),
    ("compare {pairs} {pairs} --out {tmp}/d --ppl-margin nan", 2,
     "argument --ppl-margin: must be a finite number, got 'nan'"),
    # -- end of the block --
]


ON_PREPARED_RUNS = [
    ("sample 0", lambda t: ["run", "pairs", "--sample", "0", "--out", str(t / "o")], "--sample must be at least 1"),
    ("sample negative", lambda t: ["score", "--sample", "-3", "--out", str(t / "o")], "--sample must be at least 1"),
    ("chunk 0", lambda t: ["score", "--chunk-pairs", "0", "--out", str(t / "o")], "--chunk-pairs must be at least 1"),
    ("batch 0", lambda t: ["run", "gruff", "--batch-size", "0"], "--batch-size must be auto or a positive integer"),
    ("not a number", lambda t: ["run", "lou", "--sample", "many"], "--sample must be an integer"),
    ("unknown choice", lambda t: ["run", "gruff", "--settings", "d9"], "--settings[0] must be one of none, d0"),
    ("empty --out", lambda t: ["run", "gruff", "--out", ""], "--out must name a directory"),
    ("--out is a file", lambda t: ["score", "--out", str(pair_run(t) / "pairs.csv")], "is a file, not a directory"),
    ("gifi config a list", lambda t: ["gifi", "run", "--config", config_file(t, "- a\n- b\n")],
     "a GIFI config must be a YAML mapping of keys to values, not a list"),
    ("gifi config a number", lambda t: ["gifi", "run", "--config", config_file(t, "3\n")],
     "a GIFI config must be a YAML mapping of keys to values, not a number"),
    ("gifi config unknown key", lambda t: ["gifi", "run", "--config", config_file(t, "limits: 3\n")],
     "config.yaml.limits is unknown"),
    ("gifi config a FIFO", lambda t: ["gifi", "run", "--config", fifo(t)], "fifo.yaml: GIFI config is not a regular file but a FIFO"),
    ("one run", lambda t: compare(pair_run(t)), "need a BEFORE and at least one AFTER run"),
    ("unfinished run", lambda t: compare(pair_run(t), t / "missing"), "not a directory"),
    ("truncated pair summary", lambda t: compare(pair_run(t), truncated(pair_run(t, "b"))), "not valid JSON"),
    ("truncated gruff summary", lambda t: ["gruff", "compare", str(gruff_run(t)), str(truncated(pair_run(t))),
                                           "--out", str(t / "d")], "not valid JSON"),
    ("NaN in a summary", lambda t: compare(pair_run(t), with_nan(pair_run(t, "b"))), "non-finite number NaN"),
    ("empty run", lambda t: compare(pair_run(t), summary_edit(pair_run(t, "b"), emptied)), "an empty run"),
    ("report on an empty run", lambda t: ["report", str(summary_edit(pair_run(t), emptied)), "--out", str(t / "r")],
     "an empty run"),
    ("two suites", lambda t: compare(pair_run(t), gruff_run(t)), "a is a pairs run, gruff a gruff run"),
    ("gruff alias on a pair run", lambda t: ["gruff", "compare", str(pair_run(t)), str(pair_run(t, "b")),
                                             "--out", str(t / "d")], "is a pairs run, not a gruff run"),
    ("edited biased column", lambda t: compare(*(lambda a, b: (a, biased_flipped(b)))(*fresh_pair_runs(t))),
     "pairs.csv: changed after the run"),
    ("row deleted from both runs", lambda t: compare(*map(row_deleted, fresh_pair_runs(t))),
     "pairs.csv: changed after the run"),
    ("edited biased, old run", lambda t: compare(pair_run(t), biased_flipped(pair_run(t, "b"))),
     "biased of pair 0000 does not follow from its scores"),
    ("row deleted, old runs", lambda t: compare(row_deleted(pair_run(t)), row_deleted(pair_run(t, "b"))),
     "99 pairs, but the run scored 100"),
    ("unknown suite", lambda t: compare(pair_run(t), summary_edit(pair_run(t, "b"), lambda s: s.update(suite="x"))),
     "unknown suite 'x'"),
    ("old gruff run", lambda t: compare(pair_run(t), summary_edit(pair_run(t, "b"), lambda s: (
        s.pop("overall"), s["meta"].update(suite="gruff")))), "written before the suites shared one run format"),
    ("newer schema", lambda t: compare(pair_run(t), summary_edit(pair_run(t, "b"),
                                                                 lambda s: s.update(schema_version=99))),
     "written by a newer queerbias"),
    # -- issue 21 item 5 and issue 23 (branch structure): criterion names, checkpoint order --
    ("unknown criterion", lambda t: [*compare(pair_run(t), pair_run(t, "b")), "--best", "fastest"],
     "best-checkpoint criterion 'fastest' is not one of suite pairs (its criteria: closest50, lowest, distance)"),
    ("another suite's criterion", lambda t: (lambda g: ["compare", f"a={g}", f"b={g}", "--out", str(t / "d"),
                                                         "--best", "distance"])(gruff_run(t)),
     "criterion 'distance' is not one of suite gruff (its criteria: highest)"),
    ("checkpoints in reverse order", lambda t: compare(*(summary_edit(pair_run(t, name), lambda s, at=at: s["meta"].update(step=at))
                                                         for name, at in (("late", 8), ("base", 0)))),
     "base (step 0) does not come after late (step 8); give BEFORE first"),
    # -- end of the block --
]


ROWS = ([pytest.param(command, status, fragment, id=f"{i:02d} {command}")
         for i, (command, status, fragment) in enumerate(CASES)]
        + [pytest.param(build, 2, fragment, id=label) for label, build, fragment in ON_PREPARED_RUNS])


@pytest.mark.parametrize(("command", "status", "fragment"), ROWS)
def test_bad_input_is_refused_in_one_line(command, status, fragment, tmp_path, model_variants,
                                          request, capsys, monkeypatch):
    if not callable(command) and "{readonly}" in command and os.geteuid() == 0:
        pytest.skip("root may write anywhere")
    monkeypatch.chdir(tmp_path)
    _log_to_this_stderr(monkeypatch)
    torch.set_num_threads(1)
    if callable(command):
        argv = command(tmp_path)
    else:
        argv = shlex.split(command.format_map(Inputs(tmp_path, model_variants, request)))
    existing = set(tmp_path.rglob("*"))
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse
        code = exit_.code
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if f"{argv[0]}" in line and "error:" in line]
    assert code == status, err
    assert len(errors) == 1 and errors[0].startswith("queerbias ") and fragment in errors[0], err
    assert "Traceback" not in err, err
    left = [p for p in set(tmp_path.rglob("*")) - existing
            if (p.name == "summary.json" and "base" not in p.parts)
            or (p.parent.name == ".partial" and p.stat().st_size)
            or (p.name == "queerbias-complete" and p.parent.name.startswith("checkpoint-"))]
    assert not left, f"a refused run left {left}"


def _log_to_this_stderr(monkeypatch) -> None:
    """Rows run in one process: log handlers made in an earlier row (main()'s, the
    libraries') still hold that row's captured, now closed, stderr."""
    monkeypatch.setattr(logging.root, "handlers", [])  # main() configures it again
    for logger in list(logging.Logger.manager.loggerDict.values()):
        for handler in getattr(logger, "handlers", []):
            if type(handler) is logging.StreamHandler:
                monkeypatch.setattr(handler, "stream", sys.stderr)
                if "flush" in vars(handler):  # transformers binds the stream's flush
                    monkeypatch.setattr(handler, "flush", sys.stderr.flush)


# -- the same rules below the CLI -------------------------------------------------------

def test_non_finite_scores_never_decide_a_pair():
    from queerbias.pairs.schema import Pair
    from queerbias.scoring.pair_scores import pair_outcome
    from queerbias.scoring.scorer import NonFiniteScores

    pair = Pair("7", "a", "b", "gay")
    for more, less in ((math.nan, -3.0), (-3.0, -math.inf), (math.inf, 1.0)):
        with pytest.raises(NonFiniteScores, match="pair 7: sentence scores"):
            pair_outcome(pair, more, less)


def test_summaries_are_strict_json():
    from queerbias.errors import QueerbiasError
    from queerbias.fileio import dump_json_strict

    assert dump_json_strict({"a": [1.5, None]}) == '{\n  "a": [\n    1.5,\n    null\n  ]\n}\n'
    with pytest.raises(QueerbiasError, match=r"groups\.gay\.soft_score is not a finite number"):
        dump_json_strict({"groups": {"gay": {"n": 3, "soft_score": math.nan}}})
    with pytest.raises(QueerbiasError, match=r"runs\[1\] is not a finite number"):
        dump_json_strict({"runs": [0.0, -math.inf]})


LAUNCHES = {
    "1 process": ["--cpu", "--num_processes", "1"],
    # --multi_gpu starts two gloo processes on a machine without GPUs (torch elastic's agent)
    "2 processes": ["--multi_gpu", "--num_processes", "2", "--main_process_port", "0"],
}


@pytest.mark.parametrize("launch", sorted(LAUNCHES))
@pytest.mark.parametrize(("config", "message"), [
    ("dup", "{config}: duplicate key 'seed' on lines 2 and 3; YAML keys must be unique (the second would "
            "silently win)"),
    ("diverging", "held-out perplexity is not finite"),  # refused once the processes train together
])
def test_accelerate_launch_shows_only_our_line(launch, config, message, tmp_path, request):
    """accelerate's launchers would add a CalledProcessError traceback (one process) or torch
    elastic's failure summary and a line per process (several)."""
    if config == "dup":
        path = tmp_path / "dup.yaml"
        path.write_text("model: x\nseed: 1\nseed: 2\n", encoding="utf-8")
    else:
        path = _train_config(Inputs(tmp_path, tmp_path, request), config, learning_rate=1000, method="full")
    accelerate = Path(sys.executable).parent / "accelerate"
    result = subprocess.run([str(accelerate), "launch", *LAUNCHES[launch], "--num_machines", "1",
                             "--mixed_precision", "no", "--dynamo_backend", "no",
                             str(REPO / "train" / "finetune.py"), "--config", str(path)],
                            capture_output=True, text=True, timeout=300,
                            env={**os.environ, "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""})
    assert result.returncode != 0
    assert "Traceback" not in result.stderr and "FAILED" not in result.stderr, result.stderr[-3000:]
    errors = [line for line in result.stderr.splitlines() if "error" in line.lower()]
    assert len(errors) == 1 and errors[0].startswith("queerbias train: error: "), result.stderr[-3000:]
    assert message.format(config=path) in errors[0]


@pytest.mark.parametrize(("pairs", "option", "n", "recorded"), [
    ("long_pair", "--long-sentences=skip", 2, {"long_pairs": 1}),
    ("long_pair", "--long-sentences=truncate", 3, {"long_pairs": 1}),
    ("unk_pair", "--identical=keep", 3, {"token_identical_pairs": 1, "token_identical_policy": "keep"}),
    ("unk_pair", "--identical=drop", 2, {"token_identical_pairs": 1, "token_identical_policy": "drop"}),
])
def test_the_ways_out_are_recorded(pairs, option, n, recorded, tmp_path, model_variants, request,
                                   monkeypatch):
    import json

    monkeypatch.chdir(tmp_path)
    torch.set_num_threads(1)
    inputs = Inputs(tmp_path, model_variants, request)
    out = tmp_path / "out"
    assert main(["score", "--no-progress", "--pairs", inputs[pairs], "--model", inputs["bert"],
                 "--out", str(out), option]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["overall"]["n"] == n
    assert recorded.items() <= summary["meta"]["data"].items()
    long_policy = {"--long-sentences=skip": "skip", "--long-sentences=truncate": "truncate"}.get(option)
    assert summary["meta"]["scoring"]["deviations"] == ({"long_sentences": long_policy}
                                                        if long_policy else {})
