"""The training corpus as an objective shapes it: targeted documents and counterfactual copies.

Targeted mitigation (`data.identities`, the seed study's suggestion in its limitations):
keep only documents that mention one of the named groups, or a finer group under it
(transgender: also trans women and trans men), found with the CDA lexicon's phrases.

`cda` (counterfactual data augmentation, Webster et al. 2020; bias-bench's CDA; with
`cda.augment` also under `equalise`): every
document that mentions an identity phrase gets a copy with the phrases swapped for their
counterfactuals (`text.counterfactual`). Two-sided keeps the original and adds the copy;
one-sided keeps only the copy. The counts (documents and terms per group) are recorded
with the run: config.yaml's `record` and every metrics line and summary.
"""

from __future__ import annotations

from collections import Counter

from queerbias.errors import QueerbiasError
from queerbias.pairs.taxonomy import GROUPS
from queerbias.text.counterfactual import Lexicon


def prepare_corpus(config, texts: list[str]) -> tuple[list[str], dict | None]:
    """The training texts for this objective, and what was done to them (None: nothing)."""
    augmenting = config.objective == "cda" or config.cda.augment
    if not augmenting and not config.data.identities:
        return texts, None
    lexicon = Lexicon.load(config.cda.lexicon)
    record: dict = {"documents": len(texts)}
    if config.data.identities:
        texts = select_identities(texts, lexicon, config.data.identities)
        record["targeted_documents"] = len(texts)
        if not texts:
            raise QueerbiasError(f"config key 'data.identities': no document of {config.data.train} "
                                 f"mentions {', '.join(config.data.identities)}")
    if augmenting:
        texts, counts = augment(texts, lexicon, config.cda.two_sided)
        record["cda"] = {"lexicon": config.cda.lexicon or "packaged", "lexicon_version": lexicon.version,
                         "lexicon_checksum": lexicon.checksum, "two_sided": config.cda.two_sided,
                         **counts}
    record["training_documents"] = len(texts)
    return texts, record


def targeted(groups: list[str]) -> set[str]:
    """The named groups and every finer group under them (the taxonomy's umbrellas)."""
    return {name for name, group in GROUPS.items() if name in groups or group.umbrella in groups}


def select_identities(texts: list[str], lexicon: Lexicon, groups: list[str]) -> list[str]:
    wanted = targeted(groups)
    return [text for text in texts if lexicon.mentions(text) & wanted]


def augment(texts: list[str], lexicon: Lexicon, two_sided: bool) -> tuple[list[str], dict]:
    """Counterfactual copies of every document with an identity phrase, and the counts."""
    out: list[str] = []
    documents, terms, skipped = Counter(), Counter(), Counter()
    swapped_documents = 0
    for text in texts:
        swap = lexicon.swap(text)
        if swap.text == text:
            out.append(text)
            continue
        swapped_documents += 1
        documents.update(set(swap.swapped))
        terms.update(swap.swapped)
        skipped.update(swap.skipped)
        out += [text, swap.text] if two_sided else [swap.text]
    return out, {"swapped_documents": swapped_documents, "documents_per_group": dict(sorted(documents.items())),
                 "terms_per_group": dict(sorted(terms.items())),
                 "skipped_terms_per_group": dict(sorted(skipped.items()))}
