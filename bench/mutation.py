"""Mutation score of the modules a result or a person depends on (issue 54), by mutmut.

    python bench/mutation.py [MODULE ...] [--jobs N] [--again] [--work DIR]

Each module in MODULES is mutated alone and judged by its own tests only, so its score says how
well those tests pin that module down (not whether some slow end-to-end test happens to touch
it), and a run costs what those tests cost. A module is one line of MODULES: the source files
under src/queerbias and the test files that target them.

mutmut (the `mutation` extra: pip install -e '.[mutation]') reads its settings from the
pyproject.toml of the folder it runs in and writes its mutated copy of src and tests there
(mutants/). So every module runs in a folder of its own under --work: links to src and tests,
the project's pyproject.toml with a [tool.mutmut] table naming the module and its tests, and,
inside mutants/, links to the rest of the checkout for tests that read its files. Every run
starts afresh (but see --again), because mutmut keeps the verdicts of functions that did not
change, and a test added since would not be seen. In a module's folder, `mutmut show NAME` shows a mutant.

A mutant that survives is a missing test or an equivalent mutant (no test could tell it from
the original); bench/mutation_equivalent.md lists the equivalent ones, each with its reason.
The score is the share of the other mutants killed (a timeout is a kill). The command exits 1
when a module scores below 90% or a survivor is not listed, and names the listed mutants that
no longer survive (a number shifts when its function changes). It writes the modules' rows into
BENCHMARKS.md ("Mutation score"); the other modules' rows stay as they were.

`--again` continues a module's last run: the mutants it did not reach (a run stopped half way),
then only those that survived, with the tests as they are now (mutmut copies tests/ afresh and
finds the tests added since): after writing a test that kills survivors, it costs their tests,
not the module's whole run. A killed mutant keeps its verdict.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchmarks_md import BENCHMARKS_MD, markdown_table, write_section  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
EQUIVALENT = REPO / "bench" / "mutation_equivalent.md"
TARGET = 90.0

# name: (source files under src/queerbias, the tests that target them)
MODULES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "pair_scores": (("suites/pairs/scoring.py",), ("tests/suites/test_pair_outcome.py", "tests/scoring/test_exactness.py",
                                                   "tests/suites/test_pair_screening.py")),
    "alignment": (("suites/pairs/alignment.py",), ("tests/suites/test_pair_alignment.py",)),
    "paired_stats": (("report/paired_stats.py",), ("tests/report/test_paired_stats.py",)),
    "floor": (("suites/pairs/floor.py",), ("tests/suites/test_pair_floor.py",)),
    "indifference": (("suites/pairs/indifference.py",), ("tests/suites/test_pair_indifference.py",
                                                         "tests/suites/test_pair_indifference_report.py",
                                                         "tests/suites/test_pair_floor.py")),
    "harm": (("suites/pairs/harm.py",), ("tests/suites/test_pair_floor.py", "tests/suites/test_pair_indifference.py",
                                         "tests/suites/test_pair_indifference_report.py")),
    "scrub": (("text/scrub.py",), ("tests/text/test_text_scrub.py",)),
    "crawl_state": (("corpus/crawl_state.py",), ("tests/crawl/test_crawl_state.py", "tests/crawl/test_removed_authors.py")),
    "outputs": (("outputs.py",), ("tests/test_outputs.py",)),
    "equalise_loss": (("train/objectives/equalise/loss.py",), ("tests/train/test_equalise_loss.py",
                                                               "tests/train/test_equalise.py", "tests/train/test_keep.py",
                                                               "tests/train/test_one_sided.py",
                                                               "tests/train/test_pairing.py",
                                                               # a few training steps end to end (22 s): a test of
                                                               # the trainer, not of the loss, and run per mutant
                                                               "--deselect", "tests/train/test_equalise.py::test_a_few"
                                                               "_steps_lower_the_pair_loss_on_held_out_pairs")),
    "gruff_metrics": (("suites/gruff/metrics.py",), ("tests/suites/gruff/test_gruff_metrics.py",)),
    "lou_metrics": (("suites/lou/metrics.py",), ("tests/suites/lou/test_lou_metrics.py",)),
    "gifi_dimensions": (("suites/gifi/dimensions.py",), ("tests/suites/gifi/test_gifi_dimensions.py",)),
    "association": (("suites/pairs/association.py",), ("tests/suites/test_pair_association.py",)),
}

KILLED = ("killed", "timeout")  # mutmut's verdicts that a test caught the mutant
SURVIVED = ("survived", "no tests", "suspicious")  # what must be killed or listed as equivalent
LISTED = re.compile(r"^\|\s*`([\w.]+__mutmut_\d+)`", re.M)


def mutmut(folder: Path, *args: str, **run) -> subprocess.CompletedProcess:
    """mutmut in a module's folder. Tests that start a queerbias process (a build to kill, a CLI run) find the
    mutated tree first on PYTHONPATH, as the tests themselves do through mutmut's sys.path."""
    path = os.pathsep.join(filter(None, (str(folder / "mutants" / "src"), os.environ.get("PYTHONPATH"))))
    return subprocess.run([sys.executable, "-m", "mutmut", *args], cwd=folder, text=True,
                          env={**os.environ, "PYTHONPATH": path}, **run)


