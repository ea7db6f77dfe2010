"""Personal data and invisible characters leave the text; ordinary numbers, dates and emoji stay."""

from __future__ import annotations

import pytest

from queerbias.corpus.dedupe import content_hash
from queerbias.text.scrub import remove_invisible, scrub_personal_data


@pytest.mark.parametrize("text, expected", [
    ("Hallo @alice und @bob@chaos.social! Danke @taz_news.", "Hallo <user> und <user>! Danke <user>."),
    ("Schreibt an alice@chaos.social oder presse@uni-x.de.", "Schreibt an <email> oder <email>."),
    ("Mail: x.y+z@sub.example.org", "Mail: <email>"),
    ("Ruf an: +49 30 1234567, 030/1234567, 0171-1234567 oder (030) 123 45 67",
     "Ruf an: <phone>, <phone>, <phone> oder <phone>"),
    ("0049 (0) 30 12345678", "<phone>"),
    # numbers that are not phone numbers stay
    ("Am 01.05.2024 um 10:30:00 kamen 1.000.000 Menschen; Jahr 2024, 100000 Leute, 0,50 €",
     "Am 01.05.2024 um 10:30:00 kamen 1.000.000 Menschen; Jahr 2024, 100000 Leute, 0,50 €"),
    ("#queer und #LGBTQ bleiben", "#queer und #LGBTQ bleiben"),
])
def test_personal_data_becomes_placeholders(text, expected):
    assert scrub_personal_data(text) == expected


def test_invisible_characters_go_but_emoji_joiners_stay():
    rainbow = "\U0001F3F3\ufe0f\u200d\U0001F308"  # 🏳️‍🌈 is flag + VS16 + ZWJ + rainbow
    text = f"que\u200ber \u202eevil\u202c Wort\u00adtrennung a\u200db {rainbow}\ufeff"
    assert remove_invisible(text) == f"queer evil Worttrennung ab {rainbow}"


def test_invisible_characters_do_not_defeat_exact_deduplication():
    assert content_hash("Wir sind queer.") == content_hash("Wir\u200b sind\u2066 queer.\u2069")
