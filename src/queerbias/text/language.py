"""Decide whether a short social-media text is German.

Declared languages are unreliable (Mastodon fills in the poster's interface language)
and detection is unreliable on a handful of words, so `is_german` uses both: a post
declared as another language is out, detection decides when the text is long enough
to be trusted, and the declaration decides for very short texts.
"""

from __future__ import annotations

import functools
import re

from py3langid.langid import MODEL_FILE, LanguageIdentifier

# Below this many letters py3langid guesses; trust the declared language instead.
MIN_LETTERS_FOR_DETECTION = 25
# Detection must be at least this sure before it overrules a German declaration.
MIN_CONFIDENCE = 0.9

_LETTER = re.compile(r"[^\W\d_]", re.UNICODE)


@functools.cache
def _identifier() -> LanguageIdentifier:
    """One identifier with normalised probabilities, loaded on first use (it takes ~0.3 s)."""
    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def detect_language(text: str) -> tuple[str, float]:
    """ISO 639-1 code and probability (0..1) of the most likely language of `text`."""
    lang, prob = _identifier().classify(text)
    return str(lang), float(prob)


def _declared_german(declared: str | None) -> bool | None:
    if not declared:
        return None
    return declared.strip().lower().replace("_", "-").split("-")[0] in {"de", "deu", "ger", "gsw"}


def is_german(text: str, declared: str | None = None) -> bool:
    """True when `text` is German, given an optional declared language tag ("de", "de-AT", ...)."""
    if _declared_german(declared) is False:
        return False
    if len(_LETTER.findall(text)) < MIN_LETTERS_FOR_DETECTION:
        return bool(_declared_german(declared))
    lang, prob = detect_language(text)
    if lang == "de":
        return True
    return bool(_declared_german(declared)) and prob < MIN_CONFIDENCE
