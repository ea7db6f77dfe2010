"""Which pronoun group a German text uses for a person: a rule-based extractor.

German pronouns are homographs of other words, so a plain word list would count
formal "Sie", plural "sie", "ihr" = you (plural) and "sein" = to be. The rules here
use capitalisation, sentence position and agreement with a neighbouring finite
verb; what stays undecidable without coreference is read as the singular person
(documented in docs/gifi.md):

- "Sie"/"Ihr..." capitalised inside a sentence: formal address, skipped.
- "sie" whose subject-verb agreement is plural: a plural verb right after it ("sie
  sind"), right before it with nothing, an adverb or a prepositional phrase before
  that verb ("Sind sie", "Gestern haben sie", "Im Park spielen sie"; any position before the
  verb that holds no plural subject: "Letzte Woche waren sie", "Den Hund lieben sie"), or the first
  verb of its clause plural ("weil sie müde sind"): plural or formal, skipped; it
  also marks the sentence as plural, so a later possessive "ihr(e)" + noun reads
  "their" and is skipped, while dative "ihr" still counts.
- "sie" beside a plural verb that agrees with another subject: one conjunct of a
  coordinated subject ("sie und ihr Mann sind", "er und sie sind"), or an object
  after a plural verb with a subject before it ("die Kinder mögen sie"), or in a
  verb-final clause after the subject ("weil die Kinder sie mögen"). The verb says
  nothing about this "sie"'s number, so it is read as the singular person and the
  mention is flagged `ambiguous` (the suite counts and reports those it scores).
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
    # simple past of the verbs above
    "gingen", "machten", "sagten", "fanden", "liebten", "lebten", "wohnten", "arbeiteten", "spielten", "lachten",
    "fuhren", "sahen", "gaben", "blieben", "standen", "saßen", "liefen", "aßen", "tranken", "lasen", "schrieben",
    "dachten", "glaubten", "fühlten", "halfen", "nahmen", "kochten", "fragten", "antworteten", "sprachen",
    "redeten", "erzählten", "meinten", "nannten", "riefen", "warteten", "schauten", "trugen", "brachten", "holten",
    "suchten", "brauchten", "kannten", "bekamen", "hörten",
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
#: conjunctions that coordinate two subjects ("sie und ihr Mann") or two clauses
CONJUNCTIONS = {"und", "oder", "sowie"}
CLAUSE_CONJUNCTIONS = CONJUNCTIONS | {"aber", "sondern", "denn", "doch"}
#: words that open a plural subject (nominative) in the position before the verb: a plural pronoun,
#: determiner, possessive or quantifier ("wir sehen sie", "die Kinder mögen sie", "alle lieben sie");
#: a singular or accusative phrase ("das Buch", "den Hund") cannot be the subject of a plural verb
PLURAL_SUBJECT_OPENERS = {
    "wir", "die", "diese", "jene", "alle", "beide", "viele", "einige", "manche", "mehrere", "meine", "deine",
    "seine", "unsere", "eure", "ihre", "keine", "zwei", "drei", "vier", "fünf",
}
#: words that can be or open a plural subject before a verb ("wir", "die Kinder", "alle")
SUBJECT_WORDS = {
    "wir", "ihr", "ich", "du", "er", "es", "man", "der", "die", "das", "diese", "dieser", "jene", "alle", "beide",
    "viele", "einige", "manche", "mehrere", "meine", "deine", "seine", "unsere", "eure", "ihre", "keine",
}

PLURAL, SINGULAR, AMBIGUOUS = "plural", "singular", "ambiguous"


@dataclass(frozen=True)
class Mention:
    """One counted pronoun: its group, the word as written and its character offset."""

    group: str
    form: str
    start: int
    #: a "sie" read as the singular person although a plural verb stands by it (see the module docstring)
    ambiguous: bool = False


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
            number = sie_number(tokens, i) if lower == "sie" else SINGULAR
            if number == PLURAL:
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
            found.append(Mention(group, word, start, ambiguous=number == AMBIGUOUS))
        return found

    def first_mention(self, text: str, *, at_sentence_start: bool = True, referent: str | None = None
                      ) -> Mention | None:
        """The first counted mention (the GIFI reference reads the first one), or None."""
        found = self.mentions(text, at_sentence_start=at_sentence_start, referent=referent)
        return found[0] if found else None

    def first_group(self, text: str, *, at_sentence_start: bool = True, referent: str | None = None) -> str | None:
        """The group of the first counted mention."""
        first = self.first_mention(text, at_sentence_start=at_sentence_start, referent=referent)
        return first.group if first else None


def sie_number(tokens: list[tuple[str, int]], i: int) -> str:
    """PLURAL when a plural finite verb agrees with the "sie" at `i` as its subject; AMBIGUOUS when
    a plural verb stands by it but agrees with another subject (sie coordinated with another
    person, or an object after the subject); SINGULAR otherwise (the module docstring has the rules)."""
    words = [w.lower() for w, _ in tokens]
    before = words[i - 1] if i > 0 else ""
    after = words[i + 1] if i + 1 < len(words) else ""
    start = _clause_start(tokens, i)
    if after in PLURAL_VERBS:
        return AMBIGUOUS if _coordinated(tokens, i, start) or _subject_between(tokens, start, i) else PLURAL
    if before in PLURAL_VERBS:
        return AMBIGUOUS if _coordinated(tokens, i, start) or _subject_before_verb(words, start, i - 1) else PLURAL
    if after in SINGULAR_VERBS or before in SINGULAR_VERBS:
        return SINGULAR
    for word in words[i + 2:]:  # verb-final clauses: "weil sie müde sind"
        if word in _CLAUSE_END or _SENTENCE_END.fullmatch(word) or word in _QUOTES:
            return SINGULAR
        if word in PLURAL_VERBS:
            return AMBIGUOUS if _coordinated(tokens, i, start) or _subject_between(tokens, start, i) else PLURAL
        if word in SINGULAR_VERBS:
            return SINGULAR
    return SINGULAR


def _clause_start(tokens: list[tuple[str, int]], i: int) -> int:
    """The index of the first token of the clause holding token `i` (after punctuation or a quote)."""
    for j in range(i - 1, -1, -1):
        word = tokens[j][0]
        if word in _CLAUSE_END or word in _QUOTES or _SENTENCE_END.fullmatch(word):
            return j + 1
    return 0


def _finite_verb(word: str) -> bool:
    return word in PLURAL_VERBS or word in SINGULAR_VERBS or word in SECOND_PLURAL_VERBS


def _coordinated(tokens: list[tuple[str, int]], i: int, start: int) -> bool:
    """Whether "sie" is one conjunct of a coordinated subject: "sie und ihr Mann", "er und sie"
    (not two clauses: "sie kamen und gingen", "die Kinder lachen und sie sind froh")."""
    words = [w.lower() for w, _ in tokens]
    if i + 2 < len(words) and words[i + 1] in CONJUNCTIONS and not _finite_verb(words[i + 2]):
        return True
    if i >= 2 and words[i - 1] in CONJUNCTIONS:
        left = tokens[i - 2][0]
        return (i - 2 >= start and left[:1].isalpha() and not _finite_verb(left.lower())
                and not any(_finite_verb(w) for w in words[start:i - 1]))
    return False


def _subject_between(tokens: list[tuple[str, int]], start: int, i: int) -> bool:
    """Whether a possible subject stands between the clause's start (or a conjunction that opens a
    new clause: "die Kinder lachen und sie sind froh") and "sie": a subject word or a noun ("weil
    die Kinder sie mögen"); then "sie" is the object of the clause's verb."""
    words = [w.lower() for w, _ in tokens]
    opener = max((j + 1 for j in range(start, i) if words[j] in CLAUSE_CONJUNCTIONS), default=start)
    return any(words[j] in SUBJECT_WORDS or (j > start and tokens[j][0][:1].isupper()) for j in range(opener, i))


def _subject_before_verb(words: list[str], start: int, verb: int) -> bool:
    """Whether the position before a verb that precedes "sie" holds a plural subject of that verb:
    it opens with a plural pronoun, determiner, possessive or quantifier ("die Kinder mögen sie",
    "wir sehen sie") or coordinates two subjects ("Kim und Alex mögen sie"). Anything else there
    leaves "sie" the verb's subject: nothing (a question, or after a subordinate clause: "...,
    haben sie"), an adverb ("gestern", "gemeinsam"), a time phrase ("letzte Woche", "jeden Tag"),
    a prepositional phrase ("im Park", "während der Pause") or an object ("den Hund", "das
    Buch": accusative or singular, neither agrees with a plural verb as its subject)."""
    field_ = words[start:verb]
    if not field_:
        return False
    first = field_[0]
    if first in CONJUNCTIONS:  # "... und mögen sie": the subject of the first clause carries over
        return not field_[1:] or _subject_before_verb(words, start + 1, verb)
    return first in PLURAL_SUBJECT_OPENERS or any(word in CONJUNCTIONS for word in field_[1:])


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