def prepare(folder: Path, sources: tuple[str, ...], tests: tuple[str, ...]) -> None:
    """A fresh folder in which mutmut mutates `sources` and runs `tests` only."""
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "mutants" / "src").mkdir(parents=True)  # on PYTHONPATH from the start (see `mutmut`)
    for name in ("src", "tests"):
        (folder / name).symlink_to(REPO / name)
    for entry in REPO.iterdir():
        if entry.name not in ("src", "tests", "pyproject.toml") and not entry.name.startswith("."):
            (folder / "mutants" / entry.name).symlink_to(entry)
    shared = REPO.parent / "shared"  # the public test data beside the checkout (tests/conftest.py)
    if shared.is_dir():
        (folder / "shared").symlink_to(shared)
    table = ("\n[tool.mutmut]\n"
             'source_paths = ["src"]\n'
             f"only_mutate = {[f'src/queerbias/{source}' for source in sources]!r}\n"
             f"pytest_add_cli_args_test_selection = {list(tests)!r}\n"
             'pytest_add_cli_args = ["-p", "no:cacheprovider", "-p", "no:xdist"]\n'
             # every run of the tests in a fresh fork of a process that has run none: some keep state in the
             # process (queerbias.killpoint counts the points a test passed, and pauses only the first time)
             'process_isolation = "forkserver"\n')
    (folder / "pyproject.toml").write_text((REPO / "pyproject.toml").read_text(encoding="utf-8") + table,
                                           encoding="utf-8")


def verdicts(folder: Path) -> dict[str, str]:
    """Every mutant's verdict, as `mutmut results --all true` prints it."""
    printed = mutmut(folder, "results", "--all", "true", capture_output=True, check=True).stdout
    return dict(line.strip().rsplit(": ", 1) for line in printed.splitlines() if "__mutmut_" in line)


def changed_lines(folder: Path, mutant: str) -> str:
    """The mutant's change as `old → new` (its diff's - and + lines), for a row of the equivalent list."""
    diff = mutmut(folder, "show", mutant, capture_output=True, check=True).stdout.splitlines()
    old = " ".join(line[1:].strip() for line in diff if line.startswith("-") and not line.startswith("---"))
    new = " ".join(line[1:].strip() for line in diff if line.startswith("+") and not line.startswith("+++"))
    return f"`{old}` → `{new}`"


