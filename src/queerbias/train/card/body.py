"""The card's Markdown body: method, data, the before/after figures, perplexity, limitations, use.

Each section is a function of the run; every number comes from the run's files through
`TrainingRun` (the figures from delta.json's comparison of the base with the last checkpoint,
perplexity from metrics.jsonl). What is particular to a benchmark's suite (the pair suite's
table and distance to indifference) is its card companion's (`suites.companions.CardHooks`:
`card_summary`, `card_blocks`, `card_limitations`); what is particular to the objective is its declaration
(`train.objectives`: description, config sections, references).
"""

from __future__ import annotations

import os
from pathlib import Path

from queerbias.comparison.checkpoints import LAST_REFUSED, REFUSED, UNGUARDED
from queerbias.report.formatting import format_p, with_ci
from queerbias.report.tables import Table, fmt, to_markdown
from queerbias.suites.registry import companion
from queerbias.suites.store import read_json_file
from queerbias.train.card.run import Benchmark, TrainingRun

PERPLEXITIES = (("general_perplexity", "general (neutral German text shipped with queerbias)"),
                ("perplexity", "in-domain (the training corpus's validation split)"))


def card_body(run: TrainingRun, card_dir: Path) -> str:
    """The Markdown below the front matter; `card_dir` is where the card goes (links are relative to it)."""
    blocks = [f"# {run.path.name}", *_verdict(run), _summary(run)]
    if run.incomplete():
        blocks.append("> **Evaluation incomplete.** " + "; ".join(run.incomplete()) + ". No before/after figure "
                      "is given for what was not evaluated; rerun the training command to resume, then "
                      "`queerbias card RUN`.")
    blocks += ["## Model", _model_section(run), "## Training", _training_section(run),
               "## Training data", _data_section(run, card_dir), "## Evaluation", *_evaluation_blocks(run),
               "## Limitations", _limitations(run), "## Intended use", _intended_use(),
               "## Reproducing", _reproducing(run), "## References", _references(run)]
    return "\n\n".join(blocks) + "\n"


def _verdict(run: TrainingRun) -> list[str]:
    """The run's verdict as the card's first paragraph (none for a run written before verdicts were kept),
    in words for someone who finds the weights on the Hub: that its guards refused it and why, so that
    it is not a mitigation to use, or which checkpoint compare chose and why."""
    verdict, refused = run.verdict
    if verdict is None:
        return []
    what = "adapter" if run.lora else "model"
    last, status = verdict["last_step"], verdict["status"]
    guards = ", ".join(f"`{name}`" for name in verdict["guards"])
    checked = (f"Its training run checked every saved checkpoint against its guards ({guards}): benchmarks on "
               "which a mitigation must not make things worse; a checkpoint that did is refused.")
    if status == REFUSED:
        reasons = "; ".join(f"at step {step}, {why}" for step, why in refused.items())
        return [f"**This {what} was refused by its guards: {reasons}, so it is not a mitigation to use.** {checked} "
                "Every checkpoint was refused: the figures below describe what the training did, not a model to "
                "use as a mitigation."]
    chosen = _chosen(verdict["chosen"], last)
    if status == LAST_REFUSED:
        return [f"**The weights in this folder (the last checkpoint, step {last}) were refused by its guards: "
                f"{refused[str(last)]}, so they are not a mitigation to use.** {checked} {chosen}"]
    if status == UNGUARDED:
        return [f"{chosen} No guard benchmark checked this run, so nothing refused a checkpoint."]
    others = "; ".join(f"step {step}: {why}" for step, why in refused.items())
    return [f"{chosen} {checked} They passed the last checkpoint (step {last})"
            + (f" and refused {others}." if others else " and refused none.")]


def _chosen(chosen: dict | None, last: int) -> str:
    """Which checkpoint compare chose, by which criterion, and where its weights are."""
    if chosen is None:
        return "No benchmark of the run chooses a checkpoint."
    where = f"`compare/{chosen['benchmark']}/`"
    if chosen["label"] is None:
        return (f"Compare chose no checkpoint on `{chosen['benchmark']}` ({chosen['criterion_description']}): every "
                f"one was excluded, each with its reason in {where}, so the weights here are not a checkpoint it "
                "chose.")
    weights = ("its weights are the ones here" if chosen["step"] == last else
               f"its weights are in the run's `checkpoint-{chosen['step']}/`, the ones here are the last "
               f"checkpoint's (step {last})")
    return (f"Compare chose {chosen['label']} on `{chosen['benchmark']}` by its criterion "
            f"`{chosen['criterion']}` ({chosen['criterion_description']}); {weights}.")


