"""Tiny random models of every family the project scores, with tokenizers of each family's kind
built here, for offline tests.

The seed study's eight models (bloom-560m, opt-350m, gpt2, German and multilingual BERT,
XLM-RoBERTa, XLM-CLM-ENDE and XLM-MLM-ENDE) and the project's Llama and Gemma 3 each have a
builder: the real config class with the real checkpoint's flags (OPT-350m's projection and
post-norm, XLM's language embeddings, `lang2id` and `causal: false`), and a tokenizer of the
family's kind that adds the special tokens the real one adds (`FAMILY_SPECIALS`). They are
saved as ordinary Hugging Face folders (safetensors), so tests exercise the same loading code
as real checkpoints.

Every builder is deterministic: the weights come from seed 0, and the vocabularies from
`learn_merges`, a byte-pair learner whose ties are broken by the pair itself (the `tokenizers`
trainers break them by hash order, so their vocabularies differ from one build to the next).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

import torch

from queerbias.models.embedded import RANDOM_WEIGHTS_KEY

CORPUS = [
    "Schwule Männer sind nett. Lesbische Frauen sind klug. Trans Frauen sind stark.",
    "Heterosexuelle Männer sind laut. Cis Frauen sind müde. Nicht-binäre Menschen lachen.",
    "Queere Menschen lesen gern. Bisexuelle Menschen können sich nicht entscheiden.",
    "Lukas ist schwul. Lukas ist hetero. Anna ist lesbisch. Anna ist hetero. Maß, Größe, Straße.",
    "Gay people are kind. Straight people are loud. James is very strong. Mary is very strong.",
    "Das ist ein kurzer Test, ob alles passt. Xier mag Kaffee. Dey liest ein Buch.",
    "Die Ärztin hilft. Der Arzt hilft. De Arzte hilft. Dier Ärzt*in hilft. Er sie es.",
]
#: what each family's tokenizer puts around a sentence with special tokens (as the real ones do:
#: OPT starts with `</s>`, BLOOM and GPT-2 add nothing; XLM's tokenizer adds `<s> … </s>`, although
#: XLM's pretraining began sentences with `</s>`)
FAMILY_SPECIALS = {
    "bert": ("[CLS]", "[SEP]"), "gpt2": (None, None), "opt": ("</s>", None), "bloom": (None, None),
    "xlm-roberta": ("<s>", "</s>"), "xlm": ("<s>", "</s>"), "llama": (None, None), "gemma": ("<bos>", None),
}
#: XLM-CLM-ENDE's and XLM-MLM-ENDE's language ids
XLM_LANGUAGES = {"de": 0, "en": 1}


def _corpus() -> list[str]:
    return CORPUS * 20


# -- deterministic vocabularies ------------------------------------------------------------

def learn_merges(words: Counter, count: int, join: Callable[[str, str], str] = str.__add__) -> list[tuple[str, str]]:
    """Byte-pair merges of `words` (symbol tuples with their counts): the most frequent adjacent
    pair `count` times, ties broken by the pair itself, so every build learns the same merges."""
    merges = []
    for _ in range(count):
        pairs: Counter = Counter()
        for word, n in words.items():
            for pair in zip(word, word[1:]):
                pairs[pair] += n
        if not pairs:
            break
        best = min(pairs, key=lambda pair: (-pairs[pair], pair))
        merges.append(best)
        words = Counter({_merged(word, best, join(*best)): n for word, n in words.items()})
    return merges


def _merged(word: tuple[str, ...], pair: tuple[str, str], joined: str) -> tuple[str, ...]:
    out, i = [], 0
    while i < len(word):
        if word[i:i + 2] == pair:
            out.append(joined)
            i += 2
        else:
            out.append(word[i])
            i += 1
    return tuple(out)


def _vocabulary(specials: Iterable[str], alphabet: Iterable[str], merges, join=str.__add__) -> dict[str, int]:
    """Specials first, then the alphabet in order, then each merge's result: ids in that order."""
    vocab: dict[str, int] = {}
    for token in [*specials, *alphabet, *(join(a, b) for a, b in merges)]:
        vocab.setdefault(token, len(vocab))
    return vocab


def _symbols(pieces: Iterable[str]) -> Counter:
    return Counter(tuple(piece) for piece in pieces)


