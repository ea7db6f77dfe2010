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
import re
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
    fifo_summary,
    fresh_pair_runs,
    gruff_run,
    pair_run,
    row_deleted,
    summary_edit,
    truncated,
    with_nan,
)
from queerbias.cli import main
from queerbias.crawl.keys import CrawlKey
from queerbias.crawl.mastodon.store import CrawlStore

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


def _in_folder(inputs, folder: str, name: str, text: str) -> Path:
    (inputs.tmp / folder).mkdir(parents=True, exist_ok=True)
    return _write(inputs, f"{folder}/{name}", text)


def _jsonl(inputs, name: str, lines: list[str]) -> Path:
    return _write(inputs, name, "".join(line + "\n" for line in lines))


GOOD_JSON = '"sent_more": "Schwule Männer sind nett.", "sent_less": "Heterosexuelle Männer sind nett.", ' \
            '"stereo_antistereo": "stereo"'


def _locked(inputs) -> Path:
    """A folder another running queerbias process writes to: its lock held (here, by this process)."""
    from queerbias.outputs import OutputLock

    folder = inputs.tmp / "busy"
    inputs.held = OutputLock(folder, "a pairs run").__enter__()
    return folder


def _int_weights(folder: Path) -> None:
    from safetensors.torch import load_file, save_file

    weights = load_file(folder / "model.safetensors")
    name = "bert.encoder.layer.0.attention.self.query.weight"
    weights[name] = weights[name].to(torch.int64)
    save_file(weights, folder / "model.safetensors", metadata={"format": "pt"})


def _fifo_in_model(folder: Path) -> None:
    os.mkfifo(folder / "notes.txt")


def _bad_adapter(folder: Path) -> None:
    for file in list(folder.iterdir()):
        if file.name not in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
            file.unlink()
    (folder / "adapter_config.json").write_text('{"base_model_name_or_path": "x", "base_model_name_or_path": "y"}')


def _small_vocabulary(folder: Path) -> None:
    import json

    config = json.loads((folder / "config.json").read_text())
    config["vocab_size"] = 100
    (folder / "config.json").write_text(json.dumps(config))


def _unlisted_store(inputs) -> Path:
    """A Mastodon crawl store whose list of removed posts and authors was deleted (key beside the folder)."""
    folder = inputs.tmp / "store"
    CrawlStore(folder, CrawlKey(inputs.tmp / "crawl.key")).close()
    (folder / "tombstones.json").unlink()
    return folder


def _study(inputs, changes: dict) -> Path:
    """A study file of one model, run and seed (no model is loaded before its cells run), changed."""
    import yaml

    study = {"output_dir": str(inputs.tmp / "study-out"), "models": {"gpt2": "some/model"},
             "runs": {"lm": {"overrides": {"objective": "lm"}}}, "seeds": [0],
             "training": {"overrides": {"data": {"train": "corpora/demo"}}},
             "benchmarks": [{"suite": "pairs", "data": "queerbias-de:test", "sample": 4}], **changes}
    path = inputs.tmp / f"study-{len(list(inputs.tmp.glob('study-*.yaml')))}.yaml"
    path.write_text(yaml.safe_dump(study), encoding="utf-8")
    return path


def _study_folder_of_another_config(inputs) -> Path:
    """A study file whose output folder holds a study prepared with other seeds."""
    from queerbias.study.cells import prepare
    from queerbias.study.config import load_study

    prepare(load_study(_study(inputs, {"seeds": [0, 1]})))
    return _study(inputs, {})


def _base_of_another_model(inputs) -> Path:
    """A training config of tiny GPT-2 whose eval.base_from holds tiny BERT's base evaluation."""
    shared = inputs.tmp / "shared-base"
    assert main(["score", "--no-progress", "--pairs", "queerbias-de", "--sample", "20", "--model", inputs["bert"],
                 "--out", str(shared / "bias")]) == 0
    return _train_config(inputs, "base-from", eval__base_from=str(shared))


def _study_inside_its_output(inputs) -> Path:
    """S/study.yaml whose output_dir is S: the plan's study.yaml would replace it."""
    import yaml

    folder = inputs.tmp / "S"
    folder.mkdir()
    study = yaml.safe_load(_study(inputs, {}).read_text())
    path = folder / "study.yaml"
    path.write_text(yaml.safe_dump({**study, "output_dir": str(folder)}), encoding="utf-8")
    return path


def _trainer_folder(inputs) -> Path:
    """What a Hugging Face Trainer leaves in its output_dir: checkpoint-100 with its state."""
    folder = inputs.tmp / "hf-run"
    (folder / "checkpoint-100").mkdir(parents=True)
    (folder / "checkpoint-100" / "trainer_state.json").write_text('{"global_step": 100}\n')
    (folder / "checkpoint-100" / "model.safetensors").write_bytes(b"weights")
    return folder


def _model_inside_output(inputs) -> Path:
    """A training config whose model lies in a checkpoint folder inside its output_dir."""
    import shutil

    import yaml

    from train.helpers import small_config

    out = inputs.tmp / "run-inside"
    shutil.copytree(inputs["gpt2"], out / "checkpoint-1")
    path = inputs.tmp / "inside.yaml"
    path.write_text(yaml.safe_dump(small_config(out / "checkpoint-1", out)), encoding="utf-8")
    return path


def _benchmark_through_dotdot(inputs) -> Path:
    """A benchmark file named through `..` that lies inside the run's output_dir."""
    out = inputs.tmp / "run-dotdot"
    out.mkdir()
    (inputs.tmp / "elsewhere").mkdir()
    (out / "held-out.csv").write_text(PAIRS_HEADER + GOOD_ROWS, encoding="utf-8")
    return _train_config(inputs, "dotdot", output_dir=str(out), eval__benchmarks=[
        {"suite": "pairs", "data": str(inputs.tmp / "elsewhere" / ".." / "run-dotdot" / "held-out.csv")}])


def _foreign_metrics_run(inputs) -> Path:
    """A run folder holding this config's config.yaml and a metrics.jsonl that another tool wrote."""
    from queerbias.train import benchmarks
    from queerbias.train.config import load_config, save_config
    from queerbias.train.objectives.registry import get_objective

    path = _train_config(inputs, "foreign-metrics")
    config = load_config(path)
    config, _ = benchmarks.resolve(config, get_objective(config.objective).held_out)  # as the run saves it
    Path(config.output_dir).mkdir()
    save_config(config, Path(config.output_dir) / "config.yaml")
    (Path(config.output_dir) / "metrics.jsonl").write_text('{"loss": 2.5, "epoch": 0.1}\n')
    return path


def _study_changed_while_running(inputs) -> Path:
    """A study whose only cell another process is training (its lock held) and whose run config
    then changed: --force must neither delete the cell nor wait for it."""
    from queerbias.outputs import lock_file
    from queerbias.study.cells import LOCK_FILE, prepare
    from queerbias.study.config import load_study

    cells = prepare(load_study(_study(inputs, {})))
    (cells[0].folder / "config.yaml").write_text("model: started\n")
    inputs.held_fd = lock_file(cells[0].folder / LOCK_FILE, 0o644, "busy")
    return _study(inputs, {"runs": {"lm": {"overrides": {"objective": "lm", "learning_rate": 0.5}}}})


def _study_base_in_use(inputs) -> Path:
    """A study whose shared base another run is scoring now (its lock held), given other benchmarks."""
    from queerbias.outputs import lock_file
    from queerbias.study.cells import prepare
    from queerbias.study.config import load_study

    study = load_study(_study(inputs, {}))
    prepare(study)
    base = Path(study.output_dir) / "base" / "gpt2"
    base.mkdir(parents=True)
    inputs.held_fd = lock_file(base / ".lock", 0o644, "busy")
    return _study(inputs, {"benchmarks": [{"suite": "pairs", "data": "queerbias-de:test", "sample": 5}]})


def _study_with_cut_launches(inputs) -> Path:
    """A prepared study whose cell's launches file a kill cut mid-line."""
    from queerbias.study.cells import prepare
    from queerbias.study.config import load_study

    cells = prepare(load_study(_study(inputs, {})))
    cells[0].launches_file.write_text('{"started": "2026-01-01T00:00:00+00:00", "seconds": 12, "retur')
    return cells[0].folder.parents[3]


def _study_with_foreign_report(inputs) -> Path:
    """A prepared study whose report/ folder holds a file no report wrote."""
    from queerbias.study.cells import prepare
    from queerbias.study.config import load_study

    study = load_study(_study(inputs, {}))
    prepare(study)
    (Path(study.output_dir) / "report").mkdir()
    (Path(study.output_dir) / "report" / "notes.md").write_text("mine\n")
    return Path(study.output_dir)


def _finished_run(inputs) -> Path:
    """A pair run of tiny BERT on the good pairs, finished (the default margin)."""
    out = inputs.tmp / "finished"
    assert main(["score", "--no-progress", "--pairs", inputs["pairs"], "--model", inputs["bert"],
                 "--out", str(out)]) == 0
    return out


# -- issue 49: bounded inputs, strict records, identity ------------------------------------

def _alias_bomb(levels: int = 10) -> str:
    """A YAML flow list whose aliases stand for 10**levels values (`&a1 [*a0, *a0, ...]`)."""
    node = "&a0 [x, x, x, x, x, x, x, x, x, x]"
    for level in range(1, levels):
        node = f"&a{level} [{node}, " + ", ".join([f"*a{level - 1}"] * 9) + "]"
    return node


def _study_text(inputs, name: str, extra: str) -> Path:
    """A study file of one model, run and seed written as text (what yaml.safe_dump cannot write), plus `extra`."""
    return _write(inputs, name, "models: {gpt2: some/model}\nruns: {lm: {overrides: {objective: lm}}}\n"
                                "benchmarks: [{suite: pairs, data: 'queerbias-de:test', sample: 4}]\n" + extra)


def _news_with_fifo_state(inputs) -> Path:
    folder = _folder(inputs, "news-fifo")
    os.mkfifo(folder / "state.json")
    return folder


def _prepared_study(inputs, change) -> Path:
    """A prepared study (no cell run) whose first cell `change(cell, root)` edits."""
    from queerbias.study.cells import prepare
    from queerbias.study.config import load_study

    study = load_study(_study(inputs, {}))
    cells = prepare(study)
    change(cells[0], Path(study.output_dir))
    return Path(study.output_dir)


def _plan_pointing_elsewhere(cell, root: Path) -> None:
    import json

    plan = json.loads((root / "plan.json").read_text())
    plan["cells"][0]["folder"] = "../elsewhere/run"
    (root / "plan.json").write_text(json.dumps(plan))


def _hard_linked_config(inputs) -> Path:
    """A folder holding a hard link of a run's config.yaml (the run is {card_run})."""
    folder = _folder(inputs, "linked")
    os.link(Path(inputs["card_run"]) / "config.yaml", folder / "config.yaml")
    return folder


def _nan_base_adapter(inputs) -> Path:
    """A LoRA adapter of tiny BERT whose base is the copy with a NaN weight."""
    import json

    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForMaskedLM

    folder = inputs.models / "nan-base-adapter"
    if not folder.exists():
        model = get_peft_model(AutoModelForMaskedLM.from_pretrained(inputs["bert"]),
                               LoraConfig(r=2, target_modules=["query"]))
        model.save_pretrained(folder)
        config = json.loads((folder / "adapter_config.json").read_text())
        (folder / "adapter_config.json").write_text(json.dumps({**config, "base_model_name_or_path": inputs["nan_bert"]}))
    return folder


