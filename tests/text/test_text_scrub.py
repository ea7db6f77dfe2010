"""Personal data and invisible characters leave the text; ordinary numbers, dates and emoji stay."""

from __future__ import annotations

import pytest

from queerbias.corpus.dedupe import content_hash
from queerbias.text.scrub import name_parts, remove_invisible, scrub_and_count, scrub_personal_data


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
    # obfuscated spellings: .@, fullwidth ＠, IDN hosts, (at) and [dot], dotted and thin-spaced phones
    (".@alice, ＠bob＠bücher.de und @carla@xn--bcher-kva.de", ".<user>, <user> und <user>"),
    ("nämé@bücher.de, a(at)b.de, a [at] b [dot] de, a (ät) b (punkt) de, a{at}b.de",
     "<email>, <email>, <email>, <email>, <email>"),
    ("+49.170.1234567, +49\u202f170\u20091234567, 030\u202f1234567, 0049 170 12345678",
     "<phone>, <phone>, <phone>, <phone>"),
    ("Version 1.2.3, um 12.30 Uhr, am 1.5.2024, Tel.-Nr. folgt", "Version 1.2.3, um 12.30 Uhr, am 1.5.2024, Tel.-Nr. folgt"),
])
def test_personal_data_becomes_placeholders(text, expected):
    assert scrub_personal_data(text) == expected


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
    assert name_parts("Jo 🌈") == [] and scrub_personal_data("Jo kommt mit", ["Jo 🌈"]) == "Jo kommt mit"


@pytest.mark.parametrize("text, expected", [
    # names after contacts, in every spelling (issue 29): fullwidth, `_`, umlauts written out, inside a hashtag
    ("Ａｎｎａ Ｍüller, #Anna_Müller, #annamueller und #annamuellerfotografie; Annamaria bleibt.",
     "<name>, <name>, <name> und <name>; Annamaria bleibt."),
    ("folgt annam oder ANNAM, nicht annamaria", "folgt <user> oder <user>, nicht annamaria"),
    ("annam at example dot de, annam @ example.org, anna at mueller.de", "<email>, <email>, <email>"),
    ("p.example/users/annam und https://p.example/@annam", "<user> und <user>"),
    ("0170 – 123 45 67, ０１７０ １２３４５６７ und +４９ １７０ １２３４５６７", "<phone>, <phone> und <phone>"),
    ("am 01-05-2024, am 1/5/24 und 01–05–2024", "am 01-05-2024, am 1/5/24 und 01–05–2024"),
])
def test_every_spelling_of_a_name_and_a_contact(text, expected):
    assert scrub_personal_data(text, ["Anna Müller"], ["annam"]) == expected


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
