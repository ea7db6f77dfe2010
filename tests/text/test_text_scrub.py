"""Personal data and invisible characters leave the text; ordinary numbers, dates and emoji stay.

Every spelling of a name or a contact the scrubber handles is one row of scrub_spellings.jsonl
(its kind, what the spelling is, the display names and usernames the post carries, a text and
what must become of it), and each row is a test of its own.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from queerbias.corpus.dedupe import content_hash
from queerbias.text.scrub import name_parts, remove_invisible, scrub_and_count, scrub_personal_data

SPELLINGS = [json.loads(line) for line in (Path(__file__).parent / "scrub_spellings.jsonl").read_text(
    encoding="utf-8").splitlines()]


@pytest.mark.parametrize("row", SPELLINGS, ids=[f"{row['kind']}: {row['spelling']}" for row in SPELLINGS])
def test_every_listed_spelling(row):
    assert scrub_personal_data(row["text"], row["names"], row["usernames"]) == row["expected"]


def test_the_list_covers_every_kind_and_what_must_stay():
    kinds = {row["kind"] for row in SPELLINGS}
    assert kinds == {"email", "user", "phone", "name", "not email", "not user", "not phone", "not name"}
    assert len({(row["kind"], row["spelling"]) for row in SPELLINGS}) == len(SPELLINGS)  # one row a spelling


def test_invisible_characters_go_but_emoji_joiners_stay():
    rainbow = "\U0001F3F3\ufe0f\u200d\U0001F308"  # 🏳️‍🌈 is flag + VS16 + ZWJ + rainbow
    text = f"que\u200ber \u202eevil\u202c Wort\u00adtrennung a\u200db {rainbow}\ufeff"
    assert remove_invisible(text) == f"queer evil Worttrennung ab {rainbow}"


def test_invisible_characters_do_not_defeat_exact_deduplication():
    assert content_hash("Wir sind queer.") == content_hash("Wir\u200b sind\u2066 queer.\u2069")


def test_display_names_go_in_any_case_and_spacing_and_are_counted():
    text, counts = scrub_and_count("Liebe Grüße, anna   MÜLLER! #AnnaMüller, anna@x.de und @anna. Annamaria bleibt.",
                                   ["Anna Müller :verified: (sie/ihr)"])
    assert text == "Liebe Grüße, <name>! <name>, <email> und <user>. Annamaria bleibt."
    assert counts == {"name": 2, "email": 1, "user": 1}
    assert name_parts("🏳️‍🌈 Anna Müller :blobcat: (sie/ihr) | Köln") == ["Anna Müller", "Köln"]
    assert name_parts("Jo 🌈") == []
