"""Counterfactual data augmentation (Webster et al. 2020; bias-bench's CDA) of a training corpus.

Every document that mentions an identity phrase gets a copy with the phrases swapped for
their counterfactuals (`text.counterfactual`, the German lexicon with its declension).
Two-sided keeps the original and adds the copy; one-sided keeps only the copy. The
counts (documents and terms per group) are recorded with the run.
"""

from __future__ import annotations

from collections import Counter

from queerbias.text.counterfactual import Lexicon


def augment_corpus(config, settings, texts: list[str]) -> tuple[list[str], dict]:
    """The corpus with counterfactual copies (`settings`: the config section `cda`; the lexicon is
    `data.lexicon`), and its record."""
    lexicon = Lexicon.load(config.data.lexicon)
    texts, counts = augment(texts, lexicon, settings.two_sided)
    return texts, {"cda": {"lexicon": config.data.lexicon or "packaged", "lexicon_version": lexicon.version,
                           "lexicon_checksum": lexicon.checksum, "two_sided": settings.two_sided, **counts}}


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
