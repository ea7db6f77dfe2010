from queerbias.text.language import detect_language, is_german

GERMAN = "Heute waren wir auf dem CSD in Köln, es war ein wunderbarer Tag für alle."
ENGLISH = "Today we went to the pride parade in Cologne and it was a wonderful day."


def test_detect_language():
    assert detect_language(GERMAN)[0] == "de"
    lang, prob = detect_language(ENGLISH)
    assert lang == "en" and 0.5 < prob <= 1.0


def test_declared_other_language_is_not_german():
    assert not is_german(GERMAN, declared="en")


def test_detection_overrules_a_wrong_german_declaration():
    assert not is_german(ENGLISH, declared="de")
    assert is_german(GERMAN, declared="de-AT")
    assert is_german(GERMAN)


def test_short_texts_follow_the_declaration():
    assert is_german("Queer!", declared="de")
    assert not is_german("Queer!")
