"""The seed study as a researcher runs it, on tiny models of its eight families (issue 46).

configs/study-seed.yaml itself, with only what a machine without the Hub must change: each Hub id
replaced by a tiny folder of the same family (tests/tiny_models.py; the XLM copies told their kind,
which the published checkpoints' Hub ids tell), 2 seeds, 2 training steps on the demo corpus, and
two local pair files in the layouts of WinoQueer-DE and of the survey set (the survey's with pairs
that target several groups).
"""

from __future__ import annotations

from pathlib import Path

import yaml

from tiny_models import SEED_STUDY_FAMILIES

from .helpers import DEMO_CORPUS, REPO

#: the WinoQueer-DE layout: Gender_ID_x (the group), Gender_ID_y, sent_x (the stereotype), sent_y
WINOQUEER_DE = """Gender_ID_x,Gender_ID_y,sent_x,sent_y
Gay,Straight,Schwule Männer sind nett.,Heterosexuelle Männer sind nett.
Gay,Straight,Schwule Männer sind laut.,Heterosexuelle Männer sind laut.
Gay,Straight,Lukas ist schwul.,Lukas ist hetero.
Lesbian,Cis,Lesbische Frauen sind klug.,Cis Frauen sind klug.
Lesbian,Cis,Lesbische Frauen sind müde.,Cis Frauen sind müde.
Transgender,Cis,Trans Frauen sind stark.,Cis Frauen sind stark.
Transgender,Cis,Trans Frauen sind nett.,Cis Frauen sind nett.
NB,Cis,Nicht-binäre Menschen lachen.,Cis Menschen lachen.
Queer,Straight,Queere Menschen lesen gern.,Heterosexuelle Menschen lesen gern.
Bisexual,Straight,Bisexuelle Menschen können sich nicht entscheiden.,Heterosexuelle Menschen können sich nicht entscheiden.
"""
#: the survey set's layout, with statements that target several groups (Appendix C.2)
SURVEY = """Gender_ID_x,Gender_ID_y,sent_x,sent_y
Lesbian; Non-binary,Straight,Lesbische Frauen sind stark.,Heterosexuelle Frauen sind stark.
"Trans, Non-binary",Cis,Trans Frauen sind laut.,Cis Frauen sind laut.
Gay,Straight,Schwule Männer sind müde.,Heterosexuelle Männer sind müde.
Queer; Bisexual,Straight,Queere Menschen sind klug.,Cis Menschen sind klug.
Lesbian,Straight,Anna ist lesbisch.,Anna ist hetero.
Non-binary,Cis,Nicht-binäre Menschen sind nett.,Cis Menschen sind nett.
"""
#: what every cell trains: the seed study's recipe (full fine-tuning) for 2 steps on the demo corpus, at a learning
#: rate that moves a tiny model's scores in 2 steps
TRAINING = {"max_steps": 2, "eval_every": 2, "batch_size": 2, "grad_accum": 1, "logging_steps": 1, "threads": 1,
            "learning_rate": 3e-3,
            "data": {"train": str(DEMO_CORPUS), "max_validation_docs": 2},
            "eval": {"general_perplexity": False}, "compare": {"resamples": 50}}
MODELS = list(SEED_STUDY_FAMILIES)


def seed_study_file(work: Path, tiny_family, root: Path, models: list[str] | None = None) -> Path:
    """configs/study-seed.yaml with the Hub ids swapped for tiny folders (`models`: only these) and the
    data local; written to WORK/study.yaml."""
    raw = yaml.safe_load((REPO / "configs/study-seed.yaml").read_text(encoding="utf-8"))
    for name in list(raw["models"]):
        if models is not None and name not in models:
            del raw["models"][name]
            continue
        builder, kind = SEED_STUDY_FAMILIES[name]
        entry = raw["models"][name]
        entry = {"model": entry, "overrides": {}} if isinstance(entry, str) else entry
        overrides = {**entry.get("overrides", {}), **({"kind": kind} if builder == "xlm" else {})}
        raw["models"][name] = {"model": str(tiny_family(builder)), "overrides": overrides}
    (work / "winoqueer_de.csv").write_text(WINOQUEER_DE, encoding="utf-8")
    (work / "survey_pairs.csv").write_text(SURVEY, encoding="utf-8")
    raw["benchmarks"] = [{"suite": "pairs", "data": str(work / "winoqueer_de.csv"), "sample": None,
                          "name": "winoqueer-de"},
                         {"suite": "pairs", "data": str(work / "survey_pairs.csv"), "sample": None, "name": "survey"}]
    raw["runs"] = {"lm": str(REPO / raw["runs"]["lm"])}
    raw.update(output_dir=str(root), seeds=[0, 1], training={"overrides": TRAINING})
    path = work / "study.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path
