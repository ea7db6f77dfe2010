"""How reports write a figure, a change and its test: shared by the comparator's tables, the suites'
own reports, training's closing lines and the model card, so each is written one way."""

from __future__ import annotations

from queerbias.report.paired_stats import STAR_LEVELS, stars
from queerbias.report.tables import fmt


def best_sentence(best: dict) -> str:
    """The best-checkpoint choice stated with its criterion, for the Markdown report."""
    rule = f"{best['criterion_description']}, perplexity at most {best['ppl_margin_pct']:g}% above the base"
    excluded = "".join(f"; excluded {e['label']}: {e['reason']}" for e in best["excluded"])
    if best["label"] is None:
        return f"No checkpoint qualifies as best ({rule}){excluded}."
    fixed = ("criterion", "criterion_description", "ppl_margin_pct", "label", "step", "eligible", "excluded")
    figures = "".join(f", {key} {value:.2f}" for key, value in best.items() if key not in fixed and value is not None)
    chosen = f"{best['label']} (step {best['step']}{figures})"
    return f"Best checkpoint: {chosen}; criterion: {rule}{excluded}."


def with_ci(delta: float | None, ci: list | None, digits: int = 2) -> str:
    if delta is None:
        return "–"
    ci = ci or [None, None]
    return f"{fmt(delta, digits, signed=True)} [{fmt(ci[0], digits, signed=True)}, {fmt(ci[1], digits, signed=True)}]"


def change_text(entry: dict, name: str, digits: int = 2) -> str:
    """`-18.76, 95% CI [-22.27, -11.11], p <.001`: an entry's change of measure `name`."""
    low, high = entry.get(f"ci_{name}") or (None, None)
    return (f"{fmt(entry.get(f'delta_{name}'), digits, signed=True)}, 95% CI [{fmt(low, digits, signed=True)}, "
            f"{fmt(high, digits, signed=True)}], p {format_p(entry.get(f'p_{name}'))}")


def format_p(p: float | None) -> str:
    if p is None:
        return "–"
    return "<.001" if p < 0.001 else f"{p:.3f}"


def star_legend() -> str:
    return ", ".join(f"{mark} p < {str(threshold).lstrip('0')}" for threshold, mark in reversed(STAR_LEVELS))


def stars_of(p: float | None) -> str:
    return "" if p is None else stars(p)
