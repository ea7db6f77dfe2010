"""GIFI-DE prompt items: the German template sets in data/gifi/prompts.yaml, filled in.

Each task's items differ only in what the dimension compares: GDR, counterfactual
and PE items come in one copy per pronoun group with the same name and numbers;
SA/OF items carry no pronoun at all and are sampled several times.
"""

from __future__ import annotations

import ast
import hashlib
import operator
import random
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from queerbias.errors import DataError
from queerbias.fileio import decode_utf8, regular_file
from queerbias.suites.gifi.pronouns import PronounGroup
from queerbias.yamlio import load_yaml

TASKS = ("gdr", "counterfactual", "saof", "pe")
STATES = ("occupation", "stereotype")
_SLOT = re.compile(r"\{(\w+)\}")
_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul}


@dataclass(frozen=True)
class Item:
    """One prompt to generate from; `meta` holds task extras (state, attribute, answer)."""

    task: str
    item_id: str
    template_id: str
    group: str | None
    name: str
    prompt: str
    sample: int = 0
    meta: dict = field(default_factory=dict)


@dataclass(frozen=True)
class PromptSet:
    """The parsed prompts.yaml and its checksum (recorded with every result)."""

    document: dict
    path: str
    checksum: str

    @property
    def refusals(self) -> tuple[str, ...]:
        """Lower-case prefixes of continuations that refuse (left out of SN, NTS, CF)."""
        return tuple(str(p).lower() for p in self.document.get("refusals") or ())


def default_prompts_path() -> Path:
    return Path(str(resources.files("queerbias") / "data" / "gifi" / "prompts.yaml"))


def load_prompt_set(path: Path | str | None = None) -> PromptSet:
    path = Path(path) if path else default_prompts_path()
    raw = regular_file(path, "prompts file").read_bytes()
    document = load_yaml(path, decode_utf8(path, raw))
    if not isinstance(document, dict):
        raise DataError(path, "a prompts file must be a YAML mapping")
    for key in ("names", *TASKS):
        if not document.get(key):
            raise DataError(path, "missing or empty", field=key)
    return PromptSet(document, str(path), hashlib.sha256(raw).hexdigest()[:16])


def fill(template: str, values: dict[str, str], where: str = "template") -> str:
    """Replace {slot} by values[slot]; {Slot} gives the value capitalised."""
    def replace(match: re.Match) -> str:
        key = match.group(1)
        if key in values:
            return values[key]
        if key[:1].isupper() and key.lower() in values:
            value = values[key.lower()]
            return value[:1].upper() + value[1:]
        raise DataError(where, f"unknown slot {{{key}}} in {template!r}")
    return _SLOT.sub(replace, template)


def build_items(prompts: PromptSet, groups: list[PronounGroup], task: str, *,
                limit: int | None = None, saof_names: int = 4, saof_samples: int = 2,
                pe_shots: int = 0) -> list[Item]:
    """The items of one task for these groups; `limit` keeps the first templates (attributes).

    pe_shots: worked exemplars before each PE problem (0: zero-shot with the instruction).
    """
    doc, names = prompts.document, [str(n) for n in prompts.document["names"]]
    if task in ("gdr", "counterfactual"):
        templates = list(doc[task])[:limit]
        return [_item(task, f"{task}-{i}", t, group, names[i % len(names)], prompts.path)
                for i, t in enumerate(templates) for group in groups]
    if task == "pe":
        return _pe_items(doc["pe"], groups, names, limit, pe_shots, prompts.path)
    if task == "saof":
        return _saof_items(doc["saof"], names[:saof_names], limit, saof_samples, prompts.path)
    raise ValueError(f"unknown task {task!r}; expected one of {TASKS}")


def _item(task, template_id, template, group, name, where) -> Item:
    values = {**group.slots(name), "name": name}
    return Item(task=task, item_id=f"{template_id}:{group.key}", template_id=template_id,
                group=group.key, name=name, prompt=fill(template, values, where))


def _saof_items(spec: dict, names, limit, samples, where) -> list[Item]:
    items = []
    for state in STATES:
        for a, attribute in enumerate(list(spec[state])[:limit]):
            for f, frame in enumerate(spec["frames"]):
                for name in names:
                    text = fill(frame, {"name": name, "attribute": attribute}, where)
                    for sample in range(samples):
                        items.append(Item(task="saof", item_id=f"{state}-{a}:f{f}:{name}:{sample}",
                                          template_id=f"{state}-{a}", group=None, name=name,
                                          prompt=text, sample=sample,
                                          meta={"state": state, "attribute": attribute}))
    return items


def pe_prefix(spec: dict, shots: int, where="pe") -> str:
    """The worked exemplars written before each problem (empty for zero-shot)."""
    exemplars = list(spec.get("exemplars") or [])
    if shots < 0 or shots > len(exemplars):
        raise DataError(where, f"pe_shots must be between 0 and {len(exemplars)} (the exemplars given), got {shots}",
                        field="pe.exemplars")
    if shots and not spec.get("shot"):
        raise DataError(where, "few-shot PE needs a 'shot' format", field="pe.shot")
    return "".join(fill(spec["shot"], {"problem": e["problem"]}, where) + " " + e["solution"] + "\n\n"
                   for e in exemplars[:shots])


def _pe_items(spec: dict, groups, names, limit, shots, where) -> list[Item]:
    rng = random.Random(spec.get("seed", 0))
    prefix = pe_prefix(spec, shots, where)
    extra = {"stop": spec["stop"]} if spec.get("stop") else {}
    items, index = [], 0
    for t, template in enumerate(spec["templates"]):
        for k in range(int(spec.get("items_per_template", 1))):
            numbers = {key: rng.randint(low, high) for key, (low, high) in template["numbers"].items()}
            answer = evaluate(template["answer"], numbers, where)
            problem_values = {key: str(value) for key, value in numbers.items()}
            name = names[index % len(names)]
            index += 1
            for group in groups:
                problem = fill(template["problem"], {**group.slots(name), "name": name, **problem_values}, where)
                if shots:
                    text = prefix + fill(spec["shot"], {"problem": problem}, where)
                else:
                    text = fill(spec["format"], {"problem": problem, "instruction": spec.get("instruction", "")}, where)
                items.append(Item(task="pe", item_id=f"pe-{t}-{k}:{group.key}", template_id=f"pe-{t}-{k}",
                                  group=group.key, name=name, prompt=text, meta={"answer": answer, **extra}))
    return items[: None if limit is None else limit * len(groups)]


def evaluate(expression: str, numbers: dict[str, int], where="pe") -> int:
    """An answer expression over the drawn numbers: integers, names, + - * and brackets."""
    def walk(node):
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            return _OPERATORS[type(node.op)](walk(node.left), walk(node.right))
        if isinstance(node, ast.Name) and node.id in numbers:
            return numbers[node.id]
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        raise DataError(where, f"answer {expression!r}: only numbers, names and + - * are allowed")
    return walk(ast.parse(expression, mode="eval"))
