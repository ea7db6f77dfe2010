"""The training corpus as a run trains on it: targeted documents, then the objective's changes.

Targeted mitigation (`data.identities`, the seed study's suggestion in its limitations)
works with every objective: it keeps only documents that mention one of the named groups,
or a finer group under it (transgender: also trans women and trans men), found with the
phrases of the counterfactual lexicon (`data.lexicon`). The objective then shapes what
is left (`Objective.prepare_corpus`: cda adds counterfactual copies). What was done is
recorded with the run (config.yaml's `record`, every metrics line and summary).
"""

from __future__ import annotations

from queerbias.errors import QueerbiasError
from queerbias.text.counterfactual import Lexicon
from queerbias.text.taxonomy import GROUPS


def prepare_corpus(config, objective, texts: list[str]) -> tuple[list[str], dict | None]:
    """The training texts, and what was done to them (None: nothing)."""
    record: dict = {"documents": len(texts)}
    if config.data.identities:
        texts = select_identities(texts, Lexicon.load(config.data.lexicon), config.data.identities)
        record["targeted_documents"] = len(texts)
        if not texts:
            raise QueerbiasError(f"config key 'data.identities': no document of {config.data.train} "
                                 f"mentions {', '.join(config.data.identities)}")
    texts, changes = objective.prepare_corpus(config, texts)
    if len(record) == 1 and not changes:
        return texts, None
    return texts, {**record, **changes, "training_documents": len(texts)}


def targeted(groups: list[str]) -> set[str]:
    """The named groups and every finer group under them (the taxonomy's umbrellas)."""
    return {name for name, group in GROUPS.items() if name in groups or group.umbrella in groups}


def select_identities(texts: list[str], lexicon: Lexicon, groups: list[str]) -> list[str]:
    wanted = targeted(groups)
    return [text for text in texts if lexicon.mentions(text) & wanted]
