"""Write a pair benchmark as an lm-evaluation-harness task folder for one causal LM's tokenizer.

The folder holds the task as data (`<task>.yaml`: the scoring config, pair set checksum
and tokenizer fingerprint under `metadata.queerbias`), the pairs with their requests
(`pairs.jsonl`) and a three-line `utils.py` that points lm-eval at
`queerbias.export.lm_eval_task`, so scoring and aggregation are queerbias's own code
(lm-eval's Python needs queerbias installed). The YAML is written last: lm-eval finds
no task in a folder whose export was cut short. `overwrite` replaces only what an export
wrote (its YAML files, known by their first line, its utils.py and pairs.jsonl): another
tool's task YAML or a user's notes stay, and a file of ours by name that an export did not
write is refused.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import yaml

from queerbias import __version__
from queerbias.errors import QueerbiasError
from queerbias.export.lm_eval_requests import RequestBuilder
from queerbias.export.tokenizer_identity import tokenizer_fingerprint
from queerbias.fileio import atomic_open, atomic_write, dumps_line
from queerbias.pairs.schema import PairSet
from queerbias.scoring.config import ScoringConfig

DATA_FILE = "pairs.jsonl"
#: the first line of every task YAML an export writes: how `--overwrite` knows its own
YAML_MARK = "# written by `queerbias export lm-eval`"
UTILS = '''"""lm-evaluation-harness glue written by `queerbias export lm-eval`.

The task's code is queerbias's (queerbias.export.lm_eval_task), the same that
`queerbias score` runs, so install queerbias in lm-eval's environment.
"""

from pathlib import Path

from queerbias.export.lm_eval_task import PairsTask as _PairsTask


class PairsTask(_PairsTask):
    data_file = Path(__file__).with_name("{data_file}")
'''


def task_name(pair_set_name: str) -> str:
    """`queerbias-de` -> `queerbias_de`: lm-eval task names are identifiers."""
    return re.sub(r"[^a-z0-9]+", "_", pair_set_name.lower()).strip("_") or "pairs"


def export_lm_eval(pair_set: PairSet, tokenizer, tokenizer_name: str, out_dir: Path,
                   config: ScoringConfig | None = None, name: str | None = None,
                   overwrite: bool = False, max_length: int | None = None) -> Path:
    """Write the task folder; returns the YAML's path. Refuses pairs lm-eval cannot reproduce
    and sentences longer than `max_length` tokens (the model's context, when known)."""
    config = config or ScoringConfig()
    name = name or task_name(pair_set.name)
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise QueerbiasError(f"task name {name!r} must be letters, digits and underscores")
    out_dir = Path(out_dir)
    if out_dir.exists() and any(out_dir.iterdir()) and not overwrite:
        raise QueerbiasError(f"{out_dir} is not empty; choose another --out or pass --overwrite")
    stale = written_before(out_dir, f"{name}.yaml")
    bad = [g for g in pair_set.groups() if "," in g or "/" in g]
    if bad:
        raise QueerbiasError(f"group names {bad} contain ',' or '/', which lm-eval metric names "
                             "cannot hold; rename them in the pair file")
    add_bos_token = False if config.bos == "none" else None
    builder = RequestBuilder(tokenizer, config, add_bos_token, max_length)
    docs = [{"pair_id": pair.pair_id, "group": pair.group, "other_groups": list(pair.other_groups),
             "counterfactual_group": pair.counterfactual_group, "category": pair.category,
             "direction": pair.direction, "sent_more": pair.sent_more, "sent_less": pair.sent_less,
             "more": requests["more"].to_dict(), "less": requests["less"].to_dict(),
             "probe": [list(r) for r in requests["probe"]]}
            for pair, requests in zip(pair_set.pairs, builder.build(pair_set.pairs))]
    out_dir.mkdir(parents=True, exist_ok=True)
    for path in stale:
        path.unlink()
    with atomic_open(out_dir / DATA_FILE) as sink:
        sink.writelines(dumps_line(doc) for doc in docs)
    atomic_write(out_dir / "utils.py", UTILS.format(data_file=DATA_FILE))
    metadata = {
        "version": 1.0,
        "queerbias": {
            "queerbias_version": __version__,
            "pairs": {"name": pair_set.name, "source": pair_set.source,
                      "checksum": pair_set.checksum, "n_pairs": len(pair_set)},
            "scoring": config.to_dict(),
            "scoring_id": config.scoring_id,
            "tokenizer": {"name": tokenizer_name, "fingerprint": tokenizer_fingerprint(tokenizer)},
            "add_bos_token": add_bos_token,
        },
    }
    body = yaml.safe_dump({"output_type": "loglikelihood", "test_split": "test",
                           "metadata": metadata}, sort_keys=False, allow_unicode=True)
    yaml_path = out_dir / f"{name}.yaml"
    atomic_write(yaml_path, f"{YAML_MARK}; see docs/lm-eval.md\n"
                            f"task: {name}\nclass: !function utils.PairsTask\n{body}")
    return yaml_path


def written_before(out_dir: Path, task_file: str) -> list[Path]:
    """The task YAML files an earlier export wrote into `out_dir` (to delete: lm-eval would find
    their tasks beside the new one); refused, naming it, is a file that this export replaces
    (pairs.jsonl, utils.py, the task's YAML) but that no export wrote."""
    if not out_dir.is_dir():
        return []
    ours = [path for path in sorted(out_dir.glob("*.yaml")) if _first_line(path).startswith(YAML_MARK)]
    exported = bool(ours) or _read(out_dir / "utils.py") == UTILS.format(data_file=DATA_FILE)
    for name in (DATA_FILE, "utils.py", task_file):
        path = out_dir / name
        if not os.path.lexists(path):
            continue
        mine = path in ours if name == task_file else (exported if name == DATA_FILE else
                                                       _read(path) == UTILS.format(data_file=DATA_FILE))
        if not mine or not path.is_file():
            raise QueerbiasError(f"--out {out_dir} holds {name}, which no `queerbias export lm-eval` wrote; "
                                 "--overwrite replaces only what an export wrote; move it away or choose another "
                                 "--out")
    return ours


def _first_line(path: Path) -> str:
    return _read(path, 256).split("\n", 1)[0]


def _read(path: Path, limit: int = 1 << 16) -> str:
    """The start of a small text file, or "" for anything else (a folder, a FIFO, binary data)."""
    if not path.is_file():
        return ""
    with open(path, "rb") as handle:
        return handle.read(limit).decode("utf-8", errors="replace")
