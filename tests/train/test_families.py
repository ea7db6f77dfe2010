"""The seed study's eight models train correctly, family by family, on tiny random models of the real
config classes: the causal loss is the next-token cross-entropy for every causal family (XLM's model
compares logits[t] with labels[t], so its labels are shifted for it), LoRA runs end to end with a
checkpoint evaluation and its adapter reloads to the same scores, full fine-tuning saves a model that
reloads as the kind it was trained as, and packing is refused where documents would read each other."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
import torch
from safetensors import safe_open

from queerbias.errors import QueerbiasError
from queerbias.families import get_family
from queerbias.models import load_model
from queerbias.models.fingerprint import weights_fingerprint
from queerbias.pairs.io import read_pairs
from queerbias.scoring.scorer import make_scorer
from queerbias.suites.pairs.scoring import score_pairs
from queerbias.train.config import config_from_dict
from queerbias.train.data import read_texts
from queerbias.train.modeling import LORA_TARGETS, load_base, shifts_labels
from queerbias.train.objectives.protocol import TrainerSetup
from queerbias.train.runner import run_training
from queerbias.train.trainer import language_model_trainer, training_arguments
from tiny_models import SEED_STUDY_FAMILIES

from .helpers import DEMO_CORPUS, small_config

PAIRS_CSV = """sent_more,sent_less,group
Schwule Männer sind nett.,Heterosexuelle Männer sind nett.,gay
Lukas ist schwul.,Lukas ist hetero.,gay
Trans Frauen sind stark.,Cis Frauen sind stark.,trans
Lesbische Frauen sind klug.,Cis Frauen sind klug.,lesbian
"""


def family_config(tiny_family, name: str, out: Path, pairs: Path, **overrides):
    """A short run of the seed-study model `name` (tiny) as the study trains it (`lang: de`, as
    configs/seed-study-bert.yaml), judged on a four-pair file that declares no language."""
    builder, kind = SEED_STUDY_FAMILIES[name]
    settings = {"max_steps": 2, "eval_every": 2, "lang": "de", "kind": kind, "eval__general_perplexity": False,
                "eval__benchmarks": [{"suite": "pairs", "data": str(pairs)}], "compare__resamples": 50}
    return config_from_dict(small_config(tiny_family(builder), out, **{**settings, **overrides}))


@pytest.fixture(scope="module")
def pair_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("family-pairs") / "pairs.csv"
    path.write_text(PAIRS_CSV, encoding="utf-8")
    return path


@pytest.mark.parametrize("family", ["gpt2", "opt", "bloom", "llama", "gemma", "xlm"])
def test_causal_training_loss_is_the_next_token_cross_entropy(tiny_family, family, tmp_path):
    """The loss the trainer optimises, from the batches its collator builds, equals the cross-entropy of
    each next token computed by hand from the logits (padding left out) for every causal family."""
    config = config_from_dict(small_config(tiny_family(family), tmp_path / "run", kind="causal", lang="de"))
    lm = load_base(config)
    lm.model.eval()  # no dropout: the two computations must see the same network
    causal = get_family("causal")
    chunks = causal.training_chunks(read_texts(str(DEMO_CORPUS), config.data, "train", 3), lm.tokenizer, 24)
    shift = not shifts_labels(lm.model)
    assert shift == (family == "xlm")
    batch = causal.collator(lm.tokenizer, False, 0.15, shift)([{"input_ids": ids} for ids in chunks])
    assert (batch["attention_mask"] == 0).any()  # padded rows are part of the check
    with torch.no_grad():
        loss = lm.model(**batch).loss
        logits = lm.model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    ids, mask = batch["input_ids"], batch["attention_mask"]
    targets = ids[:, 1:].masked_fill(mask[:, 1:] == 0, -100)
    expected = torch.nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1).float(), targets.flatten())
    assert loss.item() == pytest.approx(expected.item(), abs=1e-5)
    copying = torch.nn.functional.cross_entropy(logits.flatten(0, 1).float(),
                                                ids.masked_fill(mask == 0, -100).flatten())
    assert abs(copying.item() - expected.item()) > 1e-4  # far beyond the tolerance: a copying loss would fail


@pytest.mark.parametrize("name", sorted(SEED_STUDY_FAMILIES))
def test_lora_run_evaluates_a_checkpoint_and_its_adapter_reloads(tiny_family, name, pair_file, tmp_path):
    """LoRA on every family's targets, the base and one checkpoint scored (an XLM with the run's
    language: the pair file declares none), and the adapter, applied to its base, scores as the
    checkpoint did."""
    builder, kind = SEED_STUDY_FAMILIES[name]
    result = run_training(family_config(tiny_family, name, tmp_path / "run", pair_file))
    assert [m["step"] for m in result["metrics"]] == [0, 2]
    with safe_open(result["final"] / "adapter_model.safetensors", "pt") as weights:
        adapted = {key.split(".lora_A")[0].rsplit(".", 1)[-1] for key in weights.keys() if "lora_A" in key}
    model_type = {"bloom": "bloom", "opt": "opt", "gpt2": "gpt2", "xlm": "xlm", "xlm-roberta": "xlm-roberta"}.get(
        builder, "bert")
    assert adapted == set(LORA_TARGETS[model_type])
    checkpoint = result["run_dir"] / "checkpoint-2" / "bias"
    during = pd.read_csv(checkpoint / "pairs.csv")
    meta = pd.read_json(checkpoint / "summary.json", typ="series")["meta"]["model"]
    assert meta.get("lang") == ("de" if builder == "xlm" else None)
    reloaded = load_model(str(result["final"]), kind=kind, lang="de")
    fresh = score_pairs(make_scorer(reloaded), read_pairs(pair_file).pairs)
    assert [r.score_more for r in fresh] == pytest.approx(list(during["score_more"]), abs=1e-3)
    assert [r.score_less for r in fresh] == pytest.approx(list(during["score_less"]), abs=1e-3)


@pytest.mark.parametrize("name", sorted(SEED_STUDY_FAMILIES))
def test_full_finetuning_trains_every_weight_and_saves_a_model_of_its_kind(tiny_family, name, pair_file, tmp_path):
    """Full fine-tuning (the seed study's method) updates every weight of every family (XLM's language
    embedding too: the language is passed in training), and the saved model reloads as the kind it was
    trained as (a causal XLM's config now says causal: true) with the trained weights."""
    config = family_config(tiny_family, name, tmp_path / "run", pair_file, method="full", learning_rate=3e-3)
    lm = load_base(config)
    before = {key: value.clone() for key, value in lm.model.state_dict().items() if value.is_floating_point()}
    texts = read_texts(str(DEMO_CORPUS), config.data, "train", 16)
    trainer = language_model_trainer(TrainerSetup(
        config=config, settings=None, lm=lm, run_dir=tmp_path / "run", texts=texts, pairs=None, packing=False, max_length=48,
        arguments={**training_arguments(config, tmp_path / "run", False), "logging_steps": 1, "save_strategy": "no"},
        callbacks=[], process_index=0, num_processes=1))
    trainer.train()
    after = lm.model.state_dict()
    assert [key for key, value in before.items() if torch.equal(value, after[key])] == []
    trainer.save_model(str(tmp_path / "saved"))
    builder, kind = SEED_STUDY_FAMILIES[name]
    reloaded = load_model(str(tmp_path / "saved"), kind=None if name != "xlm-mlm" else "masked", lang="de")
    assert reloaded.kind == kind and reloaded.fingerprint == weights_fingerprint(lm.model)


@pytest.mark.parametrize("family", ["xlm", "opt", "bloom"])
def test_packing_is_refused_where_packed_documents_would_read_each_other(tiny_family, family, pair_file, tmp_path):
    config = config_from_dict(small_config(tiny_family(family), tmp_path / "run", kind="causal", lang="de",
                                           data__packing=True,
                                           eval__benchmarks=[{"suite": "pairs", "data": str(pair_file)}]))
    with pytest.raises(QueerbiasError, match="does not keep the documents of a packed row apart"):
        run_training(config)


def test_a_model_with_language_embeddings_needs_a_language_it_knows(tiny_xlm, pair_file, tmp_path):
    for lang, message in ((None, "declares no language; pass --lang"), ("fr", "not 'fr'")):
        config = config_from_dict(small_config(tiny_xlm, tmp_path / f"run-{lang}", kind="causal", lang=lang,
                                               eval__benchmarks=[{"suite": "pairs", "data": str(pair_file)}]))
        with pytest.raises(QueerbiasError, match=message):
            run_training(config)


@pytest.mark.parametrize("name", sorted(SEED_STUDY_FAMILIES))
def test_the_base_preference_terms_train_every_family(tiny_family, name, pair_file, tmp_path):
    """keep, residual_scale and flip_term read d_base with the adapter switched off (an XLM with the
    run's language): a LoRA run with all three trains every seed-study family to its checkpoint."""
    config = family_config(tiny_family, name, tmp_path / "run", pair_file, objective="equalise",
                           pairs__train=["queerbias-de:train"], pairs__train_optional=[], equalise__keep=0.1,
                           equalise__residual_scale=1.0, equalise__flip_term=1.0)
    result = run_training(config)
    assert [m["step"] for m in result["metrics"]] == [0, 2]
    assert math.isfinite(result["metrics"][-1]["train_loss"])
