"""Pairs mined from real text: each lexicon entry kind swapped and paired, counts, refusals."""

from __future__ import annotations

import pytest

from queerbias.errors import QueerbiasError
from queerbias.pairs.mining import load_lexicons, mine_pairs, sentences
from queerbias.train.config import config_from_dict
from queerbias.train.pair_batches import load_training_pairs

LEXICONS = load_lexicons()


@pytest.mark.parametrize("sentence,swapped,group", [
    # German: adjective (inflected), invariant, noun (with an adjective created), prefix
    ("Die schwulen Männer aus dem Chor singen heute Abend.",
     "Die heterosexuellen Männer aus dem Chor singen heute Abend.", "gay"),
    ("Eine trans Frau aus Bremen leitet die neue Schule.",
     "Eine cis Frau aus Bremen leitet die neue Schule.", "trans_women"),
    ("Zwei Lesben haben im Dorf ein Café eröffnet.",
     "Zwei heterosexuelle Frauen haben im Dorf ein Café eröffnet.", "lesbian"),
    ("Die Transfrau aus Kiel gewann den Wettbewerb im Schach.",
     "Die Cisfrau aus Kiel gewann den Wettbewerb im Schach.", "trans_women"),
    # English: invariant, noun
    ("Many gay men in the village sing in the choir.",
     "Many straight men in the village sing in the choir.", "gay"),
    ("Two lesbians opened a new bakery in the town.",
     "Two straight women opened a new bakery in the town.", "lesbian"),
    ("The nonbinary teacher explained the new timetable.",
     "The cisgender teacher explained the new timetable.", "nonbinary"),
])
def test_each_entry_kind_is_swapped_and_paired(sentence, swapped, group):
    mined = mine_pairs([sentence], LEXICONS)
    assert [(p.sent_more, p.sent_less, p.group) for p in mined.pairs] == [(sentence, swapped, group)]
    language = "en" if sentence.startswith(("Many", "Two l", "The")) else "de"
    assert mined.pairs_per_group == {f"{language}/{group}": 1}
    assert mined.pairs[0].pair_id.startswith(f"mined-{language}-")


def test_words_that_contain_an_identity_term_are_left_alone():
    texts = ["Der Transport der Interessenten war teuer und dauerte lange.",
             "The transport of interested visitors was late again today.",
             "Die Queerness-Debatte dauert an, sagt der Verein heute."]
    mined = mine_pairs(texts, LEXICONS)
    assert mined.pairs == [] and sum(mined.sentences.values()) == 3


def test_counts_sentences_once_and_skips_half_swappable_ones():
    text = ("Schwule Männer leben in allen Städten. Schwule Männer leben in allen Städten. "
            "Die Nichtbinären aus dem Verein kamen spät zum Treffen. Heute regnet es in ganz Hamburg sehr stark.")
    assert len(sentences(text)) == 4
    mined = mine_pairs([text], LEXICONS)
    assert len(mined.pairs) == 1 and mined.pairs_per_group == {"de/gay": 1}
    # a nominalised adjective without an uninflected counterfactual cannot be swapped
    assert mined.skipped == {"de/nonbinary": 1}
    assert mined.sentences == {"de": 3}


def _config(tmp_path, **overrides):
    raw = {"model": "unused", "output_dir": str(tmp_path / "run"), "objective": "equalise",
           "data": {"train": "corpora/demo"}, "eval": {"benchmarks": [{"suite": "pairs", "sample": 5}]}}
    for key, value in overrides.items():
        section, name = key.split("__")
        raw.setdefault(section, {})[name] = value
    return config_from_dict(raw)


def test_training_pairs_combine_template_and_mined_pairs(tmp_path):
    corpus = ["Ein schwules Paar aus dem Allgäu feiert seine goldene Hochzeit nach."]
    pairs = load_training_pairs(_config(tmp_path, pairs__train="queerbias-de:train", pairs__mine=["corpus"]), corpus)
    assert len(pairs) == 2344 + 1 and pairs.name == "queerbias-de:train + mined:corpus"
    assert pairs.meta["mined"]["pairs_per_group"] == {"de/gay": 1}


def test_mining_refusals(tmp_path):
    with pytest.raises(QueerbiasError, match="no sentence of corpus names an identity group"):
        load_training_pairs(_config(tmp_path, pairs__mine=["corpus"]), ["Heute regnet es in ganz Hamburg."])
    with pytest.raises(QueerbiasError, match="no mined pair names intersex"):
        load_training_pairs(_config(tmp_path, pairs__mine=["corpus"], data__identities=["intersex"]),
                            ["Schwule Männer leben in allen Städten."])
    with pytest.raises(QueerbiasError, match="pairs.mine_lexicons.fr"):
        _config(tmp_path, pairs__mine=["corpus"], pairs__mine_lexicons={"fr": "x.yaml"})
    with pytest.raises(QueerbiasError, match="'pairs.mine' is empty"):
        _config(tmp_path, pairs__train="queerbias-de:train", pairs__mine=[])


def test_optional_training_pairs_are_added_when_available(tmp_path, monkeypatch):
    config = _config(tmp_path, pairs__train="queerbias-de:train", pairs__train_optional=["nowhere.csv"])
    assert len(load_training_pairs(config)) == 2344  # a missing optional set is skipped
    config = _config(tmp_path, pairs__train="queerbias-de:train", pairs__train_optional=["queerbias-de-frames:train"])
    combined = load_training_pairs(config)
    assert combined.name == "queerbias-de:train + queerbias-de-frames:train" and len(combined) > 2344


def test_a_set_in_train_and_train_optional_is_refused(tmp_path):
    with pytest.raises(QueerbiasError, match="pairs.train_optional' repeats queerbias-de:train of pairs.train"):
        _config(tmp_path, pairs__train=["queerbias-de:train"], pairs__train_optional=["queerbias-de:train"])
