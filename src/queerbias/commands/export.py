"""`queerbias export lm-eval`: a pair benchmark as an lm-evaluation-harness task folder."""

from __future__ import annotations

import shlex

from queerbias.commands.run import DEFAULT_MODEL
from queerbias.errors import QueerbiasError
from queerbias.export.lm_eval_folder import export_lm_eval
from queerbias.families import get_family
from queerbias.options import add_arguments, from_args
from queerbias.outputs import output_path, path_arg, spec_arg
from queerbias.pairs.resolve import load_pairs
from queerbias.pairs.schema import PairSet
from queerbias.suites.pairs.declaration import Pairs, PairSettings

#: `queerbias score`'s settings that have no meaning for a task folder (lm-eval batches itself)
NOT_EXPORTED = ("batch_size", "chunk_pairs", "long_sentences")


def register(subparsers) -> None:
    p = subparsers.add_parser("export", help="export a pair benchmark for other tools",
                              description="Export a pair benchmark for other evaluation tools.")
    targets = p.add_subparsers(dest="target", required=True, metavar="TARGET")
    lm_eval = targets.add_parser(
        "lm-eval", help="an lm-evaluation-harness task folder (causal LMs)",
        description="Write an lm-evaluation-harness task folder whose bias and soft scores equal "
                    "`queerbias score` for a causal LM with the given model's tokenizer "
                    "(docs/lm-eval.md). lm-eval has no masked-LM backend, so masked LMs are refused.")
    lm_eval.add_argument("--pairs", default=Pairs.data_default, type=spec_arg,
                         help=f"registered benchmark name or a CSV/TSV/JSONL file (default {Pairs.data_default})")
    lm_eval.add_argument("--out", type=path_arg, required=True, help="the task folder to write")
    lm_eval.add_argument("--model", default=DEFAULT_MODEL, type=spec_arg,
                         help="the causal LM (Hub id, folder, adapter or embedded:...) whose tokenizer "
                              f"the requests are built for (default {DEFAULT_MODEL}); no weights are loaded")
    lm_eval.add_argument("--task", default=None, help="lm-eval task name (default: from the pair set)")
    lm_eval.add_argument("--trust-remote-code", action="store_true")
    lm_eval.add_argument("--overwrite", action="store_true", help="replace the contents of --out")
    add_arguments(lm_eval, PairSettings, skip=NOT_EXPORTED)  # --sample N is `queerbias score --sample N`
    lm_eval.set_defaults(func=run_lm_eval)


def run_lm_eval(args) -> int:
    settings = from_args(PairSettings, args)  # checked before anything loads
    args.out = output_path(args.out, [args.pairs, args.model])
    from queerbias.models.loading import inspect_model  # torch and transformers: after the checks
    from queerbias.suites.pairs.suite import PairsSuite, data_of  # the suite's screen and sample: torch too

    config = settings.scoring()
    model = inspect_model(args.model, trust_remote_code=args.trust_remote_code)
    if not get_family(model.kind).left_to_right:  # lm-eval's loglikelihood requests read continuations
        raise QueerbiasError(f"{args.model} is a {model.kind} LM; lm-evaluation-harness has no {model.kind}-LM "
                             "backend, so no lm-eval task can give its pseudo-log-likelihood "
                             "scores: use `queerbias score`")
    pair_set = load_pairs(args.pairs, duplicates=settings.duplicates, identical=settings.identical,
                          layout=settings.layout, sample=settings.sample, seed=settings.seed)
    kept, _ = PairsSuite().screen(model, pair_set.pairs, data_of(pair_set, settings)[1], settings)  # as score does
    if len(kept) < len(pair_set):
        pair_set = PairSet(pair_set.name, list(kept), pair_set.source, meta=pair_set.meta)
    task_yaml = export_lm_eval(pair_set, model.tokenizer, model.base_path, args.out, config, args.task,
                               args.overwrite, model.max_length)
    task = task_yaml.stem
    model_args = (f"pretrained={model.base_path}{',peft=' + model.path if model.adapter else ''},dtype=float32"
                  f"{',add_bos_token=False' if config.bos == 'none' else ''}")
    command = ["lm_eval", "--model", "hf", "--model_args", model_args, "--tasks", task, "--include_path", str(args.out)]
    print(f"wrote task {task} ({len(pair_set)} pairs) to {args.out}\n"
          f"run: {shlex.join(command)}")  # quoted for the shell: a path may hold a space
    return 0
