"""Which pronoun group a German text uses for a person: a rule-based extractor on a tagger's morphology.

German pronouns are homographs of other words, so a plain word list would count
formal "Sie", plural "sie", "ihr" = you (plural) and "sein" = to be. The rules here
use capitalisation, sentence position and agreement with the finite verb, whose part of
speech and number come from HanTa's morphological analysis (`morphology`); what stays
undecidable is read as the singular person and, for "sie", flagged (docs/gifi.md):

- "Sie"/"Ihr..." capitalised inside a sentence: formal address, skipped.
- "sie" and the finite verb of its clause: the verb right after it ("sie besuchen"), right
  before it ("gestern besuchten sie"), earlier in its clause ("gestern haben die Kinder sie
  besucht") or, in a clause opened by a subordinating conjunction, the one at its end
  ("weil sie müde sind"). A plural verb makes "sie" plural or formal, skipped, unless another
  subject may agree with it (below); it also marks the sentence as plural, so a later
  possessive "ihr(e)" + noun reads "their" and is skipped, while dative "ihr" still counts.
  A singular verb makes "sie" singular (the person, or an object: "Kim mag sie").
- Another subject that may agree with a plural verb leaves the number of "sie" open: one
  conjunct of a coordinated subject ("sie und ihr Mann sind", "er und sie sind"), or a noun
  phrase outside a prepositional phrase that can be a nominative plural in the position
  before the verb ("die Kinder mögen sie", "wir sehen sie", "Kim und Alex mögen sie") or
  between the clause's start and "sie" ("weil die Kinder sie mögen"). A time phrase ("zwei
  Tage später", "viele Jahre", "die ganze Woche": its noun is a unit of time), an adverb
  ("früher oder später"), a prepositional phrase ("am Samstag und am Sonntag") or a noun phrase
  that cannot be a nominative plural ("den Hund", "das Buch") is no such subject. Such a "sie",
  and one whose clause has no finite verb, is read as the singular person and flagged
  `ambiguous` (the suite counts and reports those it scores).
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
from collections.abc import Sequence
from dataclasses import dataclass

from queerbias.suites.gifi.morphology import PLURAL, SINGULAR, Word, analyse, verb_number
from queerbias.suites.gifi.pronouns import PronounGroup

_TOKEN = re.compile(r"[^\W\d_]+|[.!?]+|[,;:–—()\"„“”»«]|\S", re.UNICODE)
_SENTENCE_END = re.compile(r"[.!?]+")
_CLAUSE_END = {",", ";", ":", "–", "—", "(", ")"}
_QUOTES = {'"', "„", "“", "”", "»", "«"}

FORMAL_HOMOGRAPHS = {"sie", "ihr", "ihre", "ihren", "ihrem", "ihrer", "ihres"}
IHR_POSSESSIVES = {"ihr", "ihre", "ihren", "ihrem", "ihrer", "ihres"}

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
#: lemmas (HanTa's lower-case stems) of nouns that measure time: a noun phrase of one in the accusative is an
#: adverbial ("zwei Tage später", "viele Jahre", "die ganze Woche", "jeden Abend"), never the subject
TIME_NOUNS = {
    "sekunde", "minute", "stunde", "tag", "woche", "monat", "jahr", "jahrzehnt", "jahrhundert", "morgen",
    "vormittag", "mittag", "nachmittag", "abend", "nacht", "wochenende", "frühling", "frühjahr", "sommer",
    "herbst", "winter", "weile", "zeit", "mal", "moment", "augenblick", "montag", "dienstag", "mittwoch",
    "donnerstag", "freitag", "samstag", "sonntag",
}
#: STTS tags of the words before a noun phrase's head: articles, determiners, possessives, numbers, attributive
#: adjectives (HanTa's "ADJ(A)")
_PHRASE_PARTS = {"ART", "PDAT", "PIAT", "PIDAT", "PPOSAT", "PWAT", "CARD", "ADJ(A)"}
#: parts of speech that head a noun phrase: nouns, names, personal, indefinite and demonstrative pronouns
_HEADS = {"NN", "NE", "PPER", "PIS", "PDS"}
_PRONOUN_HEADS = {"PPER", "PIS", "PDS"}
#: personal pronouns that can be a nominative plural
_PLURAL_PERSONAL = {"wir", "ihr", "sie"}

AMBIGUOUS = "ambiguous"


@dataclass(frozen=True)
class Mention:
    """One counted pronoun: its group, the word as written and its character offset."""

    group: str
    form: str
    start: int
    #: a "sie" read as the singular person although its number is open (see the module docstring)
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
        sentence = _Sentence(tokens)
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
            number = sie_number(*sentence.words_at(i)) if lower == "sie" else SINGULAR
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


class _Sentence:
    """The tagged words of the sentence around a token, each sentence tagged once and only when asked
    (the tagger runs on sentences holding a "sie", not on every continuation)."""

    def __init__(self, tokens: list[tuple[str, int]]):
        self._texts = [word for word, _ in tokens]
        self._tagged: dict[int, list[Word]] = {}

    def words_at(self, i: int) -> tuple[list[Word], int]:
        """The tagged words of the sentence holding token `i`, and the token's index among them."""
        first = max((j + 1 for j in range(i) if _SENTENCE_END.fullmatch(self._texts[j])), default=0)
        if first not in self._tagged:
            last = next((j for j in range(i, len(self._texts)) if _SENTENCE_END.fullmatch(self._texts[j])),
                        len(self._texts))
            self._tagged[first] = analyse(self._texts[first:last])
        return self._tagged[first], i - first


