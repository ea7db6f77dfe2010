"""A tiny GRUFF template set written here (2 occupations, 2 cases, 3 contexts per polarity)."""

from __future__ import annotations

from pathlib import Path

import pytest

TASKS = [
    ("occupation", "participant", "sentence", "pronoun_type", "word", "article_and_occupation"),
    ("Tierarzt", "Besitzer", "$ARTICLE_AND_OCCUPATION sagte, dass $NOM_PRONOUN den Hund impfen werde.",
     "$NOM_PRONOUN", "Tierarzt", "$ARTICLE_AND_OCCUPATION"),
    ("Tierarzt", "Besitzer", "$ARTICLE_AND_OCCUPATION räumte $POSS_PRONOUN Praxis auf.",
     "$POSS_PRONOUN", "Tierarzt", "$ARTICLE_AND_OCCUPATION"),
    ("Pathologe", "Verstorbener", "$ARTICLE_AND_OCCUPATION erklärte, dass $NOM_PRONOUN den Bericht schreibe.",
     "$NOM_PRONOUN", "Pathologe", "$ARTICLE_AND_OCCUPATION"),
    ("Pathologe", "Verstorbener", "$ARTICLE_AND_OCCUPATION legte $POSS_PRONOUN Unterlagen bereit.",
     "$POSS_PRONOUN", "Pathologe", "$ARTICLE_AND_OCCUPATION"),
]
CONTEXTS = [("pronoun_type", "polarity", "explicit_template", "implicit_template")]
for placeholder, situations in (
    ("$NOM_PRONOUN", [("", "war", "müde"), ("", "war", "hungrig"), ("", "war", "krank")]),
    ("$POSS_PRONOUN", [("Woche ", "war", "anstrengend"), ("Nacht ", "war", "kurz"), ("Schuhe ", "waren", "eng")]),
):
    for polarity, negation in (("negative", ""), ("positive", "nicht ")):
        for subject, verb, adjective in situations:
            CONTEXTS.append((placeholder, polarity,
                             f"$ARTICLE $OCCUPATION/PARTICIPANT sagte, dass {placeholder} {subject}{negation}{adjective} {verb}.",
                             f"{placeholder} {subject}{verb} {negation}{adjective}."))


def write_templates(folder: Path, tasks=TASKS, contexts=CONTEXTS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, rows in (("task.tsv", tasks), ("context.tsv", contexts)):
        (folder / name).write_text("".join("\t".join(row) + "\n" for row in rows), encoding="utf-8")
    return folder


@pytest.fixture
def tiny_templates_dir(tmp_path) -> Path:
    return write_templates(tmp_path / "gruff")


@pytest.fixture
def tiny_templates(tiny_templates_dir):
    from queerbias.suites.gruff.templates import load_templates

    return load_templates(tiny_templates_dir)


@pytest.fixture(scope="session")
def shared_templates(shared_data):
    from queerbias.suites.gruff.templates import load_templates

    folder = shared_data / "gruff"
    if not (folder / "task.tsv").is_file():
        pytest.skip(f"GRUFF templates not found in {folder}")
    return load_templates(folder)
