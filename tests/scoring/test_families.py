"""The seed study's eight models, family by family, on tiny random models of the real config classes:
the fast scorer equals the reference loop (for XLM, the loop given `langs`), a causal model's prefix
never depends on later tokens, each family's tokenizer adds the special tokens docs/scoring.md states,
word boundaries hold without a fast tokenizer, and XLM's kind and language are never guessed."""

from __future__ import annotations

import pytest
import torch

from queerbias.errors import QueerbiasError
from queerbias.models import load_model
from queerbias.models.kinds import PUBLISHED_KINDS, check_causal, detect_kind
from queerbias.models.languages import language_bound
from queerbias.pairs.schema import Pair
from queerbias.scoring.config import ScoringConfig
from queerbias.scoring.encoding import SentenceEncoder
from queerbias.scoring.scorer import make_scorer
from queerbias.scoring.words import word_ids, words_from_tokens
from queerbias.suites.pairs.reference import naive_sentence_pair
from queerbias.suites.pairs.scoring import score_pairs
from rounded import rounds_from
from tiny_models import FAMILY_SPECIALS, SEED_STUDY_FAMILIES, XLM_LANGUAGES

PAIRS = [
    Pair("1", "Schwule Männer sind nett.", "Heterosexuelle Männer sind nett.", "gay"),
    Pair("2", "Lukas ist schwul.", "Lukas ist hetero.", "gay"),
    Pair("3", "Trans Frauen sind stark.", "Cis Frauen sind stark.", "trans", direction="antistereo"),
    Pair("4", "Nicht-binäre Menschen lachen über die Straße.", "Cis Menschen lachen.", "nonbinary"),
]
#: the reference method, and for masked LMs also whole words masked at once (word boundaries at work)
CONFIGS = {"causal": [ScoringConfig()],
           "masked": [ScoringConfig(), ScoringConfig(scope="all", reduction="mean", pll="within_word_l2r")]}
CAUSAL_FAMILIES = ["gpt2", "opt", "bloom", "llama", "gemma", "xlm"]


def family_model(tiny_family, name: str):
    """The seed-study model `name` (tiny), loaded as the study uses it; XLM with German's language id."""
    builder, kind = SEED_STUDY_FAMILIES[name]
    lang = "de" if builder == "xlm" else None
    return load_model(str(tiny_family(builder)), kind=kind, lang=lang), lang


@pytest.mark.parametrize("name", sorted(SEED_STUDY_FAMILIES))
def test_fast_scorer_equals_the_reference_loop(tiny_family, name):
    lm, lang = family_model(tiny_family, name)
    for config in CONFIGS[lm.kind]:
        fast = score_pairs(make_scorer(lm, config), PAIRS)
        with language_bound(lm.model, None):  # the reference passes langs itself
            for pair, result in zip(PAIRS, fast):
                more, less = naive_sentence_pair(lm, pair, config, lang=lang)
                assert rounds_from(result.score_more, more) and rounds_from(result.score_less, less), (name, pair)


def test_xlm_scores_depend_on_the_language_given(tiny_xlm):
    """Without `langs` the reference loop gives other scores: the language embedding is real input."""
    for kind in ("causal", "masked"):
        lm = load_model(str(tiny_xlm), kind=kind)
        with_de = [naive_sentence_pair(lm, pair, ScoringConfig(), lang="de") for pair in PAIRS[:2]]
        without = [naive_sentence_pair(lm, pair, ScoringConfig()) for pair in PAIRS[:2]]
        assert all(abs(a - b) > 1e-3 for x, y in zip(with_de, without) for a, b in zip(x, y)), kind


@pytest.mark.parametrize("family", CAUSAL_FAMILIES)
def test_a_prefix_does_not_depend_on_later_tokens(tiny_family, family):
    """Every causal family, XLM's `causal: false` config included: the log-probability of each token of a
    shared prefix is the same whatever follows it."""
    lm = load_model(str(tiny_family(family)), kind="causal", lang="de" if family == "xlm" else None)
    scorer = make_scorer(lm, ScoringConfig(), batch_size=1)  # each sentence in a pass of its own
    first, second = scorer.encode("Lukas ist schwul und liest gern."), scorer.encode("Lukas ist hetero, sagt Anna.")
    shared = next(i for i, (a, b) in enumerate(zip(first.ids, second.ids)) if a != b)
    assert shared >= 3
    scores = scorer.token_logprobs([(ids, p) for ids in (first.ids, second.ids) for p in range(1, shared)])
    for p in range(1, shared):
        assert scores[(first.ids, p)] == pytest.approx(scores[(second.ids, p)], abs=1e-5), (family, p)


