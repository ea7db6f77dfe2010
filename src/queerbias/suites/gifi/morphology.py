"""German parts of speech and inflection for the pronoun extractor, from HanTa (the Hanover Tagger).

Whether a German "sie" is she or they is a question of number: of the finite verb "sie" is
the subject of. GIFI counts pronouns of the person's group (Sec. 3.1 GDR, Sec. 3.3 SA/OF), and
a plural "sie" is no such pronoun. A hand-written list of plural verbs missed every verb not
on it ("sie besuchen", "sie lernen", "gestern besuchten sie"), so number is read from the
verb's own morphology instead.

HanTa (Wartena 2019, github.com/wartaal/HanTa, LGPL-3.0; pure Python, its German model inside
the wheel, so it works offline) tags a sentence with STTS parts of speech ("VV(FIN)": a finite
full verb, "NN", "APPR", ...) and segments each word into morphemes with their tags ("kamen":
"kam" + the finite inflection suffix "en", `SUF_FIN`). The number of a finite verb follows:

- with an inflection suffix: plural when the suffix ends in -n ("besuch-en", "besuch-ten",
  "kam-en", "wander-n", "hatt-en"), singular otherwise ("besuch-t", "besuch-te", "hatt-e");
  HanTa sometimes reads a verb at the end of a clause as an infinitive ("weil sie Ferien
  haben"); the infinitive's -(e)n is the 1st/3rd person plural present of every verb but
  "sein", so a caller that knows the clause needs its finite verb there reads it as plural;
- without one, the bare stem: singular ("kam", "ging", "kann", "begann", "wird"), since German
  plural verb forms all end in -(e)n; except in the suppletive paradigm of "sein", which HanTa
  lists whole (morpheme tag `..._IRR`) and which carries number in the paradigm itself
  (`SEIN_PLURAL`: "sind", "waren", "wären", "seien", and the 2nd person's "seid", "wart",
  "wärt", "seiet").

Known analysis error: HanTa segments the singular "schien" as "schi" + "en", so "sie schien"
reads as plural.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from HanTa import HanoverTagger

PLURAL, SINGULAR = "plural", "singular"
#: HanTa's morpheme tags of a finite verb's and an infinitive's inflection suffix
INFLECTION_SUFFIXES = {"SUF_FIN", "SUF_INF"}
#: the suffix of HanTa's morpheme tags for forms it lists whole (the suppletive forms of "sein")
IRREGULAR = "_IRR"
#: the plural forms of the suppletive paradigm of "sein" (indicative and subjunctive, present and past)
SEIN_PLURAL = {"sind", "seid", "waren", "wart", "wären", "wärt", "seien", "seiet"}


@dataclass(frozen=True)
class Word:
    """A token with its STTS tag (HanTa's refinement: "VV(FIN)", "ADJ(A)", ...), lower-case lemma
    stem and morphemes (each with its morpheme tag)."""

    text: str
    tag: str
    lemma: str
    morphemes: tuple[tuple[str, str], ...]

    @property
    def finite(self) -> bool:
        """A finite verb: full verb, auxiliary or modal ("VV(FIN)", "VA(FIN)", "VM(FIN)")."""
        return self.tag.endswith("(FIN)")

    @property
    def infinitive(self) -> bool:
        """A verb HanTa reads as an infinitive ("VV(INF)", ...)."""
        return self.tag.endswith("(INF)")

    @property
    def pos(self) -> str:
        """The STTS tag without HanTa's refinement ("VV(FIN)" -> "VV", "ADJ(A)" -> "ADJ")."""
        return self.tag.split("(")[0]


def analyse(tokens: Sequence[str]) -> list[Word]:
    """The tagged words of one sentence's tokens (HanTa's Viterbi tagger over the whole sentence)."""
    if not tokens:
        return []
    return [Word(text, tag, lemma, tuple(morphemes))
            for text, lemma, morphemes, tag in _tagger().tag_sent(list(tokens), taglevel=3)]


def verb_number(word: Word) -> str:
    """PLURAL or SINGULAR: the number of a finite verb (or of a verb read as an infinitive where the
    clause needs its finite verb) from its inflection (module docstring)."""
    suffixes = [morpheme for morpheme, tag in word.morphemes if tag in INFLECTION_SUFFIXES]
    if suffixes:
        return PLURAL if suffixes[-1].endswith("n") else SINGULAR
    irregular = any(tag.endswith(IRREGULAR) for _, tag in word.morphemes)
    return PLURAL if irregular and word.text.lower() in SEIN_PLURAL else SINGULAR


@cache
def _tagger():
    """HanTa's German model, loaded once per process (about a second) from the installed package."""
    return HanoverTagger.HanoverTagger(str(Path(HanoverTagger.__file__).with_name("morphmodel_ger.pgz")))