METRICS_LINE = '{"step": 0, "epoch": 0.0, "perplexity": null, "general_perplexity": null, "benchmarks": {}}'
HUGE = "9" * 5000


BUILDERS = {
    "tmp": lambda i: i.tmp,
    "bert": lambda i: i.request.getfixturevalue("tiny_bert"),
    "gpt2": lambda i: i.request.getfixturevalue("tiny_gpt2"),
    "xlm": lambda i: i.request.getfixturevalue("tiny_xlm"),
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
    "knowledge_not_pairs": lambda i: _write(i, "knowledge.csv", "pair_id,sent_more,sent_less,group,fact\n"
                                            "k1,Schwule Männer lieben Männer.,Heteros lieben Männer.,gay,f1\n"
                                            "k2,Lesben lieben Frauen.,,lesbian,f2\n"),
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
    "unlisted_store": _unlisted_store,
    "bad_deny_list": lambda i: _write(i, "deny.csv", "#domain,#severity\nbücher.example,suspend\nkein host!,silence\n"),
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
    # issue 21: outputs that would replace inputs
    "x_pairs": lambda i: _in_folder(i, "X", "pairs.csv", PAIRS_HEADER + GOOD_ROWS),
    "x_docs": lambda i: _in_folder(i, "X", "docs.jsonl", '{"text": "Ein Text."}\n'),
    "bert_copy": lambda i: _model_variant(i, "copy", "bert", lambda folder: None),
    "gpt2_copy": lambda i: _model_variant(i, "gpt2-copy", "gpt2", lambda folder: None),
    "locked": _locked,
    # issue 21: the strict record reader
    "dup_column": lambda i: _write(i, "dup-col.csv", "sent_more,sent_less,sent_less,stereo_antistereo,bias_type\n"
                                   "Schwule Männer sind nett.,Heterosexuelle Männer sind nett.,x,stereo,gay\n"),
    "dup_key": lambda i: _jsonl(i, "dup-key.jsonl", ['{' + GOOD_JSON + ', "bias_type": "gay", "bias_type": "trans"}']),
    "list_value": lambda i: _jsonl(i, "list.jsonl", ['{' + GOOD_JSON + ', "bias_type": ["gay"]}']),
    "number_value": lambda i: _jsonl(i, "number.jsonl", ['{' + GOOD_JSON.replace('"Schwule Männer sind nett."', "7")
                                                         + ', "bias_type": "gay"}']),
    "nan_value": lambda i: _jsonl(i, "nan.jsonl", ['{' + GOOD_JSON + ', "bias_type": "gay", "score": NaN}']),
    "both_layouts": lambda i: _write(i, "both.csv", "Gender_ID_x,sent_x,sent_y,sent_more,sent_less,stereo_antistereo,"
                                     "bias_type\nGay,A ist nett.,B ist nett.,B ist nett.,A ist nett.,stereo,straight\n"),
    "long_jsonl": lambda i: _jsonl(i, "long.jsonl", ['{' + GOOD_JSON + ', "bias_type": "gay", "note": "'
                                                     + "x" * 140_000 + '"}']),
    # issue 21: labels and sentences that print like others
    "zwsp_group": lambda i: _write(i, "zwsp.csv", PAIRS_HEADER + GOOD_ROWS.replace(",gay", ",g\u200bay", 1)),
    # issue 46: a group cell may name several groups, but must name one
    "no_group_label": lambda i: _write(i, "no-label.csv", PAIRS_HEADER + GOOD_ROWS.replace(",gay", ",\"; ,\"", 1)),
    "cyrillic_group": lambda i: _write(i, "cyrillic.csv", PAIRS_HEADER + GOOD_ROWS.replace(",gay", ",g\u0430y", 1)),
    "nul_group": lambda i: _jsonl(i, "nul.jsonl", ['{' + GOOD_JSON + ', "bias_type": "gay\\u0000"}']),
    "zwsp_sentence": lambda i: _write(i, "zwsp-sentence.csv", PAIRS_HEADER + GOOD_ROWS.replace(
        "Heterosexuelle", "Hetero\u200bsexuelle", 1)),
    "bidi_sentence": lambda i: _write(i, "bidi.csv", PAIRS_HEADER + GOOD_ROWS.replace("Schwule", "\u202eSchwule", 1)),
    # issue 21: pairs that measure nothing
    "end_pair": lambda i: _write(i, "end.csv", PAIRS_HEADER + GOOD_ROWS + "Anna ist schwul,Anna ist hetero,stereo,gay\n"),
    "no_shared": lambda i: _write(i, "no-shared.csv", PAIRS_HEADER + GOOD_ROWS + "Schwul,Hetero,stereo,gay\n"),
    # issue 21: model folders that crashed or hung
    "int_weights": lambda i: _model_variant(i, "int-weights", "bert", _int_weights),
    "fifo_model": lambda i: _model_variant(i, "fifo-model", "bert", _fifo_in_model),
    "bad_adapter": lambda i: _model_variant(i, "bad-adapter", "bert", _bad_adapter),
    "small_vocab": lambda i: _model_variant(i, "small-vocab", "bert", _small_vocabulary),
    # -- study (issue 24): study files, checked whole before any cell runs ---------------------
    **{f"study_{name}": (lambda i, changes=changes: _study(i, changes)) for name, changes in {
        "ok": {},
        "negative_seed": {"seeds": [0, -1]},
        "twice_seed": {"seeds": [0, 0]},
        "unknown_key": {"modles": {}},
        "missing_run_config": {"runs": {"lm": "no-such-config.yaml"}},
        "bad_override": {"runs": {"lm": {"overrides": {"learning_rate": -1}}}},
        "sets_seed": {"runs": {"lm": {"overrides": {"seed": 3}}}},
        "no_data": {"benchmarks": [{"suite": "pairs", "sample": 4}]},
        "unknown_exclude": {"exclude": [{"model": "nope"}]},
        "excludes_all": {"exclude": [{"run": "lm"}]},
    }.items()},
    "study_dup_model": lambda i: _write(i, "dup-model.yaml", "models:\n  gpt2: a\n  gpt2: b\nruns: {lm: x.yaml}\n"
                                        "seeds: [0]\n"),
    "study_case": lambda i: _study(i, {"models": {"GPT2": "a", "gpt2": "b"}}),
    "study_other": lambda i: _study_folder_of_another_config(i),
    "base_from_other_model": lambda i: _base_of_another_model(i),
    # -- end of the study block --------------------------------------------------------------------
    # -- issue 34: write paths the guard did not see, folders of other tools, the last tracebacks --
    "x_split": lambda i: f"{i['x_pairs']}:test?by=group",
    "study_inside": _study_inside_its_output,
    "study_run_config": lambda i: _study(i, {"runs": {"lm": str(_train_config(i, "study-run"))}}),
    "trainer_folder": lambda i: _train_config(i, "trainer", output_dir=str(_trainer_folder(i))),
    "model_inside": _model_inside_output,
    "dotdot_benchmark": _benchmark_through_dotdot,
    "big_seed": lambda i: _train_config(i, "big-seed", seed=2**32),
    "big_rank": lambda i: _train_config(i, "big-rank", lora__r=4096),
    "anchor_under_lm": lambda i: _train_config(i, "anchor-lm", equalise__anchor_term=10.0),
    "dpo_other_pairs": lambda i: _train_config(i, "dpo-other", objective="dpo", pairs__train=i["pairs"],
                                               eval__benchmarks=HELD_OUT),
    "foreign_metrics": _foreign_metrics_run,
    "foreign_metrics_card": lambda i: _folder(i, "card-run", {"config.yaml": "model: x\n",
                                                              "metrics.jsonl": '{"loss": 0.5, "epoch": 1}\n'}),
    "foreign_config": lambda i: _folder(i, "config-run", {"config.yaml": "model: a\nmodel: b\n"}),
    "chunked": lambda i: _in_folder(i, "chunked/.partial", "rank0.jsonl", '{"step": 1, "loss": 0.5}\n').parents[1],
    "study_busy": _study_changed_while_running,
    "study_cut_launches": _study_with_cut_launches,
    "study_base_busy": _study_base_in_use,
    "study_foreign_report": _study_with_foreign_report,
    "export_foreign_utils": lambda i: _folder(i, "task", {"utils.py": "print('mine')\n"}),
    "finished_run": _finished_run,
    "foreign_summary": lambda i: _folder(i, "results", {"summary.json": '{"accuracy": 0.9}\n'}),
    # -- issue 49 --
    "bomb_train": lambda i: _write(i, "bomb.yaml", "model: x\nobjective: equalise\ndata: {train: corpora/demo}\n"
                                   f"pairs:\n  train: 'queerbias-de:train'\n  mine_lexicons:\n    de: {_alias_bomb()}\n"),
    "bomb_study": lambda i: _study_text(i, "study-bomb.yaml", "seeds: [0]\ntraining:\n  overrides:\n"
                                        f"    data: {{train: corpora/demo}}\n    pairs: {{mine_lexicons: {{de: {_alias_bomb()}}}}}\n"),
    "cyclic_yaml": lambda i: _write(i, "cyclic.yaml", "runs: &a [1, *a]\n"),
    "huge_seed": lambda i: _write(i, "huge-seed.yaml", f"model: x\ndata: {{train: corpora/demo}}\nseed: {HUGE}\n"),
    "huge_study_seed": lambda i: _study_text(i, "study-huge.yaml", f"seeds: [{HUGE}]\n"),
    "huge_pair_id": lambda i: _jsonl(i, "huge-id.jsonl", ['{"pair_id": ' + HUGE + ", " + GOOD_JSON + ', "bias_type": "gay"}']),
    "deep_study": lambda i: _study_text(i, "study-deep.yaml", "seeds: [0]\nexclude: " + "[" * 20_000 + "]" * 20_000 + "\n"),
    "deep_jsonl": lambda i: _jsonl(i, "deep.jsonl", ["{" + GOOD_JSON + ', "bias_type": "gay", "note": '
                                                     + "[" * 100_000 + "]" * 100_000 + "}"]),
    "news_fifo_state": _news_with_fifo_state,
    "crlf": lambda i: "me@example.org\r\nX-Injected: 1",
    "appended_metrics": lambda i: _folder(i, "appended", {"config.yaml": "model: x\n",
                                                          "metrics.jsonl": METRICS_LINE + '\n{"step": 6}\n'}),
    "study_foreign_plan": lambda i: _prepared_study(i, _plan_pointing_elsewhere),
    "study_launch_unstarted": lambda i: _prepared_study(i, lambda cell, root: cell.launches_file.write_text(
        '{"launch": "a", "seconds": 3.0, "returncode": 0}\n')),
    "study_launch_gestern": lambda i: _prepared_study(i, lambda cell, root: cell.launches_file.write_text(
        '{"launch": "a", "started": "gestern"}\n')),
    "dpo_bogus": lambda i: _train_config(i, "dpo-bogus", objective="dpo", pairs__train="queerbias-de:train",
                                         eval__benchmarks=HELD_OUT, dpo__loss_type="bogus"),
    "dotdot_name": lambda i: _train_config(i, "dotdot-name", eval__benchmarks=[{**HELD_OUT[0], "name": ".."}]),
    "nan_base_adapter": _nan_base_adapter,
    "nul_row": lambda i: _write(i, "nul-row.csv", PAIRS_HEADER + GOOD_ROWS * 10 + "Anna ist\x00 da.,Anna ist dort.,stereo,gay\n"),
    "card_run": lambda i: _folder(i, "card-run-linked", {"config.yaml": "model: x\n"}),
    "linked": _hard_linked_config,
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
NEWS = "crawl news --out {tmp}/news --feed http://127.0.0.1:9/feed --contact me@example.org"
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
    # the knowledge set (issue 20): rows that are not pairs get the pair reader's error
    ("run knowledge --data {knowledge_not_pairs} --model {gpt2} --out {tmp}/k", 2,
     "knowledge.csv, row 3, field 'sent_less': empty value"),
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
    # XLM (issue 28): a kind its config cannot tell, a language it lacks or none at all
    ("score --pairs {pairs} --model {xlm}", 2, "XLMWithLMHeadModel serves masked and causal LMs alike"),
    ("score --pairs {pairs} --model {xlm} --kind causal --lang fr", 2, "knows the languages de, en, not 'fr' "
                                                                        "(--lang)"),
    ("score --pairs {pairs} --model {xlm} --kind masked", 2, "adds a language embedding to every token (de, en), "
                                                             "and the data declares no language; pass --lang"),
    # score: what the model makes of the pairs
    (SCORE.replace("{pairs}", "{long_pair}"), 2, "pair 3 has a sentence of 302 tokens, more than the model takes (128)"),
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
    ("corpus build --name x --source {unlisted_store}/posts.jsonl --key-file {tmp}/crawl.key -o {tmp}/corpus", 2,
     "tombstones.json: missing: this folder's list of removed posts and authors cannot be read"),
    ("crawl news --out {tmp}/news --feeds-file {fifo} --contact me@example.org", 2,
     "feeds file is not a regular file"),
    ("crawl mastodon --out {tmp}/m --instance http://127.0.0.1:9 --contact me@example.org --deny-list {bad_deny_list}",
     2, "deny.csv, row 3, field 'domain': not a host name: 'kein host!'"),
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
    ("train --config {seed}", 2, "config key 'seed' must be between 0 and 4,294,967,295, got -1"),
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
    (SCORE + " --seed -1", 2, "--seed must be between 0 and 4,294,967,295, got -1"),
    (SCORE + " --decimals nan", 2, "--decimals must be an integer, got 'nan'"),
    ("run gifi --temperature nan", 2, "--temperature must be a (finite) number, got 'nan'"),
    ("run gifi --top-p inf", 2, "--top-p must be a (finite) number, got 'inf'"),
    ("compare {pairs} {pairs} --out {tmp}/d --seed -1", 2, "--seed must be between 0 and 4,294,967,295, got -1"),
    ("compare {pairs} {pairs} --out {tmp}/d --ppl-margin nan", 2,
     "--ppl-margin must be a (finite) number, got 'nan'"),
    # -- end of the block --
    # issue 21: no output replaces an input, and no folder is written by two processes
    ("score --pairs {x_pairs} --model {bert} --out {tmp}/X", 2, "X contains the input"),
    ("score --pairs {pairs} --model {bert_copy} --out {bert_copy}/out", 2, "lies inside the input folder"),
    ("card {bad_metrics_run} --out {bad_metrics_run}/config.yaml", 2, "config.yaml is the input"),
    ("corpus build --name x --source {x_docs} -o {tmp}/X", 2, "corpus output folder"),
    ("gruff generate --templates {latin1_gruff} --out {latin1_gruff}/task.tsv", 2, "lies inside the input folder"),
    (SCORE.replace("{tmp}/out", "{locked}"), 2, "is in use by another running queerbias process"),
    # issue 21: the strict record reader
    ("score --pairs {dup_column} --model {bert}", 2, "columns 2 and 3 are both named 'sent_less'"),
    ("score --pairs {dup_key} --model {bert}", 2, "the key 'bias_type' appears twice"),
    ("score --pairs {list_value} --model {bert}", 2, "field 'bias_type': must be text, got the JSON list"),
    ("score --pairs {number_value} --model {bert}", 2, "field 'sent_more': must be text, got the JSON number 7"),
    ("score --pairs {nan_value} --model {bert}", 2, "non-finite number NaN"),
    ("score --pairs {both_layouts} --model {bert}", 2, "has the columns of several layouts, winoqueer"),
    ("score --pairs {both_layouts} --model {bert} --layout sideways", 2, "--layout must be one of auto"),
    ("score --pairs {long_jsonl} --model {bert}", 2, "field 'note': a value is longer than 131072 characters"),
    # issue 21: labels and sentences that print like others
    ("score --pairs {zwsp_group} --model {bert}", 2, "the group label holds the invisible or control character "
                                                    "U+200B (ZERO WIDTH SPACE)"),
    ("score --pairs {cyrillic_group} --model {bert}", 2, "mixes CYRILLIC and LATIN letters"),
    ("score --pairs {no_group_label} --model {bert}", 2, "no-label.csv, row 2, field 'bias_type': no group label"),
    ("score --pairs {nul_group} --model {bert}", 2, "U+0000"),
    ("score --pairs {zwsp_sentence} --model {bert}", 2, "row 2, field 'sent_less': the sentence holds the invisible"),
    ("score --pairs {bidi_sentence} --model {bert}", 2, "U+202E (RIGHT-TO-LEFT OVERRIDE)"),
    # issue 21: pairs that measure nothing
    (SCORE.replace("{pairs}", "{end_pair}").replace("{bert}", "{gpt2}"), 2,
     "row 4: pair 3 measures nothing: with a causal LM every scored token comes before"),
    (SCORE.replace("{pairs}", "{no_shared}"), 2, "pair 3 measures nothing: neither sentence has a token that is scored under scope shared (they share none)"),
    ("export lm-eval --pairs {end_pair} --model {gpt2} --out {tmp}/task", 2, "pair 3 measures nothing"),
    # issue 21: model folders
    ("score --pairs {pairs} --model {int_weights}", 2, "is stored as I64 (integers)"),
    ("score --pairs {pairs} --model {fifo_model}", 2, "notes.txt: a file of a model folder is not a regular file "
                                                      "but a FIFO"),
    ("score --pairs {pairs} --model {bad_adapter}", 2, "adapter_config.json: not a valid adapter config"),
    ("score --pairs {pairs} --model {small_vocab}", 2, "the tokenizer has 178 tokens but the model's embedding has "
                                                       "100 rows"),
    # -- study (issue 24): the study file is checked whole before any cell runs ------------------
    ("study --config {study_dup_model}", 2, "duplicate key 'gpt2' on lines 2 and 3"),
    ("study --config {study_case}", 2, "names 'GPT2' and 'gpt2' differ only in case"),
    ("study --config {study_negative_seed}", 2, "study key 'seeds[1]' must be a non-negative integer, got -1"),
    ("study --config {study_twice_seed}", 2, "study key 'seeds[1]': seed 0 is listed twice"),
    ("study --config {study_unknown_key}", 2, "study key 'modles' is unknown"),
    ("study --config {study_missing_run_config}", 2, "study cell gpt2/lm/seed-0: no-such-config.yaml"),
    ("study --config {study_bad_override}", 2, "study cell gpt2/lm/seed-0: config key 'learning_rate' must be "
                                               "positive"),
    ("study --config {study_sets_seed}", 2, "'runs.lm.overrides.seed': seed is set by the study"),
    ("study --config {study_no_data}", 2, "study key 'benchmarks[0].data' is required"),
    ("study --config {study_unknown_exclude}", 2, "study key 'exclude[0].model' names 'nope'"),
    ("study --config {study_excludes_all}", 2, "study key 'exclude' leaves no cell to run"),
    ("study --config {study_ok} --jobs 0", 2, "--jobs must be a positive integer, got 0"),
    ("study --config {study_other}", 2, "holds a study made by another config (differs in seeds)"),
    ("study", 2, "--config is required"),
    ("study report {tmp}", 2, "not a study folder (no study.yaml)"),
    ("train --config {base_from_other_model}", 2, "holds a base evaluation of another model (weights fingerprint)"),
    # -- end of the study block --------------------------------------------------------------------
    # -- issue 34: every path resolved before the guard (split suffixes, .., ~), folders of other tools --
    ("score --pairs {x_split} --model {bert} --out {tmp}/X", 2, "X contains the input"),
    ("export lm-eval --pairs {x_split} --model {gpt2} --out {tmp}/X", 2, "X contains the input"),
    ("study plan --config {study_inside}", 2, "contains the input"),
    ("study plan --config {study_ok} --slurm-out {study_ok}", 2, "--slurm-out"),
    ("study plan --config {study_run_config} --slurm-out {tmp}/study-run.yaml", 2, "is the input"),
    ("train --config {trainer_folder}", 2, "hf-run is a Hugging Face Trainer output folder "
                                           "(checkpoint-100/trainer_state.json shows it)"),
    ("train --config {model_inside}", 2, "run-inside contains the input"),
    ("train --config {dotdot_benchmark}", 2, "run-dotdot contains the input"),
    ("score --pairs {pairs} --model {bert_copy} --out {gpt2}", 2, "is a model folder (config.json shows it)"),
    ("export lm-eval --pairs {pairs} --model {gpt2} --out {export_foreign_utils} --overwrite", 2,
     "holds utils.py, which no `queerbias export lm-eval` wrote"),
    # an empty path is an error everywhere (argparse read '' as the working folder)
    ("compare {pairs} {pairs} --out ''", 2, "argument --out: an empty value names no file or folder"),
    ("report {pairs} --out ''", 2, "argument --out: an empty value names no file or folder"),
    ("export lm-eval --pairs {pairs} --model {gpt2} --out ''", 2, "argument --out: an empty value"),
    ("card {tmp} --out ''", 2, "argument --out: an empty value"),
    ("score --pairs '' --model {bert}", 2, "argument --pairs: an empty value names nothing"),
    ("score --pairs {pairs} --model ''", 2, "argument --model: an empty value names nothing"),
    ("compare '' {pairs} --out {tmp}/d", 2, "an empty value names no run folder"),
    ("corpus build --name x --source '' -o {tmp}/c", 2, "--source '': names no file"),
    ("study --config ''", 2, "argument --config: an empty value"),
    ("train --config ''", 2, "argument --config: an empty value"),
    # numbers that reach a library
    (SCORE + " --seed 4294967296", 2, "--seed must be between 0 and 4,294,967,295, got 4,294,967,296"),
    ("train --config {big_seed}", 2, "config key 'seed' must be between 0 and 4,294,967,295, got 4,294,967,296"),
    ("compare {pairs} {pairs} --out {tmp}/d --seed 4294967296", 2, "--seed must be between 0 and 4,294,967,295, got 4,294,967,296"),
    ("score --pairs queerbias-de:test?seed=4294967296 --model {bert}", 2, "seed must be between 0 and 4,294,967,295"),
    ("train --config {big_rank}", 2, "config key 'lora.r' is 4096, larger than the layer"),
    # foreign files in a run folder: the strict reader names the file and line
    ("train --config {foreign_metrics}", 2, "metrics.jsonl, row 1, field 'step': a metrics line without its "
                                            "integer step"),
    ("card {foreign_metrics_card}", 2, "metrics.jsonl, row 1, field 'step'"),
    ("card {foreign_config}", 2, "config.yaml: duplicate key 'model' on lines 1 and 2"),
    (SCORE.replace("{tmp}/out", "{chunked}"), 2, "rank0.jsonl, row 1: not a progress record"),
    ("study report {study_cut_launches}", 2, "study-cell-launches.jsonl, row 1: invalid JSON"),
    ("study --config {study_busy} --force", 2, "another process is running it; nothing was deleted"),
    ("study --config {study_base_busy} --force", 2, "another process is scoring there; nothing was deleted"),
    ("study report {study_foreign_report}", 2, "report is no report this study wrote (no status.json)"),
    # messages that name the key and the fix
    ("train --config {anchor_under_lm}", 2, "config key 'equalise.anchor_term' is set, but objective lm does not "
                                            "read the equalise section"),
    ("train --config {dpo_other_pairs}", 2, "or choose objective: equalise, which trains on any pair set"),
    ("score --pairs {pairs} --model {bert} --out {finished_run} --margin 1.5", 2,
     "other settings: margin (0.693 in the folder, 1.5 now)"),
    (SCORE.replace("{tmp}/out", "{foreign_summary}") + " --overwrite", 2,
     "summary.json is no summary a queerbias run wrote (no run key); --overwrite replaces only a run's"),
    # -- issue 49: hangs ------------------------------------------------------------------------
    ("train --config {bomb_train}", 2, "bomb.yaml: its aliases repeat 11,111,111,091 values, more than 100,000"),
    ("study --config {bomb_study}", 2, "study-bomb.yaml: its aliases repeat 11,111,111,091 values"),
    ("gifi run --config {cyclic_yaml}", 2, "cyclic.yaml: an alias names a value that contains the alias itself"),
    (NEWS.replace("{tmp}/news", "{news_fifo_state}"), 2, "state.json: crawl state is not a regular file but a FIFO"),
    (NEWS + " --delay 1e7", 2, "argument --delay: must be at most 60, got 1e+07"),
    (NEWS + " --delay inf", 2, "argument --delay: must be a finite number of seconds, got 'inf'"),
    (NEWS + " --timeout nan", 2, "argument --timeout: must be a finite number of seconds, got 'nan'"),
    ("gifi run --runs 1000000000", 2, "--runs must be between 1 and 100, got 1,000,000,000"),
    # -- issue 49: silently wrong ------------------------------------------------------------------
    ("card {appended_metrics}", 2, "metrics.jsonl, row 2, field 'epoch': a metrics line without its epoch"),
    ("study report {study_foreign_plan}", 2, "plan.json: cell 0 is not cell gpt2/lm/seed-0 of the study in "
                                              "runs/gpt2/lm/seed-0"),
    (SCORE.replace("{pairs}", "{nul_row}") + " --sample 1", 2, "nul-row.csv, row 22: a NUL byte at byte"),
    ("card {card_run} --out {linked}/config.yaml", 2, "config.yaml is the input"),
    # -- issue 49: still open from issue 34 ----------------------------------------------------------
    ("score --pairs {pairs} --model {nan_base_adapter}", 2, "nan-bert: its weights hold NaN or infinity"),
    ("train --config {dotdot_name}", 2, "config key 'eval.benchmarks[0].name' names a folder, so it must be letters"),
    # -- issue 49: tracebacks ----------------------------------------------------------------------
    # integers of 5,000 digits (Python's int() takes 4,300) in a config, an override, a study, a JSONL id
    ("train --config {huge_seed}", 2, "huge-seed.yaml: an integer of 5,000 digits, more than the 100"),
    ("train --config {train_ok} seed=" + HUGE, 2, "an integer of 5,000 digits, more than the 100"),
    ("study --config {huge_study_seed}", 2, "study-huge.yaml: an integer of 5,000 digits"),
    ("score --pairs {huge_pair_id} --model {bert}", 2, "huge-id.jsonl, row 1: an integer of 5,000 digits"),
    # nesting beyond the interpreter's recursion: 20,000 lists in a study, 100,000 arrays in an unread field
    ("study --config {deep_study}", 2, "study-deep.yaml: lists or mappings nested more than 100 deep"),
    ("score --pairs {deep_jsonl} --model {bert}", 2, "deep.jsonl, row 1: lists or mappings nested more than 100 deep"),
    # a launch without its start time, or one that is no time
    ("study report {study_launch_unstarted}", 2, "study-cell-launches.jsonl, row 1, field 'started': launch 'a' has "
                                                  "no start time"),
    ("study report {study_launch_gestern}", 2, "study-cell-launches.jsonl, row 1, field 'started': the start time "
                                                "'gestern' is no ISO date and time"),
    ("train --config {dpo_bogus}", 2, "config key 'dpo.loss_type' must be one of sigmoid, hinge, ipo"),
    # the test server's numbers
    ("crawl test-server --port 70000", 2, "argument --port: must be at most 65,535, got 70,000"),
    ("crawl test-server --posts 100000000", 2, "argument --posts: must be at most 10,000, got 100,000,000"),
    # -- issue 49: unclear ---------------------------------------------------------------------------
    (NEWS.replace("me@example.org", "'{crlf}'"), 2,
     "holds the control character '\\r'; an HTTP header is one line of text"),
]


