from queerbias.text.html import html_to_text


def test_paragraphs_and_line_breaks():
    assert html_to_text("<p>Hallo <b>Welt</b><br>zweite Zeile</p><p>#queer #lgbtq</p>") == (
        "Hallo Welt\nzweite Zeile\n\n#queer #lgbtq")


def test_hostile_markup_is_not_text():
    html = ('<p>ok</p><script>alert("x")</script><style>p{}</style><!-- hidden -->'
            '<iframe src="javascript:alert(1)">frame</iframe><img src=x onerror="alert(1)">')
    assert html_to_text(html) == "ok"


def test_entities_whitespace_and_nfc():
    assert html_to_text("<p>A&amp;B&nbsp; E\u0308</p>") == "A&B \u00cb"


def test_garbage_does_not_raise():
    for junk in ["", "   ", "<", "</p>", "<<<>>>", "<p" * 1000, "\x00<p>x</p>", "<?xml version='1.0'?><p>x</p>"]:
        assert isinstance(html_to_text(junk), str)
    assert html_to_text("plain text") == "plain text"