def _summary(run: TrainingRun) -> str:
    kind, base = "LoRA adapter" if run.lora else "fully fine-tuned model", run.base
    sentence = (f"A {kind} of {base.hub_id or f'`{base.spec}`'}, trained with queerbias to reduce anti-LGBTQ+ bias "
                f"by {_what_it_trains(run)}.")
    for b in run.benchmarks:
        headline = b.delta is not None and companion(b.suite, "card").card_summary(b.final, b.data,
                                                                                   _evaluation_kind(run, b))
        if headline:
            return f"{sentence} {headline}{_perplexity_sentence(run)}"
    return sentence


def _what_it_trains(run: TrainingRun) -> str:
    return run.declared.description if run.declared else f"objective `{run.objective}`"


def _perplexity_sentence(run: TrainingRun) -> str:
    changes = [f"{label.split(' (')[0]} perplexity {run.metrics[0][key]:.2f} → {run.metrics[-1][key]:.2f} "
               f"({_percent(run.metrics[0][key], run.metrics[-1][key])})" for key, label in PERPLEXITIES
               if run.metrics and run.metrics[0].get(key) and run.metrics[-1].get(key) is not None]
    if not changes or not run.last_step:
        return ""
    text = "; ".join(changes)
    return f" {text[0].upper()}{text[1:]}."


def _percent(before: float, after: float) -> str:
    return f"{fmt(100 * (after / before - 1), 1, signed=True)}%"


def _model_section(run: TrainingRun) -> str:
    kind, base = run.kind or "language", run.base
    if run.final_weights:
        what = (f"- Type: {'a LoRA adapter (PEFT)' if run.lora else 'full fine-tuning'} of a {kind} LM; the "
                f"weights in `final/` are those of the last checkpoint (step {run.last_step}).")
    else:
        what = "- Type: no weights yet (the run did not finish)."
    licence = (f"that of the base model (`{base.licence}`)" if base.licence else
               "unknown: the weights inherit the base model's terms; check them before publishing")
    load = "- Load and score it: `queerbias score --model <this folder> --pairs queerbias-de --out scores/`"
    if run.lora:
        load += (" (`adapter_config.json` names the base by the path it was trained from; on another machine "
                 "point `base_model_name_or_path` at your copy).")
    return "\n".join([f"- Base model: {base.note}.", what, f"- Licence: {licence}.", load])


def _training_section(run: TrainingRun) -> str:
    c = run.config
    steps = f"{c['max_steps']} optimizer steps" if (c.get("max_steps") or -1) > 0 else f"{c.get('epochs')} epochs"
    lines = [f"- Objective: `{run.objective}`: {_what_it_trains(run)}.",
             f"- Method: {'LoRA' if run.lora else 'full fine-tuning'}"
             + (f" (r {run.setting('lora.r')}, alpha {run.setting('lora.alpha')}, dropout "
                f"{run.setting('lora.dropout')}, "
                f"targets {', '.join(_adapter_targets(run)) or 'per architecture'})" if run.lora else "") + ".",
             f"- {steps}, learning rate {c.get('learning_rate')} ({c.get('lr_scheduler')}, warm-up ratio "
             f"{c.get('warmup_ratio')}), batch {c.get('examples_per_device')} per process × {c.get('grad_accum')} accumulation "
             f"steps, {run.record.get('precision') or c.get('precision')} training, seed {c.get('seed')}, sequences up to "
             f"{run.setting('data.max_length')} tokens.",
             f"- Checkpoints every {c.get('eval_every')} steps, each scored on every benchmark below (in float32)."]
    for section in run.declared.card_sections if run.declared else ():
        values = c.get(section) or {}
        if values:
            lines.append(f"- `{section}`: " + ", ".join(f"{key} {value}" for key, value in values.items()))
    targeted = run.setting("data.identities") or run.record.get("targeted_groups")
    if targeted:
        lines.append(f"- Targeted mitigation: only corpus documents naming {', '.join(targeted)} were kept.")
    return "\n".join(lines)


def _adapter_targets(run: TrainingRun) -> list[str]:
    """The LoRA target modules as saved with the adapter (the config may leave them to the architecture)."""
    path = run.path / "final" / "adapter_config.json"
    targets = read_json_file(path, "adapter config").get("target_modules") if path.is_file() else None
    return sorted(targets) if isinstance(targets, list) else list(run.setting("lora.target_modules") or [])