def test_a_model_that_reads_later_tokens_is_refused_as_causal(tiny_xlm):
    """XLM as published (`causal: false`), loaded by hand, attends to the future; used as causal it is refused."""
    from transformers import XLMWithLMHeadModel

    with pytest.raises(QueerbiasError, match="depend on later tokens"):
        check_causal(XLMWithLMHeadModel.from_pretrained(tiny_xlm).eval(), "xlm as published")


@pytest.mark.parametrize("family", sorted(FAMILY_SPECIALS))
def test_each_family_adds_the_special_tokens_of_the_real_one(tiny_family, family):
    """OPT starts a text with </s>, BLOOM, GPT-2 and Llama add nothing, BERT [CLS] … [SEP], XLM-R and XLM
    <s> … </s>, Gemma <bos> (docs/scoring.md, "Model families"); the causal scorer prepends the BOS token
    once, as the reference does."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_family(family))
    text = "Lukas ist schwul."
    plain = tokenizer(text, add_special_tokens=False)["input_ids"]
    full = tokenizer.convert_ids_to_tokens(tokenizer(text)["input_ids"])
    start, end = FAMILY_SPECIALS[family]
    assert full == [*([start] if start else []), *tokenizer.convert_ids_to_tokens(plain), *([end] if end else [])]
    if family in CAUSAL_FAMILIES:
        ids = SentenceEncoder(tokenizer, "causal", ScoringConfig(), None)(text).ids
        assert tokenizer.convert_ids_to_tokens(list(ids)) == [tokenizer.bos_token, *tokenizer.convert_ids_to_tokens(plain)]


def test_word_boundaries_without_a_fast_tokenizer_equal_the_fast_ones(tiny_bert):
    """BERT has both kinds of tokenizer: the slow one's word boundaries (from its detokenisation) are the
    fast one's `word_ids()`, punctuation, unknown words and multi-piece words included."""
    from transformers import BertTokenizer
    from transformers.models.bert.tokenization_bert_legacy import BertTokenizerLegacy

    fast = BertTokenizer.from_pretrained(tiny_bert)
    slow = BertTokenizerLegacy(vocab_file=str(tiny_bert / "vocab.txt"), do_lower_case=True, strip_accents=False)
    assert not slow.is_fast
    for text in [pair.sent_more for pair in PAIRS] + ["Xyzzy qq Ärzt*in hilft... Größe, Maß!"]:
        expected, got = fast(text), slow(text)
        assert got["input_ids"] == expected["input_ids"]
        assert words_from_tokens(slow, got["input_ids"]) == word_ids(fast, expected, expected["input_ids"])
        assert len(set(expected.word_ids()) - {None}) < len(expected["input_ids"]) - 2  # some word has pieces


def test_xlm_words_follow_its_word_end_marks(tiny_xlm):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_xlm)
    encoded = tokenizer("Schwule Männer sind nett.")
    tokens = tokenizer.convert_ids_to_tokens(encoded["input_ids"])
    words = word_ids(tokenizer, encoded, encoded["input_ids"])
    assert tokens[1:3] == ["schwu", "le</w>"] and words[1] == words[2] == 0 and words[0] is words[-1] is None
    assert [w for w, token in zip(words, tokens) if token.endswith("</w>")] == [0, 1, 2, 3, 4]


def test_xlm_kind_is_asked_for_never_guessed(tiny_xlm):
    """XLMWithLMHeadModel serves both kinds and its config (causal: false) does not say: refused without a
    kind; either kind is taken without --force-kind; `causal: true` and the published checkpoints tell."""
    from transformers import AutoConfig

    with pytest.raises(QueerbiasError, match="pass --kind masked or --kind causal"):
        load_model(str(tiny_xlm))
    assert load_model(str(tiny_xlm), kind="masked").kind == "masked"
    causal = load_model(str(tiny_xlm), kind="causal")
    assert causal.model.config.causal is True and causal.model.transformer.causal is True
    config = AutoConfig.from_pretrained(tiny_xlm)
    assert detect_kind(config, "FacebookAI/xlm-clm-ende-1024") == "causal"
    assert detect_kind(config, "FacebookAI/xlm-mlm-ende-1024") == "masked"
    assert PUBLISHED_KINDS["xlm-mlm-ende-1024"] == "masked"
    config.causal = True
    assert detect_kind(config, str(tiny_xlm)) == "causal"


