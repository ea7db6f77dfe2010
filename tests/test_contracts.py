"""The narrow contracts of issue 30, checked on the source: what a suite declares stays in its folder,
and the report's two layers import in one direction."""

from __future__ import annotations

import ast
from pathlib import Path

import queerbias
from queerbias.suites import registry
from queerbias.suites.protocol import OVERALL, Suite

ROOT = Path(queerbias.__file__).parent
#: string constants that are the same word as a suite or figure but mean something else, by file: the data's
#: words of the pair sets, their lm-eval export and the training config's `pairs` section
OTHER_MEANINGS = {
    "commands/benchmarks.py": {"pairs"},  # the column of the number of pairs of a registered pair set
    "train/config.py": {"pairs"},  # the training config section `pairs`, whose keys moved (`MOVED`)
    "train/objectives/dpo/objective.py": {"pairs"},  # the training config section `pairs` (train.config.TrainingPairs)
    "train/objectives/equalise/objective.py": {"pairs"},
    "train/objectives/contrast/objective.py": {"pairs"},
    "pairs/schema.py": {"direction"},  # a pair's field `direction`: stereo or antistereo
    "pairs/io.py": {"direction"},  # the pair file column it is read from
    "export/lm_eval_task.py": {"direction"},  # the fields of a pair the task's documents carry
    "export/lm_eval_folder.py": {"direction", "pairs"},  # those fields; the pair set a folder records
}


def _declared_words() -> set[str]:
    """Every registered suite's name and the comparison-level parts and figures it declares or judges."""
    words = set()
    for declaration in registry.list_declarations():
        words |= {declaration.name, *declaration.figures, *declaration.parts, *declaration.optional_parts}
        words |= {f.part for f in declaration.judged.declared()}
    return words - {OVERALL}


def _outside_suite_folders() -> list[Path]:
    found = []
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT).parts
        if parts[0] == "suites" and (len(parts) > 2 or parts[1] == "registry.py"):
            continue
        found.append(path)
    return found


def test_no_suite_name_or_figure_is_named_outside_its_folder_and_the_registry():
    """The study, training, the comparator, the card, the CLI and the API read what a suite declares; none of
    them names a suite or its figures (issue 30). Prose may; code constants may not."""
    words = _declared_words()
    assert {"pairs", "gruff", "lou", "gifi", "distance", "direction", "pair_gap", "association", "shift"} <= words
    named = []
    for path in _outside_suite_folders():
        allowed = OTHER_MEANINGS.get(str(path.relative_to(ROOT)), set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in words - allowed:
                named.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
    assert named == []


def test_every_judged_figure_is_of_a_declared_part():
    """The declaration's parts are the one list its figures and judged figures name (the comparator checks a
    comparison against it)."""
    for declaration in registry.list_declarations():
        declared = {OVERALL, *declaration.parts, *declaration.optional_parts}
        named = {*declaration.figures, *(f.part for f in declaration.judged.declared())}
        assert named <= declared, declaration.name


def test_the_check_catches_a_suite_named_in_study_code(tmp_path):
    probe = ast.parse('if benchmarks.get(name) != "pairs":\n    pass\n')
    assert any(isinstance(n, ast.Constant) and n.value in _declared_words() for n in ast.walk(probe))


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return found


def test_report_is_the_lower_layer_and_the_comparator_the_upper():
    """report/ (paired statistics, tables, plots) imports no suite and no comparator, so any suite may import
    it; no suite imports the comparator, which imports the suites."""
    for path in (ROOT / "report").rglob("*.py"):
        assert not {m for m in _imports(path) if m.startswith(("queerbias.suites", "queerbias.comparison"))}, path
    for path in (ROOT / "suites").rglob("*.py"):
        assert not {m for m in _imports(path) if m.startswith("queerbias.comparison")}, path


#: the packages above the CLI's, the comparator's and training's inputs: what a suite, the corpus, a crawler
#: or the text utilities must never import (cli and commands on top, then the Python API, studies, training,
#: the comparator and the lm-eval export, which read the suites)
UPPER = {"cli", "commands", "api", "study", "train", "comparison", "export", "launched"}
NEVER = {
    "suites": UPPER,
    "corpus": UPPER | {"suites", "scoring", "models", "pairs", "report"},
    "crawl": UPPER | {"suites", "scoring", "models", "pairs", "report", "corpus"},
    "text": UPPER | {"suites", "scoring", "models", "pairs", "report", "corpus", "crawl"},
}


def _queerbias_packages(path: Path) -> set[str]:
    """The queerbias packages (or top-level modules) a file imports, counting imports inside functions."""
    return {m.split(".")[1] for m in _imports(path) if m.startswith("queerbias.") and m.count(".") >= 1}


def test_no_upward_import_from_the_suites_the_corpus_the_crawlers_or_the_text_utilities():
    """What the CLI, studies, training and the comparator drive never imports them back (issue 47)."""
    upward = [f"{path.relative_to(ROOT)} imports queerbias.{package}"
              for below, above in NEVER.items() for path in (ROOT / below).rglob("*.py")
              for package in sorted(_queerbias_packages(path) & above)]
    assert upward == []


def test_only_the_cli_imports_the_commands():
    """The CLI is on top: the commands' helpers (run and compare arguments, `evaluate`) are never a library."""
    importers = [str(path.relative_to(ROOT)) for path in ROOT.rglob("*.py")
                 if path.name != "cli.py" or path.parent != ROOT
                 if path.relative_to(ROOT).parts[0] != "commands" and "commands" in _queerbias_packages(path)]
    assert importers == []


def test_the_layer_check_sees_an_upward_import(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from queerbias.commands.run import evaluate\n")
    assert _queerbias_packages(probe) == {"commands"}


def test_every_suite_names_its_overlap_texts_or_says_why_it_has_none():
    for name in registry.REGISTRY:
        suite = registry.get_suite(name)
        assert type(suite).texts is not Suite.texts or suite.no_texts_reason, name


def test_a_suite_that_names_no_overlap_texts_and_no_reason_is_refused():
    import pytest

    with pytest.raises(TypeError, match="must name the texts a training corpus may not contain"):
        type("Silent", (Suite,), {"load_data": lambda *a: None, "evaluate": lambda *a: None,
                                  "summarise": lambda *a: None, "headline": lambda *a: None,
                                  "title": lambda *a: None, "render": lambda *a: None})
