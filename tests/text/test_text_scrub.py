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


def test_a_joiner_stays_only_between_an_emoji_and_an_emoji():
    rainbow = "\U0001F308"
    for text, expected in [(f"\u200d{rainbow} und {rainbow}", f"{rainbow} und {rainbow}"),  # at the start
                           (f"{rainbow}\u200d", rainbow),  # at the end
                           (f"{rainbow}a\u200d{rainbow}", f"{rainbow}a{rainbow}"),  # after a letter
                           (f"{rainbow}\u200da", f"{rainbow}a")]:  # before a letter
        assert remove_invisible(text) == expected


def test_names_are_parts_of_three_letters_or_more_between_pronouns_emoji_and_quotes():
    assert name_parts("Kim (sie/ihr) Meyer") == ["Kim", "Meyer"]
    assert name_parts("'Max' :verified:") == ["Max"] and name_parts("Xaver -") == ["Xaver"]
    assert name_parts("Jo") == [] and name_parts(None) == []


def test_names_match_without_accents_and_with_ss_for_sharp_s_and_the_longest_name_first():
    assert scrub_personal_data("Jose Nunez und Jana Weiß kommen", ["José Núñez", "Jana Weiss"]) == \
        "<name> und <name> kommen"
    # where one name begins another, the whole longer name goes, not its start
    assert scrub_personal_data("Anna Müller kommt", ["Anna | Anna Müller"]) == "<name> kommt"
    assert scrub_personal_data("Anna-Lena Meier kommt", ["Anna-Lena", "Anna Lena Meier"]) == "<name> kommt"
    assert scrub_and_count("Kim kommt", usernames=["kim"]) == ("<user> kommt", {"user": 1})


def test_every_kind_of_replacement_is_counted_under_its_kind():
    text, counts = scrub_and_count("a(at)b.de, c at d dot de, p.example/@x, @bob, annam, Anna Meyer: +49 30 1234567",
                                   ["Anna Meyer"], ["annam"])
    assert text == "<email>, <email>, <user>, <user>, <user>, <name>: <phone>"
    assert counts == {"email": 2, "user": 3, "name": 1, "phone": 1}
