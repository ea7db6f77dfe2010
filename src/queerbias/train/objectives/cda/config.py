"""`cda`: its config section (one- or two-sided copies, augmentation under other objectives; the
lexicon is the core `data.lexicon`, which targeting reads too); the declaration is `objective.py`."""

from __future__ import annotations

from dataclasses import dataclass

from queerbias.options import option


@dataclass
class CdaConfig:
    two_sided: bool = option(True, "keep each matched document and add its swapped copy; false: replace it")
    augment: bool = option(False, "augment the corpus under another objective that takes it (equalise); "
                                  "objective cda always augments")