ON_PREPARED_RUNS = [
    ("sample 0", lambda t: ["run", "pairs", "--sample", "0", "--out", str(t / "o")], "--sample must be at least 1"),
    ("sample negative", lambda t: ["score", "--sample", "-3", "--out", str(t / "o")], "--sample must be at least 1"),
    ("margin 0", lambda t: ["run", "knowledge", "--margin", "0"], "--margin must be a positive number of nats"),
    ("chunk 0", lambda t: ["score", "--chunk-pairs", "0", "--out", str(t / "o")], "--chunk-pairs must be at least 1"),
    ("batch 0", lambda t: ["run", "gruff", "--batch-size", "0"], "--batch-size must be auto or a positive integer"),
    ("not a number", lambda t: ["run", "lou", "--sample", "many"], "--sample must be an integer"),
    ("unknown choice", lambda t: ["run", "gruff", "--settings", "d9"], "--settings[0] must be one of none, d0"),
    ("empty --out", lambda t: ["run", "gruff", "--out", ""], "argument --out: an empty value names no file or folder"),
    ("--out is a file", lambda t: ["score", "--out", str(pair_run(t) / "pairs.csv")], "is a file, not a directory"),
    ("gifi config a list", lambda t: ["gifi", "run", "--config", config_file(t, "- a\n- b\n")],
     "a GIFI config must be a YAML mapping of keys to values, not a list"),
    ("gifi config a number", lambda t: ["gifi", "run", "--config", config_file(t, "3\n")],
     "a GIFI config must be a YAML mapping of keys to values, not a number"),
    ("gifi config unknown key", lambda t: ["gifi", "run", "--config", config_file(t, "limits: 3\n")],
     "config.yaml.limits is unknown"),
    ("gifi config a FIFO", lambda t: ["gifi", "run", "--config", fifo(t)], "fifo.yaml: GIFI config is not a regular file but a FIFO"),
    ("one run", lambda t: compare(pair_run(t)), "need a BEFORE and at least one AFTER run"),
    ("missing run", lambda t: compare(pair_run(t), t / "missing"), "missing: no such run folder (nothing is there)"),
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
     "99 stereotype pairs, but the run scored 100"),
    ("unknown suite", lambda t: compare(pair_run(t), summary_edit(pair_run(t, "b"), lambda s: s.update(suite="x"))),
     "unknown suite 'x'"),
    ("old gruff run", lambda t: compare(pair_run(t), summary_edit(pair_run(t, "b"), lambda s: (
        s.pop("overall"), s["meta"].update(suite="gruff")))), "written before the suites shared one run format"),
    # issue 21: outputs, bounds and summaries that do not follow from their rows
    ("compare into a run", lambda t: [*compare(pair_run(t), pair_run(t, "b"))[:-4], "--out", str(t / "a" / "delta")],
     "lies inside the input folder"),
    ("report over its run", lambda t: ["report", str(pair_run(t)), "--out", str(t)], "contains the input"),
    ("resamples 0 before scoring", lambda t: ["compare", "--model", "m1", "--model", "m2", "--pairs", "x",
                                              "--out", str(t / "d"), "--resamples", "0"],
     "--resamples must be between 1 and 1,000,000, got 0"),
    ("resamples huge", lambda t: [*compare(pair_run(t), pair_run(t, "b"))[:-1], "10000000000"],
     "--resamples must be between 1 and 1,000,000, got 10,000,000,000"),
    ("negative seed", lambda t: [*compare(pair_run(t), pair_run(t, "b")), "--seed", "-1"], "--seed must be between 0 and 4,294,967,295, got -1"),
    ("NaN perplexity margin", lambda t: [*compare(pair_run(t), pair_run(t, "b")), "--ppl-margin", "nan"],
     "--ppl-margin must be a (finite) number, got 'nan'"),
    ("edited headline", lambda t: compare(pair_run(t), summary_edit(pair_run(t, "b"), lambda s: s["overall"].update(
        bias_score=99.0))), "headline.overall (99.0 written"),
    ("summary a FIFO", lambda t: compare(pair_run(t), fifo_summary(pair_run(t, "b"))),
     "summary.json: run summary is not a regular file but a FIFO"),
    ("newer schema", lambda t: compare(pair_run(t), summary_edit(pair_run(t, "b"),
                                                                 lambda s: s.update(schema_version=99))),
     "written by a newer queerbias"),
    # -- issue 21 item 5 and issue 23 (branch structure): criterion names, checkpoint order --
    ("unknown criterion", lambda t: [*compare(pair_run(t), pair_run(t, "b")), "--best", "fastest"],
     "best-checkpoint criterion 'fastest' is not one of suite pairs (its criteria: closest50, lowest, distance, guarded, association)"),
    ("another suite's criterion", lambda t: (lambda g: ["compare", f"a={g}", f"b={g}", "--out", str(t / "d"),
                                                         "--best", "distance"])(gruff_run(t)),
     "criterion 'distance' is not one of suite gruff (its criteria: highest)"),
    ("checkpoints in reverse order", lambda t: compare(*(summary_edit(pair_run(t, name), lambda s, at=at: s["meta"].update(step=at))
                                                         for name, at in (("late", 8), ("base", 0)))),
     "base (step 0) does not come after late (step 8); give BEFORE first"),
    # -- end of the block --
]