def _data_section(run: TrainingRun, card_dir: Path) -> str:
    data = run.config.get("data") or {}
    train = str(data.get("train") or "")
    if train.startswith("hf:"):
        name = train.removeprefix("hf:")
        lines = [f"- Corpus: the Hugging Face dataset [{name}](https://huggingface.co/datasets/{name})"
                 f"{', config ' + data['hf_config'] if data.get('hf_config') else ''}, split "
                 f"`{data.get('hf_train_split', 'train')}`."]
    else:
        lines = [f"- Corpus: `{train}` (a local corpus, not on the Hub)."]
        datasheet = next((Path(train) / n for n in ("DATASHEET.md", "datasheet.md") if (Path(train) / n).is_file()),
                         None)
        if datasheet is not None:
            link = Path(os.path.relpath(datasheet.resolve(), card_dir.resolve())).as_posix()
            lines.append(f"- Datasheet: [{datasheet.as_posix()}]({link}) (copy it beside this card when publishing).")
        else:
            lines.append("- Datasheet: none found beside the corpus.")
    if data.get("max_train_docs"):
        lines.append(f"- At most {data['max_train_docs']} training documents.")
    corpus = run.record.get("corpus")
    if corpus:
        lines.append("- Corpus as trained (recorded by the run): "
                     + ", ".join(f"{key} {value}" for key, value in corpus.items()))
    pairs = run.record.get("held_out")
    if pairs:
        lines.append(f"- Training pairs: `{pairs.get('train_pairs')}` ({pairs.get('n_train_pairs')} pairs, "
                     f"checksum `{pairs.get('train_checksum')}`).")
    return "\n".join(lines)


def _evaluation_blocks(run: TrainingRun) -> list[str]:
    if not run.benchmarks:
        return ["No bias benchmark was configured (`eval.benchmarks` is empty)." if run.metrics else
                "Nothing was evaluated yet.", _perplexity_table(run)]
    blocks = ["Before = the base model (step 0), after = the last checkpoint, whose weights are in `final/`. "
              "Every figure is from `compare/<benchmark>/delta.json` of the run (paired tests on the same items; "
              "docs/compare.md in queerbias)."]
    for b in run.benchmarks:
        blocks.append(f"### {b.name}: {b.suite} on {b.data}")
        if b.delta is None:
            blocks.append(f"Evaluation incomplete: {b.missing}.")
        else:
            blocks += (companion(b.suite, "card").card_blocks(b.delta, b.final, _evaluation_kind(run, b))
                       or [_headline_lines(b)])
    blocks += closing_lines({b.name: b.delta for b in run.benchmarks if b.delta is not None})
    skipped = run.record.get("skipped_benchmarks")
    if skipped:
        blocks.append(f"Not evaluated, as their data was not on the training machine: {', '.join(skipped)}.")
    blocks += ["### Language quality", _perplexity_table(run)]
    return blocks


def closing_lines(documents: dict[str, dict]) -> list[str]:
    """The lines each suite among a run's benchmarks adds across all their delta documents (by
    benchmark; the card companion's `closing_lines`: pairs: the specificity ratio against the knowledge set),
    on the card and at the close of training."""
    return [line for name in dict.fromkeys(d["suite"] for d in documents.values())
            for line in companion(name, "card").closing_lines(documents)]


def _evaluation_kind(run: TrainingRun, benchmark: Benchmark) -> str:
    """Held out, overlapping or out of distribution, as the run recorded it."""
    held_out = run.record.get("held_out")
    language = benchmark.data_ref.get("language")
    ood = " in another language (out of distribution)" if language and language != "de" else ""
    if not held_out:
        return f"never trained on: the objective trains on the corpus, not on pairs{ood}"
    shared = (held_out.get("shared_sentences") or {}).get(benchmark.name)
    if shared is None:
        return f"not checked against the training pairs{ood}"
    if shared:
        return f"NOT held out: shares {shared} sentences with the training pairs (pairs.allow_overlap){ood}"
    return f"held out: no sentence in common with the training pairs{ood}"


