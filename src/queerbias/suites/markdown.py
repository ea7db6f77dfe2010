"""summary.md of any run: the suite's title and tables, then the provenance every run has.

Suites supply the content (`Suite.title`, `Suite.render`: tables and paragraphs) and
suite-specific provenance lines; the layout and the common lines (model, data,
settings, time) are written here once.
"""

from __future__ import annotations

from queerbias.options import to_dict
from queerbias.report.tables import Table, to_markdown


def blocks_markdown(blocks: list) -> list[str]:
    """Tables rendered as Markdown, paragraphs as they are, each followed by a blank line."""
    lines = []
    for block in blocks:
        lines += [to_markdown(block) if isinstance(block, Table) else block, ""]
    return lines


def summary_markdown(suite, summary: dict) -> str:
    meta = summary["meta"]
    lines = [f"# {suite.title(summary)}", "", *blocks_markdown(suite.render(summary)), *provenance(suite, meta)]
    return "\n".join(lines).rstrip("\n") + "\n"


def provenance(suite, meta: dict) -> list[str]:
    """Model, data, settings, suite-specific lines, checkpoint and time of a run."""
    model, data = meta["model"], meta["data"]
    lines = [f"- model fingerprint: `{model.get('fingerprint')}` ({model.get('kind')}, {model.get('dtype')})",
             f"- data: {data.get('name')}, checksum `{data.get('checksum')}` ({data.get('n_items')} items)"]
    if "settings" in meta:
        changed = _changed_settings(suite, meta["settings"])
        lines.append(f"- settings: {changed or 'defaults'} (settings id `{meta.get('settings_id')}`)")
    lines += [f"- {line}" for line in suite.provenance(meta)]
    if meta.get("step") is not None:
        perplexity = meta.get("perplexity")
        lines.append(f"- training step {meta['step']}" + ("" if perplexity is None else f", perplexity {perplexity:.2f}"))
    timings = meta.get("timings", {})
    if "evaluate_s" in timings:
        lines.append(f"- time: {timings['evaluate_s']:.1f} s evaluating ({timings['items_per_s']:.1f} items/s)")
    return lines


def _changed_settings(suite, settings: dict) -> str:
    defaults = to_dict(suite.Settings())
    return ", ".join(f"{key} {_shown(value)}" for key, value in settings.items() if defaults.get(key) != value)


def _shown(value) -> str:
    return ",".join(map(str, value)) if isinstance(value, list) else str(value)