ROWS = ([pytest.param(command, status, fragment, id=f"{i:02d} {command[:160]}")
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
    inputs = Inputs(tmp_path, model_variants, request)
    if callable(command):
        argv = command(tmp_path)
    else:
        argv = shlex.split(command.format_map(inputs))
    existing = set(tmp_path.rglob("*"))
    before = checksums([tmp_path, *inputs.values()])
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
    changed = sorted(str(path) for path, digest in before.items() if checksums([path]).get(path) != digest)
    assert not changed, f"a refused run changed or deleted {changed}"


def checksums(roots) -> dict[Path, str]:
    """sha256 of every regular file at or under `roots` (paths and folders; other values skipped)."""
    import hashlib
    import stat

    found = {}
    for root in roots:
        root = Path(str(root))
        if not root.exists():
            continue
        for path in [root] if root.is_file() else sorted(root.rglob("*")):
            if stat.S_ISREG(path.lstat().st_mode):
                found[path] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


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
    from queerbias.scoring.scorer import NonFiniteScores
    from queerbias.suites.pairs.scoring import pair_outcome

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


@pytest.mark.parametrize(("launch", "config", "message"), [
    *[(launch, config, message) for launch in sorted(LAUNCHES) for config, message in (
        ("dup", "{config}: duplicate key 'seed' on lines 2 and 3; YAML keys must be unique (the second would "
                "silently win)"),
        ("diverging", "held-out perplexity is not finite"),  # refused once the processes train together
    )],
    # issue 34: the evaluation scripts end the launch the same way (GIFI with temperature nan printed two lines)
    ("2 processes", "gifi", "queerbias gifi: error: --temperature must be a (finite) number, got 'nan'"),
])
def test_accelerate_launch_shows_only_our_line(launch, config, message, tmp_path, request):
    """accelerate's launchers would add a CalledProcessError traceback (one process) or torch
    elastic's failure summary and a line per process (several)."""
    path = None
    if config == "dup":
        path = tmp_path / "dup.yaml"
        path.write_text("model: x\nseed: 1\nseed: 2\n", encoding="utf-8")
    elif config == "diverging":
        path = _train_config(Inputs(tmp_path, tmp_path, request), config, learning_rate=1000, method="full")
    script = ["eval/gifi.py", "run", "--temperature", "nan"] if config == "gifi" else \
        ["train/finetune.py", "--config", str(path)]
    accelerate = Path(sys.executable).parent / "accelerate"
    result = subprocess.run([str(accelerate), "launch", *LAUNCHES[launch], "--num_machines", "1",
                             "--mixed_precision", "no", "--dynamo_backend", "no", str(REPO / script[0]), *script[1:]],
                            capture_output=True, text=True, timeout=300,
                            env={**os.environ, "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""})
    assert result.returncode != 0
    assert "Traceback" not in result.stderr and "FAILED" not in result.stderr, result.stderr[-3000:]
    errors = [line for line in result.stderr.splitlines() if "error" in line.lower()]
    # once, beside the demo on a busy machine, this launch failed with an empty stderr: say what there is
    assert len(errors) == 1 and errors[0].startswith("queerbias "), \
        f"exit {result.returncode}; stdout: {result.stdout[-1500:]!r}; stderr: {result.stderr[-3000:]!r}"
    assert message.format(config=path) in errors[0]


# What accelerate still says when it chooses a CPU process's thread count itself (OMP_NUM_THREADS unset, more
# than one physical core per process): its config has no key for the count, so setup cannot settle it.
ACCELERATE_THREAD_LINES = (
    "The following values were not passed to `accelerate launch` and had defaults used instead:",
    re.compile(r"\t`--num_cpu_threads_per_process` was set to `\d+` to improve out-of-box performance when "
               r"training on CPUs"),
    "To avoid this warning pass in values for each of the problematic parameters or run `accelerate config`.",
)


@pytest.mark.parametrize("threads", ["1", None], ids=["OMP_NUM_THREADS=1", "OMP_NUM_THREADS-unset"])
def test_a_bare_accelerate_launch_after_setup_is_one_process_without_warnings(threads, tmp_path):
    """`accelerate launch train/finetune.py` with no flags: setup writes accelerate's default config where
    there is none (scripts/accelerate-default.sh), so it runs one CPU process here, as `queerbias train`,
    without "values were not passed" for the process count, machines, precision or backend, and a refusal is
    our one line. With OMP_NUM_THREADS unset, accelerate may add the three lines of the thread count it chose
    (docs/training.md): on a machine with more than one physical core per process it does."""
    assert "bash scripts/accelerate-default.sh" in (REPO / "scripts" / "setup.sh").read_text()
    env = {**{k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}, "HF_HOME": str(tmp_path / "hf"),
           "CUDA_VISIBLE_DEVICES": "", **({"OMP_NUM_THREADS": threads} if threads else {})}
    subprocess.run(["bash", str(REPO / "scripts" / "accelerate-default.sh")], env=env, check=True,
                   capture_output=True)
    written = (tmp_path / "hf" / "accelerate" / "default_config.yaml").read_text()
    assert '"num_processes": 1' in written and '"use_cpu": true' in written
    path = tmp_path / "dup.yaml"
    path.write_text("model: x\nseed: 1\nseed: 2\n", encoding="utf-8")
    result = subprocess.run([str(Path(sys.executable).parent / "accelerate"), "launch", str(REPO / "train" / "finetune.py"),
                             "--config", str(path)], capture_output=True, text=True, timeout=300, env=env)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    refusal = (f"queerbias train: error: {path}: duplicate key 'seed' on lines 2 and 3; YAML keys must be unique "
               "(the second would silently win)")
    assert result.returncode != 0 and lines[-1:] == [refusal], result.stderr[-3000:]
    notice = lines[:-1]
    assert not notice or not threads and len(notice) == len(ACCELERATE_THREAD_LINES) and all(
        line == expected if isinstance(expected, str) else expected.fullmatch(line)
        for line, expected in zip(notice, ACCELERATE_THREAD_LINES)), result.stderr[-3000:]


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


# -- issue 21: the same layers in the Python API -----------------------------------------

def _api_pairs(text: str, sent_more: str = "Schwule Männer sind nett.", group: str = "gay"):
    from queerbias.pairs.schema import Pair, PairSet

    return PairSet("api", [Pair("1", sent_more, text, group),
                           Pair("2", "Lesbische Frauen sind klug.", "Cis Frauen sind klug.", "lesbian")])


API_ROWS = [
    ("a PairSet with an invisible difference", lambda t, i: _api_pairs("Schwule Männer sind\u200b nett."),
     "pair 1: sent_less holds the invisible or control character U+200B"),
    ("a PairSet with a look-alike group", lambda t, i: _api_pairs("Heterosexuelle Männer sind nett.", group="g\u0430y"),
     "pair 1: group 'gаy' mixes CYRILLIC and LATIN letters"),
    ("a PairSet with a fullwidth group", lambda t, i: _api_pairs("Heterosexuelle Männer sind nett.", group="ｇａｙ"),
     "is not in NFKC form (it reads as 'gay'"),
    ("a PairSet with a number for a sentence", lambda t, i: _api_pairs(7), "pair 1: sent_less must be text, got int"),
    ("score into the folder of its pair file", lambda t, i: qb_score(i["bert"], i["x_pairs"], out=t / "X"),
     "X contains the input"),
    ("score into the model's folder", lambda t, i: qb_score(i["bert_copy"], i["pairs"], out=Path(i["bert_copy"]) / "o"),
     "lies inside the input folder"),
    ("score a pair that measures nothing", lambda t, i: qb_score(i["gpt2"], i["end_pair"]), "pair 3 measures nothing"),
    ("score a file with duplicate columns", lambda t, i: qb_score(i["bert"], i["dup_column"]), "are both named"),
    ("score a file of both layouts", lambda t, i: qb_score(i["bert"], i["both_layouts"]), "columns of several layouts"),
    ("score into a folder in use", lambda t, i: qb_score(i["bert"], i["pairs"], out=i["locked"]),
     "is in use by another running queerbias process"),
    ("compare into a run", lambda t, i: _qb().compare(pair_run(t), pair_run(t, "b"), out=t / "a" / "d"),
     "lies inside the input folder"),
    ("load an edited summary", lambda t, i: _qb().load_run(summary_edit(pair_run(t), lambda s: s["overall"].update(
        bias_score=1.0))), "headline.overall (1.0 written"),
    # issue 34
    ("score a split into the folder of its file", lambda t, i: qb_score(i["bert"], i["x_split"], out=t / "X"),
     "X contains the input"),
    ("score a split into its folder through ..", lambda t, i: qb_score(i["bert"], i["x_split"], out=t / "Y" / ".." / "X"),
     "contains the input"),
    ("score into the folder of a PairSet's file", lambda t, i: _qb().score(
        i["bert"], __import__("queerbias.pairs.io", fromlist=["read_pairs"]).read_pairs(i["x_pairs"]), out=t / "X",
        progress=False), "X contains the input"),
    ("score into a model folder", lambda t, i: qb_score(i["bert"], i["pairs"], out=i["gpt2"]),
     "is a model folder"),
    ("score with an empty pair spec", lambda t, i: qb_score(i["bert"], ""), "pairs is empty"),
    ("score with an empty out", lambda t, i: qb_score(i["bert"], i["pairs"], out=""), "out must name a directory"),
    ("a PairSet whose two sentences are identical", lambda t, i: _qb().score(i["bert"], _api_pairs(
        "Schwule Männer sind nett."), progress=False), "pair 1: its two sentences are identical"),
    ("a seed numpy cannot take", lambda t, i: qb_score(i["bert"], i["pairs"], seed=2**32),
     "seed must be between 0 and 4,294,967,295"),
    # issue 49: Path("") is Path("."), the working folder
    ("score with out=Path('')", lambda t, i: qb_score(i["bert"], i["pairs"], out=Path("")),
     "out must name a directory, got PosixPath('.'): Path('') is Path('.')"),
]


def _qb():
    import queerbias

    return queerbias


def qb_score(model, pairs, **options):
    return _qb().score(str(model), str(pairs), progress=False, **options)


@pytest.mark.parametrize(("build", "fragment"), [pytest.param(b, f, id=label) for label, b, f in API_ROWS])
def test_the_api_refuses_what_the_cli_refuses(build, fragment, tmp_path, model_variants, request):
    from queerbias.errors import QueerbiasError

    torch.set_num_threads(1)
    inputs = Inputs(tmp_path, model_variants, request)
    existing = set(tmp_path.rglob("*"))
    with pytest.raises(QueerbiasError) as caught:
        build(tmp_path, inputs)
    assert fragment in str(caught.value) and "\n" not in str(caught.value)
    prepared = {tmp_path / "a", tmp_path / "b"}  # runs a row prepares (prepared_runs), not results
    assert not [p for p in set(tmp_path.rglob("*")) - existing if p.name == "summary.json" and p.parent not in prepared]


def test_the_layout_option_reads_a_file_of_both_layouts(tmp_path, model_variants, request):
    from queerbias.pairs.io import read_pairs

    path = Inputs(tmp_path, model_variants, request)["both_layouts"]
    wino, crows = read_pairs(path, layout="winoqueer"), read_pairs(path, layout="crows-pairs")
    assert (wino.pairs[0].sent_more, wino.pairs[0].group) == ("A ist nett.", "gay")
    assert (crows.pairs[0].sent_more, crows.pairs[0].group) == ("B ist nett.", "straight")


def test_a_fullwidth_group_label_is_the_plain_label(tmp_path):
    from queerbias.pairs.io import read_pairs

    path = _write(Inputs(tmp_path, tmp_path, None), "fullwidth.csv", PAIRS_HEADER + GOOD_ROWS.replace(",gay", ",ｇａｙ"))
    plain = _write(Inputs(tmp_path, tmp_path, None), "plain.csv", PAIRS_HEADER + GOOD_ROWS)
    assert read_pairs(path).checksum == read_pairs(plain).checksum


def test_unscorable_pairs_dropped_are_counted(tmp_path, model_variants, request, monkeypatch):
    import json

    monkeypatch.chdir(tmp_path)
    torch.set_num_threads(1)
    inputs = Inputs(tmp_path, model_variants, request)
    out = tmp_path / "out"
    assert main(["score", "--no-progress", "--pairs", inputs["end_pair"], "--model", inputs["gpt2"],
                 "--out", str(out), "--unscorable", "drop"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["overall"]["n"] == 2
    assert {"unscorable_pairs": 1, "unscorable_policy": "drop"}.items() <= summary["meta"]["data"].items()


def test_a_second_run_into_a_finished_folder_keeps_the_first(tmp_path, model_variants, request, monkeypatch):
    """The same run again changes nothing; another model is refused, never written over the first."""
    monkeypatch.chdir(tmp_path)
    torch.set_num_threads(1)
    inputs = Inputs(tmp_path, model_variants, request)
    out = tmp_path / "out"
    command = ["score", "--no-progress", "--pairs", inputs["pairs"], "--out", str(out)]
    assert main([*command, "--model", inputs["bert"]]) == 0
    first = (out / "summary.json").read_bytes()
    assert main([*command, "--model", inputs["bert"]]) == 0
    assert main([*command, "--model", inputs["bert_copy"] + "/"]) in (0, 2)  # same weights: the same run
    assert main([*command, "--model", inputs["gpt2"]]) == 2
    assert (out / "summary.json").read_bytes() == first
    assert not (out / ".queerbias.lock").exists()


# -- issue 21: the store trusts no progress line it did not write for these items --------

def test_a_progress_chunk_missing_items_is_evaluated_again(tmp_path, model_variants, request):
    import json

    from queerbias.suites.pairs.declaration import PairSettings
    from queerbias.suites.pairs.suite import PairsSuite
    from queerbias.suites.store import run_to_dir

    torch.set_num_threads(1)
    inputs = Inputs(tmp_path, model_variants, request)
    pairs = _write(inputs, "six.csv", PAIRS_HEADER + "".join(GOOD_ROWS.replace("nett", word).replace("klug", word)
                                                           for word in ("nett", "froh", "klug")))
    full = run_to_dir(PairsSuite(), inputs["bert"], str(pairs), tmp_path / "full", PairSettings(chunk_pairs=5),
                      progress=False)
    assert full["overall"]["n"] == 6
    # a progress line of this run holding 2 of chunk 0's 5 pairs, as an older queerbias or an edit left it
    resumed = tmp_path / "resumed"
    (resumed / ".partial").mkdir(parents=True)
    two = [{"pair_id": "1", "group": "gay", "sent_more": "a", "sent_less": "b", "score_more": -1.0,
            "score_less": -2.0, "biased": 1, "neutral": 0, "soft": 66.67}] * 2
    (resumed / ".partial" / "rank0.jsonl").write_text(
        json.dumps({"run": full["meta"]["run_key"], "chunk": 0, "rows": two}) + "\n")
    again = run_to_dir(PairsSuite(), inputs["bert"], str(pairs), resumed, PairSettings(chunk_pairs=5), progress=False)
    assert again["overall"] == full["overall"] and again["groups"] == full["groups"]


def test_a_progress_chunk_edited_after_saving_is_refused(tmp_path, model_variants, request):
    import json

    from queerbias.errors import DataError
    from queerbias.suites import integrity
    from queerbias.suites.pairs.suite import PairsSuite
    from queerbias.suites.store import run_to_dir

    torch.set_num_threads(1)
    inputs = Inputs(tmp_path, model_variants, request)
    full = run_to_dir(PairsSuite(), inputs["bert"], inputs["pairs"], tmp_path / "full", progress=False)
    row = {"pair_id": "1", "group": "gay", "sent_more": "a", "sent_less": "b", "score_more": -1.0,
           "score_less": -2.0, "biased": 1, "neutral": 0, "soft": 66.67}
    record = integrity.chunk_record(full["meta"]["run_key"], 0, 0, 1, [row])  # two pairs: two chunks of one
    record["rows"][0] = {**row, "biased": 0}
    out = tmp_path / "edited"
    (out / ".partial").mkdir(parents=True)
    (out / ".partial" / "rank0.jsonl").write_text(json.dumps(record) + "\n")
    with pytest.raises(DataError, match="chunk 0: its rows changed after they were saved"):
        run_to_dir(PairsSuite(), inputs["bert"], inputs["pairs"], out, progress=False)


def test_a_progress_chunk_holding_fewer_rows_than_it_declares_is_refused(tmp_path, model_variants, request):
    """A line of this run and chunk whose digest holds, but whose 2 rows stand for 3 pairs (issue 34)."""
    import json

    from queerbias.errors import DataError
    from queerbias.suites import integrity
    from queerbias.suites.pairs.declaration import PairSettings
    from queerbias.suites.pairs.suite import PairsSuite
    from queerbias.suites.store import run_to_dir

    torch.set_num_threads(1)
    inputs = Inputs(tmp_path, model_variants, request)
    pairs = _write(inputs, "six.csv", PAIRS_HEADER + "".join(GOOD_ROWS.replace("nett", word).replace("klug", word)
                                                           for word in ("nett", "froh", "klug")))
    settings = PairSettings(chunk_pairs=3)
    full = run_to_dir(PairsSuite(), inputs["bert"], str(pairs), tmp_path / "full", settings, progress=False)
    row = {"pair_id": "1", "group": "gay", "sent_more": "a", "sent_less": "b", "score_more": -1.0,
           "score_less": -2.0, "biased": 1, "neutral": 0, "soft": 66.67}
    out = tmp_path / "declared"
    (out / ".partial").mkdir(parents=True)
    (out / ".partial" / "rank0.jsonl").write_text(
        json.dumps(integrity.chunk_record(full["meta"]["run_key"], 0, 0, 3, [row, row])) + "\n")
    with pytest.raises(DataError, match=r"rank0.jsonl, row 1: chunk 0: declares 3 items, whose results are 3 rows, "
                                        "but holds 2"):
        run_to_dir(PairsSuite(), inputs["bert"], str(pairs), out, settings, progress=False)
    assert not (out / "summary.json").exists()


def test_a_sample_read_from_the_stream_is_the_published_sample(tmp_path):
    """`read_pairs(sample=n)` parses only the sampled rows, and takes exactly the pairs that sampling
    the whole set takes (every published `--sample` run), under every duplicates/identical policy."""
    import random

    from queerbias.pairs.io import read_pairs
    from queerbias.pairs.sampling import sample_pairs

    rng = random.Random(34)
    rows = [f"Person {i} ist schwul.,Person {i} ist hetero.,stereo,{rng.choice(['gay', 'lesbian', 'trans'])}\n"
            for i in range(400)]
    rows[10] = rows[3]  # a duplicate row
    rows[20] = "Anna ist da.,Anna ist da.,stereo,gay\n"  # an identical pair
    rows[30] = rows[31]  # another duplicate, next to its original
    path = _write(Inputs(tmp_path, tmp_path, None), "pairs.csv", PAIRS_HEADER + "".join(rows))
    for duplicates, identical in (("keep", "keep"), ("drop", "drop"), ("keep", "drop"), ("drop", "keep")):
        whole = read_pairs(path, duplicates=duplicates, identical=identical)
        for n, seed in ((5, 0), (37, 3), (len(whole) - 1, 1), (len(whole), 0), (10_000, 2)):
            taken = sample_pairs(whole, n, seed)
            streamed = read_pairs(path, duplicates=duplicates, identical=identical, sample=n, seed=seed)
            assert (streamed.name, streamed.checksum, streamed.meta) == (taken.name, taken.checksum, taken.meta), \
                (duplicates, identical, n, seed)
    # a row the sample leaves out is not parsed (a bad group label there is not refused), but the
    # file's structure, duplicates and identical pairs are checked whole
    bad = _write(Inputs(tmp_path, tmp_path, None), "bad.csv", PAIRS_HEADER + "".join(rows[:2]) + rows[2].replace(
        ",gay\n", ",g\u200bay\n").replace(",lesbian\n", ",g\u200bay\n").replace(",trans\n", ",g\u200bay\n")
        + "".join(rows[3:10]) + "".join(rows[11:20]) + "".join(rows[21:30]))
    chosen = {p.pair_id for p in read_pairs(bad, sample=3, seed=0).pairs}
    assert "3" not in chosen
    with pytest.raises(Exception, match="duplicate of row 5"):
        read_pairs(path, sample=3, seed=0)


def test_export_overwrite_deletes_only_what_an_export_wrote(tmp_path, model_variants, request, monkeypatch):
    """notes.yaml and another tool's task YAML stay; the earlier export's own task YAML goes (issue 34)."""
    monkeypatch.chdir(tmp_path)
    inputs = Inputs(tmp_path, model_variants, request)
    out = tmp_path / "task"
    command = ["export", "lm-eval", "--pairs", inputs["pairs"], "--model", inputs["gpt2"], "--out", str(out)]
    assert main([*command, "--task", "first"]) == 0
    (out / "notes.yaml").write_text("my: notes\n")
    (out / "other.yaml").write_text("task: other\nclass: !function theirs.Task\n")
    assert main([*command, "--task", "second", "--overwrite"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["notes.yaml", "other.yaml", "pairs.jsonl", "second.yaml",
                                                     "utils.py"]
    assert (out / "notes.yaml").read_text() == "my: notes\n"


def test_the_memory_a_training_run_needs_is_checked_before_it_is_allocated(tiny_gpt2):
    """A LoRA rank no larger than the layers, then the adapter's (or the whole model's) weights,
    gradients and AdamW state against the free memory, refused with the number it needed."""
    from queerbias.errors import QueerbiasError
    from queerbias.models import load_model
    from queerbias.train.config import config_from_dict
    from queerbias.train.modeling import check_memory

    model = load_model(str(tiny_gpt2), dtype="float32").model
    lora = config_from_dict({"model": "x", "data": {"train": "x"}, "lora": {"r": 4}})
    check_memory(model, lora, available=1 << 30)
    with pytest.raises(QueerbiasError, match=r"the adapter \(rank 4\) trains [\d,]+ parameters, whose weights, "
                                             r"gradients and AdamW state need at least 0.00 GiB, but this machine "
                                             r"has 0.00 GiB free; lower lora.r"):
        check_memory(model, lora, available=1024)
    full = config_from_dict({"model": "x", "data": {"train": "x"}, "method": "full"})
    with pytest.raises(QueerbiasError, match=f"full fine-tuning trains {sum(p.numel() for p in model.parameters()):,} "
                                             "parameters"):
        check_memory(model, full, available=1024)
    with pytest.raises(QueerbiasError, match="config key 'lora.r' is 64, larger than the layer"):
        check_memory(model, config_from_dict({"model": "x", "data": {"train": "x"}, "lora": {"r": 64}}))


# -- issue 21: failures of the machine are one line too ---------------------------------

@pytest.mark.parametrize(("error", "fragment"), [
    (OSError(28, "No space left on device", "/data/out/pairs.csv"), "no space left on the device (/data/out/pairs.csv)"),
    (BrokenPipeError(32, "Broken pipe"), "the output was closed before everything was written"),
    (PermissionError(13, "Permission denied", "CACHE/models/x"), "make it writable or set QUEERBIAS_CACHE"),
    (UnicodeEncodeError("ascii", "Männer", 1, 2, "ordinal not in range"), "cannot write text as ascii"),
    # issue 34: a full disk while a model is saved, as safetensors and torch report it
    (__import__("safetensors").SafetensorError("Error while serializing: I/O error: No space left on device (os "
                                               "error 28)"), "no space left on the device; free some space"),
    (RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 576 vs 534"),
     "torch could not finish writing a checkpoint (is the disk full?)"),
])
def test_os_errors_are_one_line_and_status_2(error, fragment, monkeypatch):
    """A command that meets the error (a write, a print, the cache) ends in one line."""
    import queerbias.commands.suites as suites_command
    from queerbias.cache import cache_root

    if isinstance(error, PermissionError):
        error.filename = str(cache_root() / "models" / "x")

    def fail(args):
        raise error

    lines = []
    monkeypatch.setattr(suites_command, "handler", fail)  # what `register` binds as the command
    assert main(["suites"], report=lines.append) == 2
    assert len(lines) == 1 and lines[0].startswith("queerbias suites: error: ") and fragment in lines[0], lines


def test_a_refusal_quoting_a_library_message_of_several_lines_is_one_line(monkeypatch):
    """transformers' offline advice comes in two lines; the refusal that quotes it is one (issue 34)."""
    import queerbias.commands.suites as suites_command
    from queerbias.errors import QueerbiasError

    def fail(args):
        raise QueerbiasError("cannot load a model config from 'x': We couldn't connect to 'https://huggingface.co'.\n"
                             "Check your internet connection.")

    lines = []
    monkeypatch.setattr(suites_command, "handler", fail)
    assert main(["suites"], report=lines.append) == 2
    assert lines == ["queerbias suites: error: cannot load a model config from 'x': We couldn't connect to "
                     "'https://huggingface.co'. Check your internet connection."]


def test_a_stdout_that_cannot_take_german_is_refused_before_work(monkeypatch):
    import io

    ascii_out = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    monkeypatch.setattr(sys, "stdout", ascii_out)
    lines = []
    assert main(["suites"], report=lines.append) == 2
    assert "standard output takes only ascii text" in lines[0]
    assert ascii_out.buffer.getvalue() == b""


# -- issue 21: random damage to a valid pair file never passes as the same data -----------

MUTATIONS = {
    "duplicate a column": lambda text, rng: text.replace("bias_type", "sent_less", 1),
    "invisible character in a sentence": lambda text, rng: _at_random_letter(text, rng, "\u200b"),
    "bidi control": lambda text, rng: _at_random_letter(text, rng, "\u202e"),
    "Cyrillic look-alike": lambda text, rng: text.replace("a", "\u0430", 1) if "a" in text else text + "\u0430",
    "NUL": lambda text, rng: _at_random_letter(text, rng, "\x00"),
    "the other layout's columns": lambda text, rng: text.replace(
        PAIRS_HEADER.strip(), PAIRS_HEADER.strip() + ",Gender_ID_x,sent_x,sent_y", 1).replace(
        "\n", ",Gay,X ist da.,Y ist da.\n").replace(",Gender_ID_x,sent_x,sent_y,Gay,X ist da.,Y ist da.", ",Gender_ID_x,"
                                                    "sent_x,sent_y", 1),
    "an extra field": lambda text, rng: text.replace("\n", ",extra\n", 2),
    "a sentence emptied": lambda text, rng: text.replace("Schwule Männer sind nett.", " ", 1),
    "an unclosed quote": lambda text, rng: text.replace("Lesbische", '"Lesbische', 1),
    # harmless: the reader normalises these, so the data must stay the same
    "fullwidth group": lambda text, rng: text.replace(",gay", ",ｇａｙ", 1),
    "spaces around a value": lambda text, rng: text.replace(",stereo,", ",  stereo ,", 1),
    "a byte-order mark": lambda text, rng: "\ufeff" + text,
    "Windows line ends": lambda text, rng: text.replace("\n", "\r\n"),
}


def _at_random_letter(text: str, rng, char: str) -> str:
    body = text.index("\n") + 1  # not in the header
    letters = [i for i in range(body, len(text)) if text[i].isalpha()]
    at = rng.choice(letters)
    return text[:at] + char + text[at:]


def test_random_damage_to_a_pair_file_is_refused_or_changes_nothing(tmp_path):
    """A seeded mutation loop (1-3 mutations per file, 150 files): the reader refuses the file
    in one line, or reads exactly the pairs of the valid file; never other data without an
    option that says so."""
    import random

    from queerbias.errors import DataError
    from queerbias.pairs.io import read_pairs

    valid = PAIRS_HEADER + GOOD_ROWS + "Trans Frauen sind stark.,Cis Frauen sind stark.,stereo,trans\n"
    reference = read_pairs(_write(Inputs(tmp_path, tmp_path, None), "valid.csv", valid)).checksum
    rng, outcomes = random.Random(21), {"refused": 0, "same": 0}
    for number in range(150):
        chosen = rng.sample(sorted(MUTATIONS), rng.randint(1, 3))
        text = valid
        for name in chosen:
            text = MUTATIONS[name](text, rng)
        path = tmp_path / f"mutated-{number}.csv"
        path.write_bytes(text.encode("utf-8"))
        try:
            checksum = read_pairs(path).checksum
        except DataError as err:
            assert "\n" not in str(err) and str(path) in str(err), (chosen, err)
            outcomes["refused"] += 1
            continue
        assert checksum == reference, f"{chosen} were read as other pairs"
        outcomes["same"] += 1
    assert outcomes["refused"] > 50 and outcomes["same"] > 5, outcomes


def test_random_damage_through_the_cli_never_scores_other_data(tmp_path, model_variants, request, monkeypatch):
    """The same loop through `queerbias score` with a tiny model (12 files): exit 2 with one
    line, or exit 0 with exactly the valid file's scores."""
    import json
    import random

    monkeypatch.chdir(tmp_path)
    _log_to_this_stderr(monkeypatch)
    torch.set_num_threads(1)
    inputs = Inputs(tmp_path, model_variants, request)
    valid = PAIRS_HEADER + GOOD_ROWS

    def score(text: str, name: str):
        path = tmp_path / f"{name}.csv"
        path.write_bytes(text.encode("utf-8"))
        lines = []
        code = main(["score", "--no-progress", "--pairs", str(path), "--model", inputs["bert"],
                     "--out", str(tmp_path / name)], report=lines.append)
        summary = tmp_path / name / "summary.json"
        figures = json.loads(summary.read_text()) if summary.exists() else None
        return code, lines, figures and (figures["overall"], figures["groups"])

    code, _, reference = score(valid, "valid")
    assert code == 0
    rng = random.Random(2121)
    for number in range(12):
        chosen = rng.sample(sorted(MUTATIONS), rng.randint(1, 2))
        text = valid
        for name in chosen:
            text = MUTATIONS[name](text, rng)
        code, lines, figures = score(text, f"m{number}")
        if code == 0:
            assert figures == reference, f"{chosen} scored other data"
        else:
            assert code == 2 and len(lines) == 1 and figures is None, (chosen, lines)


# -- issue 34: random output paths drawn from each command's own inputs ----------------------

def _writers(t: Path, i: Inputs) -> dict:
    """Each writing command: (its inputs, argv for an output path, whether the output must be refused
    whatever it is: training is only given outputs that overlap its inputs, never trained)."""
    import yaml

    from train.helpers import small_config

    a, b = pair_run(t, "a"), pair_run(t, "b")
    split = lambda rng: rng.choice(["", ":test?by=group", ":train?by=group&seed=3"])  # noqa: E731
    docs = i["x_docs"]
    train = t / "train.yaml"
    train.write_text(yaml.safe_dump(small_config(i["gpt2_copy"], t / "run", data={"train": docs}, eval={
        "benchmarks": [{"suite": "pairs", "data": f"{i['x_pairs']}:test?by=group"}]})), encoding="utf-8")
    study = Path(i["study_ok"])
    return {
        "score": ([i["x_pairs"], i["bert_copy"]], lambda out, rng: [
            "score", "--no-progress", "--pairs", i["x_pairs"] + split(rng), "--model", i["bert_copy"],
            "--out", out], False),
        "run": ([i["x_pairs"], i["bert_copy"]], lambda out, rng: [
            "run", "pairs", "--no-progress", "--data", i["x_pairs"] + split(rng), "--model", i["bert_copy"],
            "--out", out], False),
        "export": ([i["x_pairs"], i["gpt2_copy"]], lambda out, rng: [
            "export", "lm-eval", "--pairs", i["x_pairs"] + split(rng), "--model", i["gpt2_copy"], "--out", out,
            *rng.choice([[], ["--overwrite"]])], False),
        "compare": ([a, b], lambda out, rng: ["compare", str(a), str(b), "--out", out, "--resamples", "50"], False),
        "report": ([a, b], lambda out, rng: ["report", str(a), str(b), "--out", out], False),
        "corpus": ([docs], lambda out, rng: ["corpus", "build", "--name", "c", "--source", docs, "-o", out,
                                             "--allow-stale"], False),
        "study plan": ([study], lambda out, rng: ["study", "plan", "--config", str(study), "--out", out], False),
        "slurm": ([study], lambda out, rng: ["study", "plan", "--config", str(study), "--out", str(t / "planned"),
                                             "--slurm-out", out], False),
        "train": ([train, docs, i["x_pairs"], i["gpt2_copy"]],
                  lambda out, rng: ["train", "--config", str(train), f"output_dir={out}"], True),
    }


def _outputs_of(inputs: list, t: Path, rng, home: Path) -> list[str]:
    """Output paths that overlap `inputs`: an input itself, its folder, a folder inside it, spelt with
    `..`, `./`, `~`, a trailing slash or through a symbolic link."""
    import hashlib

    found = []
    for given in inputs:
        path = Path(str(given))
        for target in (path, path.parent, path / "sub"):
            found.append(str(target))
            found.append(f"{target.parent}/{rng.choice(['x', 'y'])}/../{target.name}")
            found.append(str(target) + "/")
            if target.is_relative_to(t):
                found.append("./" + str(target.relative_to(t)))
            if target.is_relative_to(home):
                found.append("~/" + str(target.relative_to(home)))
            if target.exists():  # one link per target: a name reused for another target would lead elsewhere
                link = t / f"link-{hashlib.sha256(str(target).encode()).hexdigest()[:12]}"
                if not link.is_symlink():
                    link.symlink_to(target)
                found.append(str(link))
    return found


def test_random_outputs_never_change_an_input(tmp_path, model_variants, request, monkeypatch):
    """A seeded loop (CI-sized: 36 commands): a writing command with its --out, output_dir or Slurm
    script drawn from its own inputs (split suffixes, `..`, `~`, symbolic links) or a fresh folder.
    Whatever it does, no input file changes (checksums before and after), and what overlaps an input
    is refused in one line."""
    import random

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    _log_to_this_stderr(monkeypatch)
    torch.set_num_threads(1)
    inputs = Inputs(tmp_path, model_variants, request)
    writers = _writers(tmp_path, inputs)
    rng, outcomes = random.Random(34), {"refused": 0, "written": 0}
    for number in range(36):
        name = rng.choice(sorted(writers))
        sources, argv, always_refused = writers[name]
        overlapping = _outputs_of(sources, tmp_path, rng, tmp_path)
        fresh = not always_refused and rng.random() < 0.2
        out = str(tmp_path / f"fresh-{number}" / ("script.sh" if name == "slurm" else "out")) if fresh \
            else rng.choice(overlapping)
        before = checksums(sources)
        lines = []
        try:
            code = main(argv(out, rng), report=lines.append)
        except SystemExit as exit_:
            code = exit_.code
        changed = sorted(str(p) for p, digest in before.items() if checksums([p]).get(p) != digest)
        assert not changed, (name, out, changed)
        if not fresh:
            assert code == 2 and len(lines) == 1, (name, out, code, lines)
        outcomes["refused" if code == 2 else "written"] += 1
    assert outcomes["refused"] > 20 and outcomes["written"] >= 1, outcomes


def test_the_output_lock_refuses_a_second_writer_and_leaves_nothing(tmp_path):
    from queerbias.errors import QueerbiasError
    from queerbias.outputs import LOCK_FILE, OutputLock

    folder = tmp_path / "run"
    with OutputLock(folder, "a pairs run"):
        with pytest.raises(QueerbiasError, match="in use by another running queerbias process"):
            OutputLock(folder, "a pairs run").__enter__()
    assert not (folder / LOCK_FILE).exists()
    with OutputLock(folder, "a pairs run"):  # released: the folder is free again
        pass
    fresh = tmp_path / "fresh"
    with pytest.raises(ValueError), OutputLock(fresh, "a pairs run"):
        raise ValueError("refused")
    assert not fresh.exists()  # a refused run leaves no empty folder behind


# -- issue 49: outputs compared by identity: bind mounts ------------------------------------------

def _mount_namespace_problem() -> str | None:
    """Why bind mounts cannot be made here (no `unshare`, no right to mount); None when they can."""
    import shutil

    if shutil.which("unshare") is None or shutil.which("mount") is None:
        return "unshare or mount is not installed"
    probe = subprocess.run(["unshare", "--mount", "--propagation", "private", "mount", "--bind", "/", "/"],
                           capture_output=True, text=True, check=False)
    return None if probe.returncode == 0 else f"bind mounts are not allowed here: {probe.stderr.strip()}"


def _in_mount_namespace(binds: list[tuple[Path, Path]], commands: list[list[str]], cwd: Path) -> list[dict]:
    """Run `commands` (queerbias argv lists, in one process) in a mount namespace of their own in which
    each (source, target) of `binds` is bind-mounted; returns each command's exit status and lines.
    The mounts vanish with the namespace, however the process ends."""
    import json

    script = ("import json, sys\nfrom queerbias.cli import main\nresults = []\n"
              "for argv in json.loads(sys.argv[1]):\n    lines = []\n"
              "    try:\n        code = main(argv, report=lines.append)\n"
              "    except SystemExit as exit_:\n        code = exit_.code\n"
              "    results.append({'code': code, 'lines': lines})\nprint(json.dumps(results))\n")
    mounts = " && ".join(f"mount --bind {shlex.quote(str(source))} {shlex.quote(str(target))}"
                         for source, target in binds)
    shell = f"{mounts} && exec {shlex.quote(sys.executable)} -c {shlex.quote(script)} {shlex.quote(json.dumps(commands))}"
    done = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", shell], cwd=cwd,
                          capture_output=True, text=True, timeout=600, check=False,
                          env={**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1",
                               "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_bind_mount_of_an_input_folder_is_that_folder(tmp_path, model_variants, request):
    """`mount --bind SRC DST; score --pairs SRC/pairs.csv --out DST` replaced pairs.csv with results, and
    `mount --bind RUN M; card RUN --out M/config.yaml` the run's config: both are refused, nothing changes."""
    problem = _mount_namespace_problem()
    if problem:
        pytest.skip(problem)
    inputs = Inputs(tmp_path, model_variants, request)
    source, run, model = Path(inputs["x_pairs"]).parent, Path(inputs["card_run"]), Path(inputs["bert_copy"])
    binds = [(source, tmp_path / "DST"), (run, tmp_path / "M"), (model, tmp_path / "B")]
    for _, mount in binds:
        mount.mkdir()
    before = checksums([source, run, model])
    results = _in_mount_namespace(binds, [
        ["score", "--no-progress", "--pairs", str(source / "pairs.csv"), "--model", str(model), "--out",
         str(tmp_path / "DST")],
        ["card", str(run), "--out", str(tmp_path / "M" / "config.yaml")],
        ["score", "--no-progress", "--pairs", str(source / "pairs.csv"), "--model", str(model), "--out",
         str(tmp_path / "B" / "out")],
    ], tmp_path)
    assert [(r["code"], len(r["lines"])) for r in results] == [(2, 1)] * 3, results
    assert "DST contains the input" in results[0]["lines"][0]
    assert "M/config.yaml is the input" in results[1]["lines"][0]
    assert "B/out lies inside the input folder" in results[2]["lines"][0]
    assert checksums([source, run, model]) == before


def test_random_outputs_through_bind_mounts_never_change_an_input(tmp_path, model_variants, request, monkeypatch):
    """The seeded loop of outputs drawn from each writer's inputs, through bind mounts of the inputs'
    folders (the folder itself, a folder in it, a file of it): refused in one line, no input changed."""
    import random

    problem = _mount_namespace_problem()
    if problem:
        pytest.skip(problem)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    torch.set_num_threads(1)
    inputs = Inputs(tmp_path, model_variants, request)
    writers = _writers(tmp_path, inputs)
    rng, binds, commands, sources = random.Random(49), {}, [], []
    for _ in range(12):
        name = rng.choice(sorted(set(writers) - {"train"}))  # training refuses before its first write as well
        given, argv, _ = writers[name]
        chosen = Path(str(rng.choice(given)))
        folder = chosen if chosen.is_dir() else chosen.parent
        mount = binds.setdefault(folder, tmp_path / f"bound-{len(binds)}")
        mount.mkdir(exist_ok=True)
        # a folder input: the folder or one inside it; a file: its folder or the file, through the mount
        out = rng.choice([mount, mount / ("sub" if chosen.is_dir() else chosen.name)])
        commands.append(argv(str(out), rng))
        sources += given
    before = checksums(sources)
    results = _in_mount_namespace([(folder, mount) for folder, mount in binds.items()], commands, tmp_path)
    assert [(r["code"], len(r["lines"])) for r in results] == [(2, 1)] * len(commands), list(zip(commands, results))
    assert checksums(sources) == before


# -- issue 49: the remaining tracebacks and unclear cases ------------------------------------------

def test_compare_of_two_copies_of_a_checkpoint_near_the_root_names_the_clash(tmp_path):
    """Two copies of one checkpoint evaluation in sibling folders under /tmp/X: their default labels
    (step-24) stay alike up to `/`, where unique_defaults raised IndexError."""
    import shutil
    import tempfile

    near_root = Path(tempfile.mkdtemp(prefix="qb49-", dir="/tmp"))
    try:
        run = summary_edit(pair_run(tmp_path), lambda s: s["meta"].update(step=24, run="RUN"))
        first, second = near_root / "a", near_root / "b"
        shutil.copytree(run, first)
        shutil.copytree(run, second)
        lines = []
        assert main(["compare", str(first), str(second), "--out", str(tmp_path / "d")], report=lines.append) == 2
        assert len(lines) == 1 and "several runs are labelled" in lines[0] and "name them as LABEL=DIR" in lines[0], lines
    finally:
        shutil.rmtree(near_root)


def test_a_launch_environment_that_is_no_number_is_one_line(tmp_path, monkeypatch):
    """WORLD_SIZE=two under FSDP: accelerate's int() raised a ValueError traceback."""
    monkeypatch.setenv("WORLD_SIZE", "two")
    monkeypatch.setenv("ACCELERATE_USE_FSDP", "true")
    pairs = _write(Inputs(tmp_path, tmp_path, None), "pairs.csv", PAIRS_HEADER + GOOD_ROWS)
    lines = []
    assert main(["score", "--no-progress", "--pairs", str(pairs), "--model", "embedded:tiny", "--out",
                 str(tmp_path / "out")], report=lines.append) == 2
    assert lines == ["queerbias score: error: the environment variable WORLD_SIZE is 'two', not a whole number of "
                     "processes or a process index; it is set by the launcher (accelerate launch, torchrun): unset it "
                     "or launch again"], lines


def test_a_refused_rank_leaves_no_config_behind(tmp_path, model_variants, request, monkeypatch):
    """`lora.r: 33` is refused once the base loads; its config.yaml then made the corrected rerun a run
    of "another config"."""
    monkeypatch.chdir(tmp_path)
    _log_to_this_stderr(monkeypatch)
    torch.set_num_threads(1)
    config = _train_config(Inputs(tmp_path, model_variants, request), "rank", lora__r=33)
    lines = []
    assert main(["train", "--config", str(config)], report=lines.append) == 2
    assert len(lines) == 1 and "config key 'lora.r' is 33, larger than the layer" in lines[0], lines
    run = tmp_path / "run-rank"
    assert not (run / "config.yaml").exists() and not run.exists()


def test_a_refusal_quoting_a_200_kb_value_is_cut_to_its_ends(tmp_path):
    """A config value of 200 KB was echoed whole in the one line."""
    from queerbias.cli import MAX_LINE

    config = _write(Inputs(tmp_path, tmp_path, None), "long.yaml",
                    "model: x\ndata: {train: corpora/demo}\nlearning_rate: '" + "x" * 200_000 + "'\n")
    lines = []
    assert main(["train", "--config", str(config)], report=lines.append) == 2
    assert len(lines) == 1 and len(lines[0]) <= MAX_LINE + 60, len(lines[0])
    assert lines[0].startswith("queerbias train: error: config key 'learning_rate' must be a (finite) number")
    assert "characters ...]" in lines[0]


def test_a_deleted_working_folder_is_named(tmp_path, monkeypatch):
    """Started from a folder deleted after the shell entered it: "No such file or directory", no path."""
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    lines = []
    assert main(["suites"], report=lines.append) == 2
    assert lines == [f"queerbias suites: error: the working folder {gone} no longer exists (deleted after the shell "
                     "entered it); cd into a folder that exists and run the command again"], lines


@pytest.mark.parametrize(("change", "fragment"), [
    (lambda row: row.update(pair_id="999"), "chunk 0, row 1 of its rows: pair_id is \"999\", but the chunk's item "
                                            "has \"1\""),
    (lambda row: row.update(score_more="x"), "chunk 0, row 1 of its rows: score_more is \"x\", not a float"),
])
def test_a_forged_progress_chunk_with_its_digest_recomputed_is_refused(change, fragment, tmp_path, model_variants,
                                                                       request):
    """A progress line of this run and chunk whose rows were edited and their digest recomputed: pairs.csv
    then held pair 999 and lacked pair 1 (or pandas raised on `score_more: "x"`)."""
    import json

    from queerbias.errors import DataError
    from queerbias.pairs.io import read_pairs
    from queerbias.suites import integrity
    from queerbias.suites.pairs.suite import PairsSuite
    from queerbias.suites.store import run_to_dir

    torch.set_num_threads(1)
    inputs = Inputs(tmp_path, model_variants, request)
    full = run_to_dir(PairsSuite(), inputs["bert"], inputs["pairs"], tmp_path / "full", progress=False)
    first, = PairsSuite().row_items(read_pairs(inputs["pairs"]).pairs[:1])  # as the run saved pair 1's row
    row = {**first, "score_more": -1.0, "score_less": -2.0, "biased": 1, "neutral": 0, "soft": 66.67}
    change(row)
    out = tmp_path / "forged"
    (out / ".partial").mkdir(parents=True)
    (out / ".partial" / "rank0.jsonl").write_text(
        json.dumps(integrity.chunk_record(full["meta"]["run_key"], 0, 0, 1, [row])) + "\n")
    with pytest.raises(DataError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        run_to_dir(PairsSuite(), inputs["bert"], inputs["pairs"], out, progress=False)
    assert not (out / "summary.json").exists()