def sie_number(words: Sequence[Word], i: int) -> str:
    """PLURAL when the finite verb of its clause is plural and agrees with the "sie" at `i` as its
    subject; AMBIGUOUS when that verb is plural but another subject may agree with it, or the clause
    has no finite verb; SINGULAR when the verb is singular (the module docstring has the rules)."""
    sentence_clause, start = _clause_start(words, i)
    verb = _clause_verb(words, i, start)
    if verb is None:
        return AMBIGUOUS
    if verb_number(words[verb]) == SINGULAR:
        return SINGULAR
    if verb < i:
        # nothing before the verb of a coordinated clause: the first clause's subject carries over
        prefield = (sentence_clause, start - 1) if verb == start > sentence_clause else (start, verb)
        other = _plural_subject(words, *prefield) or _plural_subject(words, verb + 1, i)
    else:
        other = _plural_subject(words, start, i)
    return AMBIGUOUS if other or _coordinated(words, i, start) else PLURAL


def _clause_start(words: Sequence[Word], i: int) -> tuple[int, int]:
    """Where the clause holding word `i` begins: after punctuation or a quote, or at a subordinating
    conjunction ("weil", "dass"); and, second, after a coordinating conjunction that follows a verb
    of that clause ("die Kinder lachen und sie sind froh": a coordinated clause), else the same."""
    first = 0
    for j in range(i - 1, -1, -1):
        if words[j].text in _CLAUSE_END or words[j].text in _QUOTES or _SENTENCE_END.fullmatch(words[j].text):
            first = j + 1
            break
        if words[j].pos == "KOUS":
            first = j
            break
    for j in range(i - 1, first, -1):
        if words[j].pos == "KON" and any(w.finite or w.infinitive for w in words[first:j]):
            return first, j + 1
    return first, first


