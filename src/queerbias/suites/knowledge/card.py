"""What a training run's closing line says of the knowledge set (`KnowledgeCard`): the overall change of
accuracy and margin (the default), the pair-level |d| and the groups whose accuracy fell below chance."""

from __future__ import annotations

from queerbias.suites.companions import CardHooks
from queerbias.suites.pairs.indifference import closing_clauses


class KnowledgeCard(CardHooks):
    def closing_clauses(self, comparison) -> str:
        """The pair-level |d| change, then the groups whose accuracy fell from 50 or above to below it
        (chance: the group's definitions no longer preferred), with their accuracy before -> after."""
        fell = [f"{group} ({entry['accuracy_before']:.1f} -> {entry['accuracy_after']:.1f})"
                for group, entry in (comparison.get("groups") or {}).items()
                if entry.get("accuracy_before") is not None and entry.get("accuracy_after") is not None
                and entry["accuracy_before"] >= 50.0 > entry["accuracy_after"]]
        return closing_clauses(comparison) + f"; crossed below 50 (chance): {', '.join(fell) or 'none'}"
