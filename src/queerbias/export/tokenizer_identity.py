"""Which tokenizer an exported task was built for: a fingerprint of how it splits text.

The fingerprint covers what decides the ids of a string (normaliser, pre-tokeniser, model
vocabulary and merges, added tokens, lower-casing), not the post-processor that adds special
tokens: lm-eval may load the same tokenizer with another `add_bos_token`, and the exported
requests never rely on it adding any.
"""

from __future__ import annotations

import hashlib
import json


def tokenizer_fingerprint(tokenizer) -> str:
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        state = json.loads(backend.to_str())
        parts = {key: state.get(key) for key in ("added_tokens", "normalizer", "pre_tokenizer", "model")}
    else:
        parts = {"vocab": sorted(tokenizer.get_vocab().items())}
    parts["lowercase"] = bool(getattr(tokenizer, "do_lower_case", False))
    parts["special"] = {"bos": tokenizer.bos_token, "eos": tokenizer.eos_token}
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False).encode("utf-8")
    return "sha256:" + hashlib.sha256(blob).hexdigest()[:32]
