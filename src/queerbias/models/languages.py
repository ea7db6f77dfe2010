"""Language ids for models with language embeddings (XLM): which language a run passes, and passing it.

XLM-CLM-ENDE and XLM-MLM-ENDE were trained with a language embedding added to every token
(`use_lang_emb`, `lang2id {de: 0, en: 1}`), and transformers' `XLMModel.forward` adds it only
when `langs` is given: German text scored without it is not what the model saw in training.
A run's language is `--lang` (`lang:` in a training config), else the language its data declares
(every shipped pair set does); a language the model does not know is refused, and so is a run
that has none.

The language is passed by the model itself: `language_bound` (and `bind_language`, for the model
of a training run) makes every forward of the language-embedding module receive `langs` filled
with the language's id unless the caller passes its own, so scoring, training losses, perplexity,
the equalise scorer and the base anchor all see it. A model without language embeddings ignores
all of this, and nothing about a language is recorded for it.
"""

from __future__ import annotations

import contextlib

import torch

from queerbias.errors import QueerbiasError

_STACK = "_queerbias_languages"


def language_ids(config) -> dict[str, int] | None:
    """language -> id of a model that adds language embeddings (None for every other model)."""
    if not (getattr(config, "use_lang_emb", False) and (getattr(config, "n_langs", 1) or 1) > 1):
        return None
    lang2id = getattr(config, "lang2id", None)
    if not lang2id:
        raise QueerbiasError(f"{config.model_type}: the config has {config.n_langs} language embeddings but no "
                             "lang2id, so no language can be named; add lang2id to its config.json")
    return {str(lang): int(index) for lang, index in lang2id.items()}


def run_language(config, requested: str | None, declared: str | None, current: str | None = None,
                 where: str = "the model") -> str | None:
    """The language a run passes: `requested` (--lang), else the data's `declared` one, else the one the
    model is bound to already (a training run's); None for a model without language embeddings."""
    known = language_ids(config)
    if known is None:
        return None
    language = requested or declared or current
    source = "--lang" if requested else "the data's language" if declared else "the run's language"
    if language is None:
        raise QueerbiasError(f"{where} adds a language embedding to every token ({', '.join(known)}), and the data "
                             "declares no language; pass --lang (lang: in a training config)")
    if language not in known:
        raise QueerbiasError(f"{where} knows the languages {', '.join(known)}, not {language!r} ({source}); pass "
                             "--lang with one of them")
    return language


def _modules(model: torch.nn.Module) -> list[torch.nn.Module]:
    return [module for module in model.modules() if hasattr(module, "lang_embeddings")]


def _fill_langs(module, args, kwargs):
    stack = getattr(module, _STACK)
    given = kwargs.get("langs", args[2] if len(args) > 2 else None)
    if not stack or given is not None:
        return None
    ids = kwargs.get("input_ids", args[0] if args else None)
    shape_of = ids if ids is not None else kwargs["inputs_embeds"][..., 0]
    kwargs["langs"] = torch.full(shape_of.shape, stack[-1], dtype=torch.long, device=shape_of.device)
    return args, kwargs


def _push(model: torch.nn.Module, language_id: int) -> list[torch.nn.Module]:
    modules = _modules(model)
    for module in modules:
        if not hasattr(module, _STACK):
            setattr(module, _STACK, [])
            module.register_forward_pre_hook(_fill_langs, with_kwargs=True)
        getattr(module, _STACK).append(language_id)
    return modules


def bind_language(model: torch.nn.Module, language: str | None) -> None:
    """Pass `language`'s id as `langs` in every later forward of `model` (no-op for None)."""
    if language is not None:
        _push(model, language_ids(model.config)[language])


@contextlib.contextmanager
def language_bound(model: torch.nn.Module, language: str | None):
    """`bind_language` for the duration of the block (one run of a suite), then the earlier binding again."""
    modules = [] if language is None else _push(model, language_ids(model.config)[language])
    try:
        yield
    finally:
        for module in modules:
            getattr(module, _STACK).pop()


def bound_language(model: torch.nn.Module) -> str | None:
    """The language `model` passes now (None: none, or no language embeddings)."""
    stacks = [getattr(module, _STACK) for module in _modules(model) if getattr(module, _STACK, None)]
    if not stacks:
        return None
    names = {index: lang for lang, index in language_ids(model.config).items()}
    return names[stacks[0][-1]]
