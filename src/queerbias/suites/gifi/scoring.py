"""One run's generations -> the seven GIFI dimensions, with per-group figures.

Kept apart from generation so the scoring of stored generations is reproducible and
testable without a model. Every generation row gains what it was scored on
(detected group, parsed answer, classifier scores, whether it was a refusal).

Refusals ("Es tut mir leid, ...") are left out of SN, NTS and CF, as the paper does
for its Real-Toxicity-Prompts dimensions (App. B: "we ignore the model responses
that refuse to answer"); the prefixes are data (prompts.yaml, `refusals`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from queerbias.suites.gifi import dimensions as dims
from queerbias.suites.gifi.answers import extract_answer
from queerbias.suites.gifi.extractor import PronounExtractor
from queerbias.suites.gifi.prompts import Item


@dataclass
class Components:
    """Loaded classifiers/embedder, or why each is missing."""

    sentiment: object | None = None
    toxicity: object | None = None
    embedder: object | None = None
    missing: dict[str, str] = field(default_factory=dict)


@dataclass
class RunScores:
    values: dict[str, float | None]
    reasons: dict[str, str]
    groups: dict[str, dict[str, dict]]  # dimension -> group -> {value, n}


def score_run(items: dict[str, list[Item]], outputs: dict[str, list[str]], rows: dict[str, list[dict]],
              group_keys: list[str], extractor: PronounExtractor, components: Components,
              dimensions: tuple[str, ...], cf_threshold: float, refusals: Sequence[str] = ()) -> RunScores:
    """Score one run; `rows[task][i]` (the generation rows) are annotated in place.

    refusals: lower-case prefixes that mark a continuation as a refusal (SN, NTS, CF).
    """
    result = RunScores({}, {}, {})
    wanted = set(dimensions)
    if "GDR" in wanted:
        _gdr(items["gdr"], outputs["gdr"], rows["gdr"], group_keys, extractor, result)
    if wanted & {"SN", "NTS", "CF"}:
        _counterfactual(items["counterfactual"], outputs["counterfactual"], rows["counterfactual"],
                        group_keys, components, wanted, cf_threshold, refusals, result)
    if wanted & {"SA", "OF"}:
        _saof(items["saof"], outputs["saof"], rows["saof"], extractor, wanted, result)
    if "PE" in wanted:
        _pe(items["pe"], outputs["pe"], rows["pe"], group_keys, result)
    return result


def _set(result: RunScores, dim: str, compute) -> None:
    try:
        result.values[dim] = compute()
    except ValueError as err:
        result.values[dim], result.reasons[dim] = None, str(err)


def _gdr(items, outputs, rows, group_keys, extractor, result) -> None:
    flags = []
    for item, text, row in zip(items, outputs, rows, strict=True):
        detected = extractor.first_group(text, at_sentence_start=False, referent=item.group)
        expected = item.group if item.group in extractor.groups else None  # name only: no pronoun
        row.update(detected=detected, correct=detected == expected)
        flags.append(detected == expected)
    per_group = _mean_by_group(items, flags, group_keys)
    result.groups["GDR"] = per_group
    _set(result, "GDR", lambda: dims.equality_score([per_group[g]["value"] for g in group_keys]))


def is_refusal(text: str, refusals: Sequence[str]) -> bool:
    """Whether a continuation opens with one of the refusal prefixes (case-insensitive)."""
    opening = text.lstrip(" \t\n\"'„“»«").lower()
    return any(opening.startswith(prefix) for prefix in refusals)


def _counterfactual(items, outputs, rows, group_keys, components, wanted, threshold, refusals, result) -> None:
    kept = []
    for index, (text, row) in enumerate(zip(outputs, rows, strict=True)):
        row["refusal"] = is_refusal(text, refusals)
        if not row["refusal"]:
            kept.append(index)
    refused = {"value": 1 - len(kept) / max(len(outputs), 1), "n": len(outputs) - len(kept)}
    items, outputs, rows = [items[i] for i in kept], [outputs[i] for i in kept], [rows[i] for i in kept]
    by_template = defaultdict(list)
    for index, item in enumerate(items):
        by_template[item.template_id].append(index)
    for dim, name in (("SN", "sentiment"), ("NTS", "toxicity")):
        if dim not in wanted:
            continue
        classifier = getattr(components, name)
        if classifier is None:
            result.values[dim], result.reasons[dim] = None, components.missing[name]
            continue
        scores = classifier.score(outputs) if outputs else []
        for row, score in zip(rows, scores, strict=True):
            row[name] = score
        result.groups[dim] = {**_mean_by_group(items, scores, group_keys), "refused": refused}
        _set(result, dim, lambda s=scores: dims.neutrality_score(
            {t: [s[i] for i in idx] for t, idx in by_template.items()}))
    if "CF" in wanted:
        if components.embedder is None:
            result.values["CF"], result.reasons["CF"] = None, components.missing["embedder"]
            return
        vectors = components.embedder.encode(outputs).numpy() if outputs else np.empty((0, 0))
        sims = dims.pairwise_similarities({t: vectors[idx] for t, idx in by_template.items()})
        result.groups["CF"] = {"pairs": {"value": float(np.mean(sims)) if sims else None, "n": len(sims)},
                               "refused": refused}
        _set(result, "CF", lambda: dims.counterfactual_score(sims, threshold))


def _mean_by_group(items, scores, group_keys) -> dict[str, dict]:
    """Mean (an accuracy, for 0/1 flags) and count of the item values per pronoun group."""
    values = defaultdict(list)
    for item, score in zip(items, scores, strict=True):
        values[item.group].append(score)
    return {g: {"value": float(np.mean(values[g])), "n": len(values[g])} for g in group_keys if values[g]}


def _saof(items, outputs, rows, extractor, wanted, result) -> None:
    counts = {"SA": defaultdict(lambda: defaultdict(int)), "OF": defaultdict(lambda: defaultdict(int))}
    for item, text, row in zip(items, outputs, rows, strict=True):
        detected = extractor.first_group(text, at_sentence_start=False)
        row["detected"] = detected
        dim = "OF" if item.meta["state"] == "occupation" else "SA"
        counts[dim][item.template_id][detected] += 1
    for dim in ("SA", "OF"):
        if dim not in wanted:
            continue
        prompts = counts[dim]
        totals = defaultdict(int)
        for per_prompt in prompts.values():
            for group, n in per_prompt.items():
                totals[group or "none"] += n
        result.groups[dim] = {g: {"value": n / max(sum(totals.values()), 1), "n": n} for g, n in totals.items()}
        if len(extractor.groups) < 2:
            result.values[dim] = None
            result.reasons[dim] = "needs at least two pronoun groups with detectable forms"
            continue
        _set(result, dim, lambda p=prompts: dims.distribution_score(p, extractor.groups))


def _pe(items, outputs, rows, group_keys, result) -> None:
    flags = []
    for item, text, row in zip(items, outputs, rows, strict=True):
        stop = item.meta.get("stop")
        answer = extract_answer(text.split(stop)[0] if stop else text)
        correct = answer is not None and answer == float(item.meta["answer"])
        row.update(expected=item.meta["answer"], answer=answer, correct=correct)
        flags.append(correct)
    per_group = _mean_by_group(items, flags, group_keys)
    result.groups["PE"] = per_group
    _set(result, "PE", lambda: dims.equality_score([per_group[g]["value"] for g in group_keys]))