def _headline_lines(benchmark: Benchmark) -> str:
    """The overall before/after of each measure (for a suite without card blocks of its own)."""
    overall, data = benchmark.final["overall"], benchmark.data_ref
    lines = [f"{data.get('n_items')} items of `{data.get('name')}` (checksum `{data.get('checksum')}`); overall:"]
    for m in benchmark.delta["measures"]:
        key, digits = m["name"], m.get("digits", 2)
        if f"delta_{key}" in overall:
            lines.append(f"- {m['label']}: {fmt(overall.get(f'{key}_before'), digits)} → "
                         f"{fmt(overall.get(f'{key}_after'), digits)} "
                         f"(Δ {with_ci(overall[f'delta_{key}'], overall.get(f'ci_{key}'), digits)}"
                         f"{overall.get(f'stars_{key}', '')}, p {format_p(overall.get(f'p_{key}'))})")
    lines.append(f"Per-entry figures: `compare/{benchmark.name}/delta.md` of the run.")
    return "\n".join(lines)


def _perplexity_table(run: TrainingRun) -> str:
    if not run.metrics or not run.last_step:
        return "Perplexity: no checkpoint was evaluated."
    first, last = run.metrics[0], run.metrics[-1]
    rows = [[label, fmt(first[key]), fmt(last[key]), _percent(first[key], last[key])] for key, label in PERPLEXITIES
            if first.get(key) and last.get(key) is not None]
    if not rows:
        return "Perplexity was not tracked in this run."
    return to_markdown(Table(header=["Perplexity", "base", f"step {run.last_step}", "change"], rows=rows,
                             notes="In-domain perplexity falls with any fine-tuning on the corpus; general "
                                   "perplexity on neutral text shows damage to the language model.")).rstrip("\n")


def _limitations(run: TrainingRun) -> str:
    by_suite: dict[str, list[dict]] = {}
    for b in run.benchmarks:
        if b.delta is not None:
            by_suite.setdefault(b.suite, []).append(b.final)
    lines = [line for suite, comparisons in by_suite.items()
             for line in companion(suite, "card").card_limitations(comparisons)]
    lines += [
        "- Held out or in-domain: each benchmark above says whether its pairs were held out from training. The "
        "figures are those of the last checkpoint; a checkpoint chosen on the evaluation pairs would look better "
        "on them than on new data.",
        "- What the benchmark cannot show: it compares the likelihood of two minimally different sentences. It "
        "says nothing about what the model generates, how it behaves in a downstream task, or about harms its "
        "templates do not cover. Scores near 50 and a small distance to indifference are not evidence of fairness.",
        "- The seed study's caveats (Morch & Braun 2026, section 4.2 and Limitations): the same fine-tuning gave "
        "different outcomes depending on the evaluation data set and the scoring method; counterfactual words "
        "such as “heterosexuell” or “cis” are rarer outside queer discourse, which can make a counterfactual "
        "sentence less likely for reasons other than bias; the bias score counts any difference, however small, "
        "while the soft score sits near 50 and can make a model look fairer than it is. Read both, and the "
        "distance to indifference.",
    ]
    if not (run.metrics and run.metrics[0].get("general_perplexity")):
        lines.append("- General-language perplexity (on neutral text) was not measured; in-domain perplexity alone "
                     "can hide damage to the model.")
    if run.base.hub_id and run.base.spec != run.base.hub_id:
        lines.append(f"- The base model is {run.base.note}.")
    return "\n".join(lines)


def _intended_use() -> str:
    return ("- Research on measuring and mitigating anti-LGBTQ+ bias in language models, and as a baseline to "
            "compare mitigation methods.\n"
            "- Not a certificate of fairness, and not for decisions about people. Evaluate the model on your own "
            "data and task before any use, with the people it affects.")


def _reproducing(run: TrainingRun) -> str:
    versions = next((b.delta["meta"].get("versions") for b in run.benchmarks if b.delta is not None), None) or {}
    version = f" (queerbias {versions['queerbias']})" if versions.get("queerbias") else ""
    return (f"Trained with `queerbias train --config config.yaml`{version}, the run's resolved config (beside "
            "`final/` in the run folder); rerunning the command resumes an interrupted run. "
            "`queerbias card RUN` (RUN: the run folder) writes this card again from the run's files.")


def _references(run: TrainingRun) -> str:
    references = [
        "- Virginia K. Felkner, Ho-Chun Herbert Chang, Eugene Jang and Jonathan May. 2023. WinoQueer: A "
        "Community-in-the-Loop Benchmark for Anti-LGBTQ+ Bias in Large Language Models. ACL 2023.",
        "- Melina Morch and Daniel Braun. 2026. Evaluating and Mitigating Anti-LGBTQ Biases in German and "
        "Multilingual Language Models.",
    ]
    return "\n".join([*references, *(run.declared.card_references(run.config) if run.declared else ())])