def test_xlm_kind_contradicting_what_is_known_is_refused(tiny_xlm, tmp_path):
    import shutil

    from transformers import AutoConfig

    saved = tmp_path / "clm"
    shutil.copytree(tiny_xlm, saved)
    config = AutoConfig.from_pretrained(saved)
    config.causal = True  # what a causal XLM trained here saves
    config.save_pretrained(saved)
    assert load_model(str(saved)).kind == "causal"
    with pytest.raises(QueerbiasError, match="is a causal LM .*--force-kind"):
        load_model(str(saved), kind="masked")


def test_xlm_language_must_be_one_it_knows(tiny_xlm, tiny_gpt2):
    assert set(XLM_LANGUAGES) == {"de", "en"}
    with pytest.raises(QueerbiasError, match="knows the languages de, en, not 'fr'"):
        load_model(str(tiny_xlm), kind="masked", lang="fr")
    lm = load_model(str(tiny_xlm), kind="masked", lang="en")
    assert lm.language == "en" and lm.describe()["lang"] == "en"
    gpt2 = load_model(str(tiny_gpt2), lang="fr")  # no language embeddings: nothing to give, nothing recorded
    assert gpt2.language is None and "lang" not in gpt2.describe()


def test_langs_are_passed_by_the_model_while_bound(tiny_xlm):
    lm = load_model(str(tiny_xlm), kind="masked")
    ids = torch.tensor([[0, 20, 30, 40, 1]])
    seen = []
    with language_bound(lm.model, "en"):  # registers the binding's hook first
        handle = lm.model.transformer.register_forward_pre_hook(
            lambda module, args, kwargs: seen.append(kwargs.get("langs")), with_kwargs=True)
        lm.model(ids)
        lm.model(ids, langs=torch.zeros_like(ids))  # the caller's own langs win
    lm.model(ids)
    handle.remove()
    assert seen[0].tolist() == [[1] * 5] and seen[1].tolist() == [[0] * 5] and seen[2] is None


def test_a_run_passes_the_data_language_and_records_it(tiny_xlm, tiny_gpt2, tmp_path):
    """`lang` defaults to the pair set's declared language; it is in the run's provenance and run key, and
    so is the kind of weights that serve both kinds; a set that declares none needs --lang. A model without
    language embeddings records nothing and keeps its run key."""
    from queerbias.suites.pairs.declaration import PairSettings
    from queerbias.suites.pairs.suite import PairsSuite
    from queerbias.suites.provenance import run_key
    from queerbias.suites.store import evaluate_run

    suite, settings = PairsSuite(), PairSettings(sample=2)
    data = suite.load_data("queerbias-de", settings)
    german = evaluate_run(suite, str(tiny_xlm), data, settings, kind="masked").summary["meta"]
    english = evaluate_run(suite, str(tiny_xlm), data, settings, kind="masked", lang="en").summary["meta"]
    causal = evaluate_run(suite, str(tiny_xlm), data, settings, kind="causal").summary["meta"]
    assert (german["data"]["language"], german["model"]["lang"], english["model"]["lang"]) == ("de", "de", "en")
    assert len({german["run_key"], english["run_key"], causal["run_key"]}) == 3
    file = tmp_path / "pairs.csv"
    file.write_text("sent_more,sent_less,group\nLukas ist schwul.,Lukas ist hetero.,gay\n", encoding="utf-8")
    with pytest.raises(QueerbiasError, match="declares no language; pass --lang"):
        evaluate_run(suite, str(tiny_xlm), str(file), settings, kind="masked")
    meta = evaluate_run(suite, str(tiny_gpt2), data, settings, lang="de").summary["meta"]
    assert "lang" not in meta["model"]
    assert meta["run_key"] == run_key(suite, meta["model"]["fingerprint"], data[1], settings,
                                      suite.run_meta(None, settings))
