"""Tiny data sets written here, for offline tests of the suites: GRUFF templates and a Lou folder.

Both are hand-written (no shared or upstream data copied): a GRUFF template set of 2
occupations, 2 cases and 3 contexts per polarity, and a Lou-format folder of 6 instances
with their six reformulations in two tasks.
"""

from __future__ import annotations

import json
from pathlib import Path

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


STRATEGIES = ("Doppelnennung", "GenderStern", "GenderDoppelpunkt", "GenderGap", "Neutral", "De-e")

# (original, Doppelnennung, Stern, Doppelpunkt, Gap, Neutral, De-e), written for these tests
ROWS = [
    ("Die Lehrer haben gestreikt.", "Die Lehrerinnen und Lehrer haben gestreikt.", "Die Lehrer*innen haben gestreikt.",
     "Die Lehrer:innen haben gestreikt.", "Die Lehrer_innen haben gestreikt.", "Die Lehrkräfte haben gestreikt.",
     "De Lehrerne haben gestreikt."),
    ("Jeder Arzt hilft.", "Jede Ärztin und jeder Arzt hilft.", "Jede*r Ärzt*in hilft.", "Jede:r Ärzt:in hilft.",
     "Jede_r Ärzt_in hilft.", "Jede ärztliche Fachperson hilft.", "Jedey Arzte hilft."),
    ("Das Wetter ist schön.",) * 7,  # no person noun: every strategy equals the original
    ("Die Bürger wählen.", "Die Bürgerinnen und Bürger wählen.", "Die Bürger*innen wählen.", "Die Bürger:innen wählen.",
     "Die Bürger_innen wählen.", "Die Wahlberechtigten wählen.", "De Bürgerne wählen."),
    ("Der Kunde ist König.", "Die Kundin und der Kunde sind König.", "Der*die Kund*in ist König.",
     "Der:die Kund:in ist König.", "Der_die Kund_in ist König.", "Die Kundschaft ist König.", "De Kunde ist König."),
    ("Viele Politiker lügen.", "Viele Politikerinnen und Politiker lügen.", "Viele Politiker*innen lügen.",
     "Viele Politiker:innen lügen.", "Viele Politiker_innen lügen.", "Viele Politikschaffende lügen.",
     "Viele Politikerne lügen."),
]
LABELS = [1, 0, 0, 1, 0, 1]
TOPICS = ["Bildung", "Gesundheit", "Umwelt", "Demokratie", "Wirtschaft", "Politik"]


def _write_jsonl(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")


def write_lou_folder(root: Path) -> Path:
    for task in ("x-stance-de", "germeval-toxic"):
        records = []
        for texts, label, topic in zip(ROWS, LABELS, TOPICS, strict=True):
            record = {"label": label, "original": texts[0], **dict(zip(STRATEGIES, texts[1:], strict=True))}
            if task == "x-stance-de":
                record["topic"] = topic
            records.append(record)
        _write_jsonl(root / "lou" / f"{task}.jsonl", records)
    split = [{"text": texts[0], "label": label} for texts, label in zip(ROWS, LABELS, strict=True)]
    _write_jsonl(root / "tasks" / "germeval-toxic" / "train.jsonl", split * 2)
    _write_jsonl(root / "tasks" / "germeval-toxic" / "dev.jsonl", split)
    return root
