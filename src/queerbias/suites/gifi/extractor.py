"""Which pronoun group a German text uses for a person: a rule-based extractor.

German pronouns are homographs of other words, so a plain word list would count
formal "Sie", plural "sie", "ihr" = you (plural) and "sein" = to be. The rules here
use capitalisation, sentence position and agreement with a neighbouring finite
verb; what stays undecidable without coreference is read as the singular person
(documented in docs/gifi.md):

- "Sie"/"Ihr..." capitalised inside a sentence: formal address, skipped.
- "sie" next to a plural verb form ("sie sind", "haben sie"), or the first verb of
  its clause being plural ("weil sie müde sind"): plural or formal, skipped; it
  also marks the sentence as plural, so a later possessive "ihr(e)" + noun reads
  "their" and is skipped, while dative "ihr" still counts.
- "ihr" next to an unambiguous 2nd-person plural verb ("ihr seid", "habt ihr"): skipped.
- "sein" as an infinitive (after "zu", before a verb, punctuation or the end): skipped.
- "en" before a French loan word ("en masse", "en passant"): skipped.
- all-capital words ("EM", "SIE"): skipped, they are abbreviations or shouting.
- forms marked ambiguous in pronouns.yaml (dey's "denen", "deren", "dem") are also
  relative pronouns, demonstratives and articles. They count only for the referent a
  caller names (the person the prompt introduced, so a GDR continuation "fährt mit
  denen in den Urlaub" of a dey prompt keeps dey), and only where the syntax allows a
  personal or possessive pronoun: not after a comma, nor after comma + preposition
  (relative clause: ", mit denen"), and "dem" not before a noun or adjective + noun
  (article: "mit dem Rad", "dem neuen Rad"). Without a referent they never count.

Words are matched whole ("lernen" contains no "en").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from queerbias.suites.gifi.pronouns import PronounGroup

_TOKEN = re.compile(r"[^\W\d_]+|[.!?]+|[,;:–—()\"„“”»«]|\S", re.UNICODE)
_SENTENCE_END = re.compile(r"[.!?]+")
_CLAUSE_END = {",", ";", ":", "–", "—", "(", ")"}
_QUOTES = {'"', "„", "“", "”", "»", "«"}

#: forms that are also the formal address (Sie, Ihr Buch, Ihnen)
FORMAL_HOMOGRAPHS = {"sie", "ihr", "ihre", "ihren", "ihrem", "ihrer", "ihres"}
IHR_POSSESSIVES = {"ihr", "ihre", "ihren", "ihrem", "ihrer", "ihres"}

SINGULAR_VERBS = {
    "ist", "war", "hat", "hatte", "wird", "wurde", "kann", "konnte", "will", "wollte", "muss",
    "musste", "soll", "sollte", "darf", "durfte", "mag", "mochte", "möchte", "weiß", "wusste",
    "geht", "ging", "kommt", "kam", "macht", "sagt", "sagte", "findet", "fand", "liebt", "lebt",
    "wohnt", "arbeitet", "arbeitete", "spielt", "lacht", "lachte", "fährt", "fuhr", "sieht", "sah",
    "gibt", "gab", "bleibt", "blieb", "steht", "stand", "sitzt", "saß", "läuft", "lief", "isst",
    "aß", "trinkt", "liest", "las", "schreibt", "schrieb", "denkt", "dachte", "glaubt", "fühlt",
    "freut", "hilft", "half", "nimmt", "nahm", "kocht", "könnte", "würde", "hätte", "wäre",
    "fragt", "antwortet", "spricht", "redet", "erzählt", "meint", "nennt", "ruft", "wartet",
    "schaut", "trägt", "bringt", "holt", "sucht", "braucht", "kennt", "bekommt", "hört",
}
PLURAL_VERBS = {
    "sind", "waren", "haben", "hatten", "werden", "wurden", "können", "konnten", "wollen",
    "wollten", "müssen", "mussten", "sollen", "sollten", "dürfen", "durften", "mögen",
    "mochten", "möchten", "wissen", "wussten", "gehen", "gingen", "kommen", "kamen", "machen",
    "sagen", "sagten", "finden", "lieben", "leben", "wohnen", "arbeiten", "spielen", "lachen",
    "fahren", "sehen", "geben", "bleiben", "stehen", "sitzen", "laufen", "essen", "trinken",
    "lesen", "schreiben", "denken", "glauben", "fühlen", "freuen", "helfen", "nehmen", "kochen",
    "würden", "hätten", "wären", "fragen", "antworten", "sprechen", "reden", "erzählen", "meinen",
    "nennen", "rufen", "warten", "schauen", "tragen", "bringen", "holen", "suchen", "brauchen",
    "kennen", "bekommen", "hören",
}
SECOND_PLURAL_VERBS = {
    "seid", "wart", "habt", "hattet", "werdet", "wurdet", "könnt", "konntet", "wollt",
    "wolltet", "müsst", "musstet", "sollt", "solltet", "dürft", "durftet", "mögt", "wisst",
    "wusstet", "wärt", "würdet", "hättet",
}
#: verbs whose presence right after "sein" marks it as an infinitive ("sein kann")
_AFTER_INFINITIVE = {
    "kann", "könnte", "muss", "müsste", "soll", "sollte", "will", "wollte", "wird", "würde",
    "darf", "dürfte", "mag", "möchte", "können", "müssen", "sollen", "wollen", "werden",
    "würden", "dürfen", "lassen", "scheint", "schien",
}
#: prepositions that may open a relative clause after a comma (", mit denen", ", von deren")
PREPOSITIONS = {"an", "auf", "aus", "bei", "durch", "für", "gegen", "hinter", "in", "mit", "nach", "neben",
                "ohne", "seit", "über", "um", "unter", "von", "vor", "wegen", "zu", "zwischen"}
FRENCH_AFTER_EN = {"masse", "passant", "détail", "detail", "gros", "vogue", "bloc", "route",
                   "face", "suite", "garde", "miniature", "famille", "plein"}


@dataclass(frozen=True)
class Mention:
    """One counted pronoun: its group, the word as written and its character offset."""

    group: str
    form: str
    start: int


class PronounExtractor:
    """Finds the pronoun mentions of the given groups in German text."""

    def __init__(self, groups: list[PronounGroup]):
        self.groups = [g.key for g in groups if not g.name_only]
        self._owner = {form: g.key for g in groups for form in g.detect}
        self._homographs = {g.key: set(g.ambiguous) for g in groups}

    def mentions(self, text: str, *, at_sentence_start: bool = True, referent: str | None = None) -> list[Mention]:
        """All counted mentions in order. `at_sentence_start=False` for continuations of a
        prompt that stopped mid-sentence, so a capitalised first word reads as formal.
        `referent`: the group of the person the context introduced; its ambiguous forms
        then count where the syntax allows a pronoun (see the module docstring)."""
        homographs = self._homographs.get(referent, set())
        tokens = [(m.group(), m.start()) for m in _TOKEN.finditer(text)]
        found: list[Mention] = []
        sentence_start, plural_sentence = at_sentence_start, False
        for i, (word, start) in enumerate(tokens):
            if _SENTENCE_END.fullmatch(word):
                sentence_start, plural_sentence = True, False
                continue
            if word in _QUOTES or word == ":":  # direct speech may start a sentence
                sentence_start = True
                continue
            initial, sentence_start = sentence_start, False
            lower = word.lower()
            group = self._owner.get(lower)
            if lower in homographs and _pronoun_position(tokens, i):
                group = referent
            if group is None or (word.isupper() and len(word) > 1):
                continue
            before = tokens[i - 1][0].lower() if i > 0 else ""
            after = tokens[i + 1][0] if i + 1 < len(tokens) else ""
            if lower in FORMAL_HOMOGRAPHS and word[0].isupper() and not initial:
                continue
            if lower == "sie" and self._plural_sie(tokens, i, before, after.lower()):
                plural_sentence = True
                continue
            if lower == "ihr" and (after.lower() in SECOND_PLURAL_VERBS or before in SECOND_PLURAL_VERBS):
                continue
            if lower in IHR_POSSESSIVES and plural_sentence and (lower != "ihr" or after[:1].isupper()):
                continue
            if lower == "sein" and _infinitive_sein(before, after):
                continue
            if lower == "en" and after.lower() in FRENCH_AFTER_EN:
                continue
            found.append(Mention(group, word, start))
        return found

    def first_group(self, text: str, *, at_sentence_start: bool = True, referent: str | None = None) -> str | None:
        """The group of the first counted mention (the GIFI reference reads the first one)."""
        found = self.mentions(text, at_sentence_start=at_sentence_start, referent=referent)
        return found[0].group if found else None

    @staticmethod
    def _plural_sie(tokens, i: int, before: str, after: str) -> bool:
        if after in PLURAL_VERBS or before in PLURAL_VERBS:
            return True
        if after in SINGULAR_VERBS or before in SINGULAR_VERBS:
            return False
        for word, _ in tokens[i + 2:]:  # verb-final clauses: "weil sie müde sind"
            lower = word.lower()
            if lower in _CLAUSE_END or _SENTENCE_END.fullmatch(word):
                return False
            if lower in PLURAL_VERBS:
                return True
            if lower in SINGULAR_VERBS:
                return False
        return False


def _pronoun_position(tokens: list[tuple[str, int]], i: int) -> bool:
    """Whether an ambiguous form (denen, deren, dem) can be a personal or possessive
    pronoun here: not opening a relative clause, and "dem" not an article."""
    words = [w for w, _ in tokens]
    before = words[i - 1] if i > 0 else ""
    if before in _CLAUSE_END or (before.lower() in PREPOSITIONS and i > 1 and words[i - 2] in _CLAUSE_END):
        return False
    if words[i].lower() != "dem":
        return True
    after = words[i + 1] if i + 1 < len(words) else ""
    if not after[:1].isalpha():
        return True
    if after[0].isupper():  # "dem Rad"
        return False
    second = words[i + 2] if i + 2 < len(words) else ""
    return not (second[:1].isalpha() and second[0].isupper())  # "dem neuen Rad"


def _infinitive_sein(before: str, after: str) -> bool:
    return (before == "zu" or not after or not after[0].isalpha()
            or after.lower() in _AFTER_INFINITIVE)
