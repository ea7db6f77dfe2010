"""Masked copies of two sides' outputs for compare_main.sh: WORK/{old,new} -> WORK/masked/{old,new}.

Masked, and only these: absolute paths (each checkout's root -> <ROOT>, each side's output folder ->
<OUT>), timestamps, wall times and speeds, library/code versions, commit hashes and the code
fingerprint. Every JSON key masked is listed in WORK/masked/keys.txt, so nothing is hidden silently.
Binary files (PNG, weights) are left out; their names are listed in WORK/masked/binary.txt.

    python mask_outputs.py WORK OLD_CHECKOUT NEW_CHECKOUT
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

TEXT = {".json", ".jsonl", ".csv", ".tsv", ".md", ".tex", ".txt", ".yaml", ".yml", ".html", ".out", ".err",
        ".rc", ".partial", ".py", ".sh", ".sbatch", ""}
SKIP_DIRS = {"cache", "models"}
#: JSON keys whose values legitimately differ from run to run or checkout to checkout
KEY = re.compile(r"(^|_)(created|started|finished|updated|written|launched|ended)(_at)?$|_at$|^time$|timestamp|"
                 r"wall|_s$|_seconds$|^seconds$|per_s$|_per_second$|^duration|elapsed|minutes|"
                 r"^versions$|^(peft|trl|torch|transformers|python|queerbias|numpy|accelerate)(_version)?$|^version$|"
                 r"^commit$|^code_fingerprint$|^host(name)?$|^platform$|^pid$|runtime$|^launch$", re.I)
TEXT_MASKS = [
    (re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?([+-]\d\d:?\d\d|Z)?"), "<TIME>"),
    (re.compile(r"\b\d+(\.\d+)? ?(s|min|h|ms) (evaluating|loading|training|wall)\b"), "<DUR> \\3"),
    (re.compile(r"\(\d+(\.\d+)? (items|pairs|sentences|it|samples)/s\)"), "(<SPEED>)"),
    (re.compile(r"\b\d+(\.\d+)? ?(items|it|samples|steps|tokens|pairs)/s\b"), "<SPEED>"),
    (re.compile(r"\b[0-9a-f]{40}\b"), "<COMMIT>"),
    # progress bars (stderr): elapsed/remaining and rates
    (re.compile(r"\[\d\d:\d\d(:\d\d)?<[\d:?]+, *[\d.?]+ ?\w+/\w+"), "[<ETA>, <RATE>"),
    (re.compile(r"\[\d\d:\d\d(:\d\d)?<[\d:?]+"), "[<ETA>"),
    (re.compile(r"tok/s=\d+"), "tok/s=<N>"),
    (re.compile(r"(\"launch\": \"<TIME>) \d+ [0-9a-f]{8}"), "\\1 <LAUNCH>"),
    (re.compile(r"finished in \d+(\.\d+)? ?(s|min|h)"), "finished in <DUR>"),
    (re.compile(r"\b\d+(\.\d+)? (min|s)(?=</td>|  *\||$| per cell)", re.M), "<DUR>"),
    (re.compile(r"\b\d+(\.\d+)? min\b"), "<DUR>"),  # a study's time per cell
    (re.compile(r"\b(queerbias|torch|transformers|peft|trl|python)[ =]\d+\.\d+[\w.+-]*"), "\\1 <VERSION>"),
]


def mask_json(value, path, seen):
    if isinstance(value, dict) and isinstance(value.get("target_modules"), list):
        # peft writes target_modules from a set: its order changes with every process's hash seed
        value = {**value, "target_modules": sorted(value["target_modules"])}
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if KEY.search(str(key)) and (not isinstance(item, (dict, list)) or key == "versions"):
                seen.add(f"{path}.{key}".lstrip("."))
                out[key] = "<MASKED>"
            else:
                out[key] = mask_json(item, f"{path}.{key}", seen)
        return out
    if isinstance(value, list):
        return [mask_json(item, path + "[]", seen) for item in value]
    return value


def mask_csv(text: str, seen: set[str], name: str) -> str:
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        return text
    masked = [i for i, column in enumerate(rows[0]) if KEY.search(column) or column in ("minutes", "hours")]
    for i in masked:
        seen.add(f"{name}:{rows[0][i]}")
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for n, row in enumerate(rows):
        writer.writerow([("<MASKED>" if n and i in masked else cell) for i, cell in enumerate(row)])
    return out.getvalue()


def short_commit(root: str) -> str | None:
    try:
        return subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip() or None
    except (OSError, subprocess.CalledProcessError):
        return None


def mask_text(text: str, paths: list[tuple[str, str]]) -> str:
    for old, new in paths:
        text = text.replace(old, new)
    for pattern, repl in TEXT_MASKS:
        text = pattern.sub(repl, text)
    return text


def main(work: Path, old_root: str, new_root: str) -> None:
    masked = work / "masked"
    shutil.rmtree(masked, ignore_errors=True)
    seen: set[str] = set()
    binary: list[str] = []
    for side in ("old", "new"):
        src = work / side
        paths = [(str(src), "<OUT>"), (old_root, "<ROOT>"), (new_root, "<ROOT>"), (str(work / "models"), "<MODELS>")]
        # relative links to a checkout (../../wt-old/corpora), the checkouts' short commits, study launch ids
        paths += [(f"../{Path(root).name}/", "../<ROOT>/") for root in (old_root, new_root)]
        paths += [(commit, "<COMMIT>") for commit in map(short_commit, (old_root, new_root)) if commit]
        paths.sort(key=lambda p: -len(p[0]))
        for file in sorted(src.rglob("*")):
            rel = file.relative_to(src)
            if not file.is_file() or rel.parts[0] in SKIP_DIRS:
                continue
            if file.suffix not in TEXT:
                binary.append(f"{side}/{rel}")
                continue
            try:
                text = file.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                binary.append(f"{side}/{rel}")
                continue
            text = mask_text(text, paths)
            if file.suffix == ".csv":
                text = mask_csv(text, seen, file.name)
            elif file.suffix == ".json":
                try:
                    text = json.dumps(mask_json(json.loads(text), "", seen), indent=1, ensure_ascii=False)
                except ValueError:
                    pass
            elif file.suffix in (".jsonl", ".partial"):
                lines = []
                for line in text.splitlines():
                    try:
                        lines.append(json.dumps(mask_json(json.loads(line), "", seen), ensure_ascii=False))
                    except ValueError:
                        lines.append(line)
                text = "\n".join(lines) + "\n"
            target = masked / side / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
    (masked / "keys.txt").write_text("\n".join(sorted(seen)) + "\n", encoding="utf-8")
    (masked / "binary.txt").write_text("\n".join(binary) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2], sys.argv[3])
