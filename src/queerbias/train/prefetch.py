"""Everything training runs read that may come from the network, fetched ahead into the caches.

A study on a cluster runs its cells on nodes that often have no network, many at once. Left to
the cells, the first task to start would download a model while the next reads a half-written
cache. `study prefetch` runs this where the network is, once: each model through the loader a
run uses (`modeling.load_base`: the Hub's files, its safetensors conversion where it has one, an
embedded model's conversion), each benchmark's data through its suite (`Suite.load_data`:
registered pair sets are downloaded and checked against their sha256), each training corpus
(`data.read_texts`, which fetches a Hugging Face dataset) and the training pairs
(`pairs.load_training_pairs`). So it fetches exactly what the runs will read, from the same
caches (`$HF_HOME`, `$QUEERBIAS_CACHE`), and loading a model once also checks that it is whole.
What is already there is read, not fetched again.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from queerbias.suites.registry import get_suite
from queerbias.train import benchmarks
from queerbias.train.config import TrainConfig, check_installed
from queerbias.train.data import read_texts, resolve_validation
from queerbias.train.modeling import load_base
from queerbias.train.objectives.registry import get_objective
from queerbias.train.pair_batches import load_training_pairs


def prefetch(configs: Iterable[TrainConfig]):
    """Fetch what the runs of `configs` read; yields one line per model, data set and corpus, each once."""
    seen: set[tuple] = set()

    def first(*key) -> bool:
        if key in seen:
            return False
        seen.add(key)
        return True

    for config in configs:
        check_installed(config)
        objective = get_objective(config.objective)
        config, skipped = benchmarks.resolve(config, objective.held_out)
        for name in skipped:
            if first("skipped", name):
                yield f"benchmark {name}: not available offline and optional; the runs skip it"
        if first("model", config.model, config.kind, config.lang, config.trust_remote_code,
                 config.allow_pickle_weights):
            lm = load_base(config)
            weights = lm.source.get("weights", {}).get("method", "")
            yield f"model {config.model}: {lm.kind}, weights {lm.fingerprint}" + (f" ({weights})" if weights else "")
            del lm
        for index, (bench, name) in enumerate(zip(config.eval.benchmarks, config.benchmark_dirs(), strict=True)):
            settings = benchmarks.suite_settings(bench, f"eval.benchmarks[{index}]")
            if first("benchmark", bench.suite, bench.data, json.dumps(settings.__dict__, sort_keys=True, default=str)):
                _, ref = get_suite(bench.suite).load_data(bench.data, settings)
                yield f"benchmark {name}: {ref.name}, {ref.n_items} items, {ref.checksum}"
        corpus = objective.uses_corpus or bool(config.pairs.mine)
        if corpus and first("corpus", config.data.train, config.data.max_train_docs):
            texts = read_texts(config.data.train, config.data, "train", config.data.max_train_docs)
            yield f"corpus {config.data.train}: {len(texts)} training documents"
            validation = resolve_validation(config.data)
            if validation is not None:
                found = read_texts(validation, config.data, "validation", config.data.max_validation_docs)
                yield f"validation {validation}: {len(found)} documents"
        if objective.uses_pairs and first("training pairs", json.dumps(config.pairs.__dict__, sort_keys=True, default=str)):
            mined_from = read_texts(config.data.train, config.data, "train", config.data.max_train_docs) \
                if config.pairs.mine else None
            pairs = load_training_pairs(config, mined_from)
            if pairs is not None:
                yield f"training pairs {pairs.name}: {len(pairs)} pairs, {pairs.checksum}"