def _save_random(model_class, config, tokenizer, path: Path) -> Path:
    """`model_class(config)` initialised with seed 0, saved with its tokenizer; its config says that its
    weights are random, so that reports label its figures as no finding (`models.embedded.random_weights`)."""
    path.mkdir(parents=True, exist_ok=True)
    setattr(config, RANDOM_WEIGHTS_KEY, True)
    torch.manual_seed(0)
    model_class(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


# -- BERT (WordPiece) ------------------------------------------------------------------------

def build_tiny_bert(path: Path, cased: bool = False, merges: int = 120) -> Path:
    """A BERT masked LM with a WordPiece vocabulary: uncased (the generic test model) or cased, as
    German BERT and multilingual BERT are."""
    from tokenizers import normalizers, pre_tokenizers
    from transformers import BertConfig, BertForMaskedLM, BertTokenizer

    normalizer = normalizers.BertNormalizer(lowercase=not cased, strip_accents=False)
    words = [word for text in _corpus()
             for word, _ in pre_tokenizers.BertPreTokenizer().pre_tokenize_str(normalizer.normalize_str(text))]
    pieces = Counter(tuple([word[0], *("##" + c for c in word[1:])]) for word in words)

    def join(a: str, b: str) -> str:
        return a + b.removeprefix("##")

    learned = learn_merges(pieces, merges, join)
    alphabet = sorted({symbol for word in pieces for symbol in word})
    vocab = _vocabulary(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"], alphabet, learned, join)
    path.mkdir(parents=True, exist_ok=True)
    (path / "vocab.txt").write_text("".join(token + "\n" for token in vocab), encoding="utf-8")
    tokenizer = BertTokenizer(vocab=str(path / "vocab.txt"), do_lower_case=not cased, strip_accents=False)
    assert len(tokenizer) > 100, "the WordPiece vocabulary was not loaded"
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64,
                        max_position_embeddings=128, architectures=["BertForMaskedLM"])
    return _save_random(BertForMaskedLM, config, tokenizer, path)


def build_tiny_german_bert(path: Path) -> Path:
    """bert-base-german-cased's kind: cased WordPiece, [CLS] … [SEP]."""
    return build_tiny_bert(path, cased=True)


def build_tiny_multilingual_bert(path: Path) -> Path:
    """bert-base-multilingual-cased's kind: cased WordPiece (another vocabulary size), [CLS] … [SEP]."""
    return build_tiny_bert(path, cased=True, merges=90)


# -- byte-level BPE (GPT-2, OPT, BLOOM, Llama) --------------------------------------------------

def _byte_level(specials: list[str], merges: int = 150) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """A byte-level BPE vocabulary (the 256 byte symbols, then merges) and its merges."""
    from tokenizers import pre_tokenizers

    split = pre_tokenizers.ByteLevel(add_prefix_space=False)
    pieces = _symbols(piece for text in _corpus() for piece, _ in split.pre_tokenize_str(text))
    learned = learn_merges(pieces, merges)
    return _vocabulary(specials, sorted(pre_tokenizers.ByteLevel.alphabet()), learned), learned


def _byte_bpe(specials: list[str], post_processor=None, merges: int = 150, **tokens):
    """A fast byte-level BPE tokenizer with these special tokens (and a post-processor)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab, merges = _byte_level(specials, merges)
    backend = Tokenizer(models.BPE(vocab, merges))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    if post_processor is not None:
        backend.post_processor = post_processor
    return PreTrainedTokenizerFast(tokenizer_object=backend, **tokens)


def build_tiny_gpt2(path: Path) -> Path:
    """GPT-2: byte-level BPE adding nothing, BOS = EOS = <|endoftext|> (plus a pad token)."""
    from transformers import GPT2Config, GPT2LMHeadModel

    tokenizer = _byte_bpe(["<|endoftext|>", "<pad>"], bos_token="<|endoftext|>", eos_token="<|endoftext|>",
                          pad_token="<pad>")
    config = GPT2Config(vocab_size=len(tokenizer), n_embd=32, n_layer=2, n_head=2,
                        n_positions=128, bos_token_id=tokenizer.bos_token_id,
                        eos_token_id=tokenizer.eos_token_id, architectures=["GPT2LMHeadModel"])
    return _save_random(GPT2LMHeadModel, config, tokenizer, path)


def build_tiny_opt(path: Path) -> Path:
    """opt-350m's kind: byte-level BPE whose tokenizer starts every text with `</s>` (its BOS), ids
    <s> 0, <pad> 1, </s> 2, <unk> 3; a word-embedding projection narrower than the hidden size and
    layer norm after each block, as in opt-350m."""
    from tokenizers import processors
    from transformers import OPTConfig, OPTForCausalLM

    post = processors.TemplateProcessing(single="</s> $A", pair="</s> $A </s> $B", special_tokens=[("</s>", 2)])
    tokenizer = _byte_bpe(["<s>", "<pad>", "</s>", "<unk>"], post, bos_token="</s>", eos_token="</s>",
                          unk_token="</s>", pad_token="<pad>")
    config = OPTConfig(vocab_size=len(tokenizer), hidden_size=32, word_embed_proj_dim=16, num_hidden_layers=2,
                       ffn_dim=64, num_attention_heads=2, max_position_embeddings=128, do_layer_norm_before=False,
                       pad_token_id=1, bos_token_id=2, eos_token_id=2, architectures=["OPTForCausalLM"])
    return _save_random(OPTForCausalLM, config, tokenizer, path)


def build_tiny_bloom(path: Path) -> Path:
    """bloom-560m's kind: byte-level BPE adding nothing, ids <unk> 0, <s> 1, </s> 2, <pad> 3; ALiBi
    positions (no position limit)."""
    from transformers import BloomConfig, BloomForCausalLM

    tokenizer = _byte_bpe(["<unk>", "<s>", "</s>", "<pad>"], bos_token="<s>", eos_token="</s>",
                          unk_token="<unk>", pad_token="<pad>")
    config = BloomConfig(vocab_size=len(tokenizer), hidden_size=32, n_layer=2, n_head=2, bos_token_id=1,
                         eos_token_id=2, pad_token_id=3, architectures=["BloomForCausalLM"])
    return _save_random(BloomForCausalLM, config, tokenizer, path)


def build_tiny_llama(path: Path) -> Path:
    from transformers import LlamaConfig, LlamaForCausalLM

    # fewer merges: the corpus's long words stay in pieces, so no pair differs only in its first token
    tokenizer = _byte_bpe(["<s>", "</s>", "<pad>"], merges=100, bos_token="<s>", eos_token="</s>", pad_token="<pad>")
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=1, intermediate_size=64,
                         max_position_embeddings=128, bos_token_id=tokenizer.bos_token_id,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
                         architectures=["LlamaForCausalLM"])
    return _save_random(LlamaForCausalLM, config, tokenizer, path)


# -- SentencePiece kinds (XLM-RoBERTa, Gemma) ------------------------------------------------

def _metaspace_words(text: str) -> list[str]:
    return ["▁" + word for word in text.split()]


def build_tiny_xlm_roberta(path: Path) -> Path:
    """xlm-roberta-base's kind: a SentencePiece unigram tokenizer (`▁` word starts) adding <s> … </s>,
    ids <s> 0, <pad> 1, </s> 2, <unk> 3 and <mask> last; positions offset by the padding id."""
    from transformers import XLMRobertaConfig, XLMRobertaForMaskedLM, XLMRobertaTokenizer

    pieces = _symbols(word for text in _corpus() for word in _metaspace_words(text))
    learned = learn_merges(pieces, 150)
    vocab = _vocabulary(["<s>", "<pad>", "</s>", "<unk>"], sorted({s for word in pieces for s in word}), learned)
    scores = [(token, 0.0 if i < 4 else -1.0) for token, i in vocab.items()] + [("<mask>", 0.0)]
    tokenizer = XLMRobertaTokenizer(vocab=scores)
    config = XLMRobertaConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2,
                              num_attention_heads=2, intermediate_size=64, max_position_embeddings=130,
                              type_vocab_size=1, pad_token_id=1, bos_token_id=0, eos_token_id=2,
                              architectures=["XLMRobertaForMaskedLM"])
    return _save_random(XLMRobertaForMaskedLM, config, tokenizer, path)


def build_tiny_gemma(path: Path) -> Path:
    """A Gemma 3 text model with a SentencePiece-style tokenizer as Gemma's: spaces become '▁'
    and start the next token, byte fallback, and plain encoding adds <bos> (the model soft-caps
    its final logits, which the scorer must reproduce)."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig, PreTrainedTokenizerFast

    normalizer = normalizers.Replace(" ", "▁")
    split = pre_tokenizers.Split("▁", behavior="merged_with_next")
    pieces = _symbols(piece for text in _corpus()
                      for piece, _ in split.pre_tokenize_str(normalizer.normalize_str(text)))
    learned = learn_merges(pieces, 150)
    specials = ["<pad>", "<eos>", "<bos>", "<unk>"] + [f"<0x{b:02X}>" for b in range(256)]
    vocab = _vocabulary(specials, sorted({s for word in pieces for s in word}), learned)
    backend = Tokenizer(models.BPE(vocab, learned, byte_fallback=True, unk_token="<unk>"))
    backend.normalizer = normalizer
    backend.pre_tokenizer = split
    backend.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()])
    backend.post_processor = processors.TemplateProcessing(
        single="<bos> $A", special_tokens=[("<bos>", backend.token_to_id("<bos>"))])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<bos>", eos_token="<eos>",
                                        pad_token="<pad>", unk_token="<unk>")
    config = Gemma3TextConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2,
                              num_attention_heads=2, num_key_value_heads=1, head_dim=16,
                              intermediate_size=64, max_position_embeddings=128, sliding_window=16,
                              final_logit_softcapping=30.0, pad_token_id=tokenizer.pad_token_id,
                              bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                              architectures=["Gemma3ForCausalLM"])
    return _save_random(Gemma3ForCausalLM, config, tokenizer, path)


