"""Render datasheet.md for a built corpus, following Gebru et al. (2021),
"Datasheets for Datasets" (CACM 64(12)): Motivation, Composition, Collection process,
Preprocessing, Uses, Distribution, Maintenance.

Numbers come from the build's statistics, so the datasheet can never disagree with
the corpus it describes; the prose that only people know (purpose, licences,
maintainer) comes from the manifest.
"""

from __future__ import annotations

from typing import Any

DEFAULT_PURPOSE = (
    "Built with queerbias to study and mitigate anti-LGBTQ+ bias in German language "
    "models: texts by and about queer people are used to fine-tune or evaluate models, "
    "following the seed study's design (Mastodon posts plus queer-focused taz articles)."
)
DEFAULT_USE = (
    "Research on bias in German language models: continued pre-training or fine-tuning "
    "for bias mitigation, and held-out perplexity on the validation split. Not for "
    "profiling or identifying individuals, not for inferring anyone's sexual orientation "
    "or gender identity, and not for training classifiers that target queer people."
)
_REASON_TEXT = {
    "opted_out": "on the opt-out list (doc_id, or URL / URL prefix), or it or its author is on a crawl's list of "
                 "removed posts and authors (deleted at its origin, opted out, or forgotten on request)",
    "too_short": "fewer words than the minimum for its kind",
    "exact_duplicate": "same text as a kept document after Unicode NFKC, case folding and "
                       "whitespace normalisation",
    "not_german": "not German according to queerbias.text.language.is_german",
    "near_duplicate": "MinHash/LSH estimated Jaccard similarity of word shingles at or "
                      "above the threshold with a kept document",
}


def _table(header: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join("" if cell is None else str(cell) for cell in row) + " |"
              for row in rows]
    return "\n".join(lines)


def render_datasheet(stats: dict[str, Any]) -> str:
    """The datasheet as Markdown, from a build's statistics alone (so a takedown can re-render it)."""
    settings, totals, about = stats["settings"], stats["totals"], stats["about"]
    sources = stats["sources"]
    withheld = "withheld (takedown)" if stats.get("forgotten_after_build") or stats.get("removed_while_building") \
        else None
    source_rows = [[name, s["documents"], s["words"], s["mb"], s["first_published"] or withheld,
                    s["last_published"] or withheld] for name, s in sources.items()]
    agreed = sum((i.get("crawl_state") or {}).get("instances_admin_agreed", 0) for i in stats["inputs"])
    split_rows = [[split, s["documents"], s["words"], s["mb"]]
                  for split, s in stats["splits"].items()]
    input_rows = [[f"`{i['path']}`", i["format"], i["documents_read"], i["bad_records"],
                   (i.get("crawl_state") or {}).get("checked_at") or "", i["description"]]
                  for i in stats["inputs"]]
    licence_rows = [[i["name"], f"`{i['path']}`", i["licence"]] for i in stats["inputs"]]
    drop_rows = [[reason, count, _REASON_TEXT[reason]]
                 for reason, count in stats["dropped"].items()]
    drop_by_source = [[name, s["read"], *s["dropped"].values()] for name, s in sources.items()]
    min_words = ", ".join(f"{kind}: {n}" for kind, n in settings["min_words"].items())
    near = settings["near_duplicate_threshold"]
    opt_out = settings["opt_out"]

    sections = [
        f"# Datasheet: {stats['name']}",
        f"Built {stats['built_at']} by `queerbias corpus build`. Counts below are from "
        "`stats.json` of the same build.",
        "## Motivation",
        about["description"] or DEFAULT_PURPOSE,
        "## Composition",
        f"{totals['documents']} documents, {totals['words']} words, {totals['mb']} MB of "
        "UTF-8 text. Each line of `train.jsonl` / `validation.jsonl` is one post or "
        "article: `text`, `source`, `doc_id`, and for posts `account`. There are no labels.",
        _table(["source", "documents", "words", "MB", "first published", "last published"],
               source_rows),
        _table(["split", "documents", "words", "MB"], split_rows),
        "The texts were selected because they mention LGBTQ+ keywords, so they are about "
        "queer lives and politics and may quote slurs or hostile statements. Social-media "
        "posts are written by individuals and reveal things about them that the GDPR protects "
        "(Art. 9). Posts name neither their author nor their address: `doc_id` and `account` are "
        "keyed pseudonyms that only the holder of the crawl key can link to a person, and "
        "mentions, e-mail addresses, handles and phone numbers in the text (also in the spellings "
        "people use to dodge scrapers), and in posts the display names their status carried, "
        "are replaced by placeholders. Posts deleted at their origin, authors who opted out and "
        "people who asked to be forgotten are kept out by the crawl's sealed removal list.",
        "## Collection process",
        _table(["input", "format", "documents read", "bad records skipped", "crawl last checked",
                "description"], input_rows),
        "Mastodon posts come from `queerbias crawl mastodon` (public posts matching the "
        "keyword list); news articles from `queerbias crawl news` (RSS/Atom feeds, article "
        "pages extracted with trafilatura, provenance with feed URL and fetch time); taz "
        "articles from the taz2024full archive via `queerbias corpus taz` (keyword "
        "metadata first, then title and text)."
        + (f" {agreed} Mastodon instance(s) were crawled although their robots.txt or rules refuse crawlers "
           "like ours (AI-training crawlers included), because their admins agreed (`--allow-instance`); the "
           "crawl's `stats.json` names them and the reason under `admin_agreed`." if agreed else ""),
        "## Preprocessing",
        f"Filters in order (the first that fails names the reason): opt-out list, minimum "
        f"words ({min_words}), exact duplicates, German only "
        f"({'on' if settings['require_german'] else 'off'}), near duplicates "
        + (f"(threshold {near}, {settings['shingle_size']}-word shingles, "
           f"{settings['num_perm']} permutations)." if near else "(off).")
        + " Earlier sources win duplicates.",
        _table(["dropped because", "documents", "meaning"], drop_rows),
        _table(["source", "read", *stats["dropped"].keys()], drop_by_source),
        f"Split: a document is in validation when a hash of seed {settings['seed']} and "
        f"its doc_id falls below {settings['validation_fraction']}; reruns keep every "
        "document on the same side.",
        "## Uses",
        about["intended_use"] or DEFAULT_USE,
        "## Distribution",
        "The corpus is built locally under `corpora/<name>/`, which git ignores; the project "
        "distributes the recipe (manifest), not the texts. Licences of the inputs:",
        _table(["input", "path", "licence"], licence_rows),
        "## Maintenance",
        (f"Maintainer: {about['maintainer']}. " if about["maintainer"] else "")
        + "Opt-out: anyone may ask for their texts to be removed. A person's posts are removed "
        "from the crawl and from this corpus with `queerbias corpus forget --account "
        "HANDLE@INSTANCE`, which also keeps them out of later crawls and builds; articles or "
        "site sections are removed by adding their doc_id, URL or URL prefix to the opt-out "
        "list and rebuilding; " + (f"this build used `{opt_out}`. " if opt_out
                                   else "this build used no opt-out list. ")
        + f"{stats['dropped']['opted_out']} documents were dropped as opted out at build time"
        + (f", and {stats['forgotten_after_build']} removed later by `corpus forget`."
           if stats.get("forgotten_after_build") else ".")
        + " Rebuilding with the same manifest and inputs reproduces the same splits.",
    ]
    return "\n\n".join(sections) + "\n"