def _clause_verb(words: Sequence[Word], i: int, start: int) -> int | None:
    """The finite verb "sie" may be the subject of: right after it, right before it, the last one
    before it in its clause (a main clause with "sie" after its verb), or the first one after it in
    its clause (a verb-final clause). A clause without a word tagged finite takes a verb the tagger read
    as an infinitive, not after "zu", in the same places: a clause needs a finite verb, and at the end
    of a clause ("weil sie Ferien haben") the tagger takes the 1st/3rd person plural for the
    infinitive it looks like. None when the clause has neither."""
    end = next((j for j in range(i + 1, len(words)) if words[j].text in _CLAUSE_END or words[j].text in _QUOTES),
               len(words))

    def bare_infinitive(j: int) -> bool:
        return words[j].infinitive and not (j > 0 and words[j - 1].pos == "PTKZU")

    for is_verb in (lambda j: words[j].finite, bare_infinitive):
        if i + 1 < end and is_verb(i + 1):
            return i + 1
        if i > start and is_verb(i - 1):
            return i - 1
        earlier = [j for j in range(start, i) if is_verb(j)]
        if earlier:
            return earlier[-1]
        later = next((j for j in range(i + 1, end) if is_verb(j)), None)
        if later is not None:
            return later
    return None


def _plural_subject(words: Sequence[Word], lo: int, hi: int) -> bool:
    """Whether words[lo:hi] may hold a nominative plural subject: a noun phrase outside a prepositional
    phrase that can be a nominative plural, or two noun phrases coordinated ("Kim und Alex"); a
    conjunction alone stands for a subject outside the text ("... und mögen sie"). Time phrases are
    adverbials and do not count."""
    if hi - lo == 1 and words[lo].pos == "KON":
        return True
    phrases = [phrase for phrase in _noun_phrases(words, lo, hi) if phrase[-1].lemma not in TIME_NOUNS]
    coordinated = len(phrases) > 1 and any(w.pos == "KON" for w in words[lo:hi])
    return coordinated or any(_nominative_plural(phrase) for phrase in phrases)


def _noun_phrases(words: Sequence[Word], lo: int, hi: int) -> list[list[Word]]:
    """The noun phrases of words[lo:hi] that no preposition governs: the words before a head
    (`_PHRASE_PARTS`) and the head; a name after a noun or name joins its phrase ("Frau Berg")."""
    phrases, current, governed = [], [], False
    for k in range(lo, hi):
        word = words[k]
        if word.pos in ("APPR", "APPRART"):
            current, governed = [], True
        elif word.tag in _PHRASE_PARTS:
            current.append(word)
        elif word.pos in _HEADS:
            if word.pos == "NE" and not current and k > lo and words[k - 1].pos in ("NN", "NE"):
                if phrases and phrases[-1][-1] is words[k - 1]:
                    phrases[-1].append(word)
                continue
            if not governed:
                phrases.append([*current, word])
            current, governed = [], False
        else:
            current, governed = [], False
    return phrases


def _nominative_plural(phrase: list[Word]) -> bool:
    """Whether a noun phrase's form allows a nominative plural: a plural-capable personal pronoun
    ("wir"); an opening word in the nominative plural form, the definite article "die" or a
    determiner, possessive, quantifier or adjective in -e ("diese", "meine", "alle", "viele",
    "kleine") or a number above one; or a bare noun ("Kinder"). A bare name is one person, and
    "den", "das", "dem", "jeden", "ein..." cannot open a nominative plural."""
    first, head = phrase[0].text.lower(), phrase[-1]
    if head.pos == "PPER":
        return head.text.lower() in _PLURAL_PERSONAL
    if len(phrase) == 1:
        return head.pos == "NN" or (head.pos in _PRONOUN_HEADS and first.endswith("e"))
    if phrase[0].pos == "ART":
        return first == "die"
    if phrase[0].pos == "CARD":
        return not first.startswith("ein") and first != "1"
    return first.endswith("e")


def _coordinated(words: Sequence[Word], i: int, start: int) -> bool:
    """Whether "sie" is one conjunct of a coordinated subject: "sie und ihr Mann", "er und sie"
    (not two clauses: "sie kamen und gingen", "die Kinder lachen und sie sind froh")."""
    if i + 2 < len(words) and words[i + 1].pos == "KON" and not words[i + 2].finite:
        return True
    if i >= 2 and words[i - 1].pos == "KON":
        left = words[i - 2]
        return (i - 2 >= start and left.text[:1].isalpha() and not left.finite
                and not any(w.finite for w in words[start:i - 1]))
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