# -- XLM (slow tokenizer: Moses, lower-cased, BPE with </w> word ends) -------------------------

def build_tiny_xlm(path: Path) -> Path:
    """XLM-CLM-ENDE's and XLM-MLM-ENDE's kind (their published configs are the same but for the
    weights): `XLMWithLMHeadModel` with language embeddings for de (0) and en (1) and `causal: false`,
    and the slow `XLMTokenizer` (Moses pre-tokenisation, lower-casing without accents, BPE whose
    word-final pieces end in `</w>`) from vocab.json and merges.txt written here."""
    import sacremoses
    from transformers import XLMConfig, XLMTokenizer, XLMWithLMHeadModel
    from transformers.models.xlm.tokenization_xlm import lowercase_and_remove_accent

    normalize, split = sacremoses.MosesPunctNormalizer(lang="de"), sacremoses.MosesTokenizer(lang="de")
    words = [word for text in _corpus()
             for word in lowercase_and_remove_accent(split.tokenize(normalize.normalize(text), escape=False))]
    pieces = Counter((*word[:-1], word[-1] + "</w>") for word in words)
    learned = learn_merges(pieces, 150)
    specials = ["<s>", "</s>", "<pad>", "<unk>"] + [f"<special{i}>" for i in range(10)]
    vocab = _vocabulary(specials, sorted({s for word in pieces for s in word}), learned)
    path.mkdir(parents=True, exist_ok=True)
    (path / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    (path / "merges.txt").write_text("".join(f"{a} {b}\n" for a, b in learned), encoding="utf-8")
    languages = {"lang2id": XLM_LANGUAGES, "id2lang": {i: lang for lang, i in XLM_LANGUAGES.items()}}
    tokenizer = XLMTokenizer(str(path / "vocab.json"), str(path / "merges.txt"), **languages)
    config = XLMConfig(vocab_size=len(vocab), emb_dim=32, n_layers=2, n_heads=2, max_position_embeddings=128,
                       n_langs=2, use_lang_emb=True, causal=False, bos_index=0, eos_index=1, pad_index=2,
                       unk_index=3, mask_index=5, **languages, architectures=["XLMWithLMHeadModel"])
    return _save_random(XLMWithLMHeadModel, config, tokenizer, path)


#: every builder by family name, for tests that go through them all
BUILDERS = {
    "bert": build_tiny_bert, "german-bert": build_tiny_german_bert, "multilingual-bert": build_tiny_multilingual_bert,
    "gpt2": build_tiny_gpt2, "opt": build_tiny_opt, "bloom": build_tiny_bloom, "llama": build_tiny_llama,
    "xlm-roberta": build_tiny_xlm_roberta, "gemma": build_tiny_gemma, "xlm": build_tiny_xlm,
}
#: the seed study's eight models (Tables 4-7) -> (the builder of their family, the kind they are used as)
SEED_STUDY_FAMILIES = {
    "bloom-560m": ("bloom", "causal"), "german_bert": ("german-bert", "masked"), "gpt2": ("gpt2", "causal"),
    "multi_bert": ("multilingual-bert", "masked"), "opt-350m": ("opt", "causal"), "xlm-clm": ("xlm", "causal"),
    "xlm-mlm": ("xlm", "masked"), "xlm-roberta": ("xlm-roberta", "masked"),
}