def run_module(name: str, work: Path, jobs: int, equivalent: set[str], again: bool = False) -> dict:
    sources, tests = MODULES[name]
    folder = work / name
    seconds_file = folder / "seconds"
    if again and (folder / "mutants").is_dir():
        # the mutants the last run did not reach, then its survivors, against the tests as they are now: mutmut
        # copies tests/ afresh and finds the tests added since; a killed mutant stays killed (tests are only added)
        done = mutmut(folder, "run", "--max-children", str(jobs), capture_output=True)
        survivors = sorted(m for m, verdict in verdicts(folder).items() if verdict == "survived")
        if done.returncode == 0 and survivors:
            done = mutmut(folder, "run", "--max-children", str(jobs), *survivors, capture_output=True)
        seconds = float(seconds_file.read_text()) if seconds_file.exists() else float("nan")
    else:
        prepare(folder, sources, tests)
        started = time.monotonic()
        done = mutmut(folder, "run", "--max-children", str(jobs), capture_output=True)
        seconds = time.monotonic() - started
        seconds_file.write_text(f"{seconds:.0f}\n")
    if done.returncode != 0:
        sys.exit(f"{name}: mutmut failed (exit {done.returncode}):\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    found = verdicts(folder)
    survivors = sorted(m for m, verdict in found.items() if verdict in SURVIVED)
    listed = {m for m in equivalent if m.startswith(tuple(f"queerbias.{s[:-3].replace('/', '.')}." for s in sources))}
    killed = sum(verdict in KILLED for verdict in found.values())
    judged = len(found) - len(listed & set(survivors))
    return {"name": name, "mutants": len(found), "killed": killed, "survived": len(survivors),
            "equivalent": len(listed & set(survivors)), "score": 100 * killed / judged if judged else 100.0,
            "seconds": seconds, "unlisted": [(m, changed_lines(folder, m)) for m in survivors if m not in listed],
            "stale": sorted(listed - set(survivors))}


HEADER = ["module", "mutants", "killed", "survived", "equivalent", "score %", "seconds"]


def previous_rows(path: Path = BENCHMARKS_MD) -> dict[str, list[str]]:
    """The rows of the table BENCHMARKS.md holds now, by module: a run of some modules keeps the others'."""
    text = path.read_text(encoding="utf-8")
    section = text.split("<!-- mutation:begin -->")[-1].split("<!-- mutation:end -->")[0]
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in section.splitlines()
            if line.startswith("| ") and not line.startswith(f"| {HEADER[0]} |")]
    return {row[0]: row for row in rows if row and row[0] in MODULES}


def report(results: list[dict], jobs: int, kept: dict[str, list[str]] | None = None) -> list[str]:
    run = {r["name"]: [r["name"], str(r["mutants"]), str(r["killed"]), str(r["survived"]), str(r["equivalent"]),
                       f"{r['score']:.1f}", "–" if r["seconds"] != r["seconds"] else f"{r['seconds']:.0f}"] for r in results}
    rows = [run.get(name) or (kept or {}).get(name) or [name, "–", "–", "–", "–", "not run", "–"] for name in MODULES]
    version = f"mutmut {importlib.metadata.version('mutmut')}"
    return [f"Command: `python bench/mutation.py --jobs {jobs}` ({version}, Python "
            f"{sys.version.split()[0]}, {os.cpu_count()} CPU cores). Score: killed / (mutants - equivalent), a "
            f"timeout counting as killed; the equivalent survivors are listed in bench/mutation_equivalent.md. "
            f"Seconds: the module's whole run.", "",
            *markdown_table(HEADER, [False, True, True, True, True, True, True], rows)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", metavar="MODULE",
                        help=f"modules to run (default: all of {', '.join(MODULES)})")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="mutants tested side by side")
    parser.add_argument("--again", action="store_true",
                        help="continue each module's last run: the mutants it did not reach, then its survivors, "
                             "with the tests as they are now")
    parser.add_argument("--work", type=Path, default=REPO / ".mutation",
                        help="the modules' mutmut folders (default: .mutation/ in the checkout, ignored by git)")
    args = parser.parse_args()
    if unknown := sorted(set(args.modules) - set(MODULES)):
        parser.error(f"unknown modules {', '.join(unknown)}; MODULES has {', '.join(MODULES)}")
    os.environ.setdefault("OMP_NUM_THREADS", "1")  # one thread per mutant's test process, as scripts/test.sh
    args.work.mkdir(parents=True, exist_ok=True)
    (args.work / ".gitignore").write_text("*\n", encoding="utf-8")
    equivalent = set(LISTED.findall(EQUIVALENT.read_text(encoding="utf-8")))
    results = []
    for name in args.modules or MODULES:
        results.append(run_module(name, args.work.resolve(), args.jobs, equivalent, args.again))
        result = results[-1]
        print(f"{name}: {result['killed']}/{result['mutants']} killed, {result['equivalent']} equivalent, "
              f"score {result['score']:.1f}% ({result['seconds']:.0f} s)", flush=True)
    lines = report(results, args.jobs, previous_rows())
    print("\n".join(lines))
    failed = False
    for result in results:
        for mutant, change in result["unlisted"]:
            print(f"unlisted survivor: | `{mutant}` | {change} | |")
        for mutant in result["stale"]:
            print(f"listed as equivalent but no longer surviving: {mutant}")
        failed |= bool(result["unlisted"]) or result["score"] < TARGET
    write_section("mutation", "\n".join(lines))  # the modules run now; the others' rows as they were
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
