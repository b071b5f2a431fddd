"""What the gate reads with part-of-speech tags (`providers.text.analysis.tag`): grammar that word lists
cannot see, and whether a post names anything a reader could check.

Like `coherence`, every check returns findings with a weight and a sentence that quotes where; none rewards a
template's furniture (hashtags, emoji, lists, stock calls to action). The tagger is a lexicon with context
rules, not a parser: each rule below asks for a shape garble makes and careful prose does not, and gives way
where the tags are ambiguous ("sort" and "plan" are nouns to it as often as verbs).
"""

from __future__ import annotations

import re

from toolhost.domains.quality.coherence import Finding, prose, sentences
from toolhost.providers.text import grammar
from toolhost.providers.text.analysis import NOUN_TAGS, Token, tag

FINITE_VERBS = frozenset({"VB", "VBP", "VBZ", "VBD"})
OBJECT_PRONOUNS = frozenset({"you", "us", "them", "him", "her", "me", "it"})
DETERMINERS = frozenset({"the", "a", "an"})
MULTIPLIERS = frozenset({"half", "twice", "all", "both", "double", "triple", "quadruple"})
# Verbs that take two objects side by side in good English ("give you a refund", "send your mum the link").
TWO_OBJECT_VERBS = frozenset(
    """
    give gives gave send sends sent show shows showed tell tells told offer offers offered bring brings brought
    buy buys bought make makes made get gets got hand hands handed lend lends lent pay pays paid teach teaches
    taught ask asks asked owe owes owed promise promises promised sell sells sold leave leaves left save saves
    saved cost costs find finds found cook cooks cooked bake bakes baked write writes wrote read reads pour
    pours poured email emails emailed text texts texted mail mails mailed wish wishes wished grant grants granted
    allow allows allowed earn earns earned win wins won charge charges charged serve serves served build builds
    built fix fixes fixed order orders ordered book books booked call calls called fetch fetches fetched throw
    throws threw pass passes passed award awards awarded deny denies denied spare spares spared feed feeds fed
    guarantee guarantees guaranteed do does did cut cuts pick picks picked play plays played sing sings sang
    name names named consider considers considered keep keeps kept wrap wraps wrapped bet bets refund refunds
    """.split()  # noqa: SIM905 - a word list reads better as words
)
# Words that open a time or measure phrase, which follows an object in good English ("sort donations every
# Tuesday", "give one tour a month").
TIME_OPENERS = frozenset({"every", "each", "this", "next", "last", "that", "all", "per"})
TIME_NOUNS = frozenset(
    """
    second seconds minute minutes hour hours day days week weeks weekend weekends month months year years
    morning mornings afternoon evening evenings night nights time times season monday tuesday wednesday
    thursday friday saturday sunday spring summer fall autumn winter dozen
    """.split()  # noqa: SIM905 - a word list reads better as words
)
# Nouns of filler, which talks in values and feelings instead of things a reader could check.
ABSTRACT_NOUNS = frozenset(
    """
    success successes journey journeys impact passion passions value values purpose difference differences
    dream dreams excellence growth inspiration creativity integrity commitment commitments future innovation
    innovations mission vision kindness soul greatness potential synergy synergies collaboration priority
    priorities needle stakeholders matters best magic possibility possibilities goals goal everything
    something anything nothing everyone someone anyone togetherness love hope hopes heart hearts care
    excitement game gamechanger change changes news level levels quality experience experiences solutions
    solution results leadership teamwork spirit energy vibes vibe moments moment life lives world thing things
    stuff opportunity opportunities version versions process mindset motivation zone gratitude wellness
    wellbeing positivity
    """.split()  # noqa: SIM905 - a word list reads better as words
)
# Abstract nouns, counted and as a share of all nouns, from which a post speaks in values, not things.
ABSTRACT_ENOUGH = 3
ABSTRACT_SHARE = 0.4


def _quote(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return f'"{text[:limit]}{"..." if len(text) > limit else ""}"'


def _noun_phrase_end(tokens: list[Token], start: int) -> int:
    """The index after a noun phrase that starts at `start` (determiner, modifiers, nouns), or `start` when
    none starts there; it ends on a noun."""
    index = start
    if index < len(tokens) and (tokens[index].tag in ("DT", "PRP$") or tokens[index].tag == "CD"):
        index += 1
    while index < len(tokens) and tokens[index].tag in ("JJ", "JJR", "JJS", "CD", "VBN"):
        index += 1
    end = index
    while end < len(tokens) and tokens[end].tag in NOUN_TAGS:
        end += 1
    return end if end > index else start


def _is_time_phrase(tokens: list[Token]) -> bool:
    return bool(tokens) and (tokens[0].lower in TIME_OPENERS or tokens[-1].lower in TIME_NOUNS or tokens[0].tag == "CD")


def _verb_follows(tokens: list[Token], index: int) -> bool:
    """Whether a verb, modal or relative word stands at `index`: the phrase before it opens a clause."""
    return index < len(tokens) and (
        tokens[index].tag in FINITE_VERBS | {"MD"} or tokens[index].lower in ("who", "that", "which")
    )


def double_object(sentence: str) -> list[Finding]:
    """A verb followed by a noun or pronoun, then straight away by a second noun phrase where the verb takes
    only one ("pressure you our security team", "cover physio the referral"): a phrase was dropped between
    them."""
    tokens = tag(sentence)
    for index, verb in enumerate(tokens[:-2]):
        # after "to" the tagger often reads a verb as a noun ("to pressure you")
        after_to = index > 0 and tokens[index - 1].tag == "TO" and verb.tag in ("NN", "VB")
        if not (verb.tag in FINITE_VERBS or after_to) or verb.lower in TWO_OBJECT_VERBS or not verb.text.isalpha():
            continue
        following = tokens[index + 1]
        if following.lower in OBJECT_PRONOUNS:
            first_end = index + 2
        else:
            first_end = _noun_phrase_end(tokens, index + 1)
            first = tokens[index + 1 : first_end]
            gerund = any(token.lower.endswith("ing") for token in first)
            # "took half the guesswork", "paid twice the price": a multiplier, not a first object
            multiplier = bool(first) and first[0].lower in MULTIPLIERS
            if not first or gerund or multiplier or any(token.tag in ("DT", "CD", "PRP$") for token in first[:1]):
                continue  # only a bare noun ("physio") leaves no room for a second object; "the X the Y" is rarer
        if first_end >= len(tokens) or tokens[first_end].lower not in DETERMINERS | {"our", "your", "their"}:
            continue
        second_end = _noun_phrase_end(tokens, first_end)
        second = tokens[first_end:second_end]
        if second_end == first_end or _is_time_phrase(second) or _verb_follows(tokens, second_end):
            continue  # "removes plaque your toothbrush can't reach": the second phrase starts a clause
        stitched = sentence[verb.start : second[-1].end]
        return [
            Finding(
                "stitched",
                f"a verb has two objects and no word between them ({_quote(stitched)} in {_quote(sentence, 90)})",
                2.5,
            )
        ]
    return []


def missing_verb(sentence: str) -> list[Finding]:
    """A sentence's subject followed straight by a second noun phrase and no verb where its verb should stand
    ("Their team the leftover stock every Friday"). "The bread the kids love" has its verb after the second
    phrase and is left alone."""
    tokens = tag(sentence)
    if len(tokens) < 4 or tokens[0].tag not in ("PRP$", "DT") or tokens[0].lower in TIME_OPENERS:
        return []
    subject_end = _noun_phrase_end(tokens, 0)
    subject = tokens[:subject_end]
    if subject_end == 0 or _is_time_phrase(subject) or subject_end >= len(tokens):
        return []
    # "A daily list hides the big rocks": the tagger took the verb for a second noun of the subject
    nouns = [token for token in subject if token.tag in NOUN_TAGS]
    if any(reading != "VBG" for token in nouns[1:] for _, reading in grammar.verb_readings(token.text)):
        return []
    if tokens[subject_end].lower not in DETERMINERS:
        return []
    second_end = _noun_phrase_end(tokens, subject_end)
    if second_end == subject_end:
        return []
    if _verb_follows(tokens, second_end):
        return []
    phrase = sentence[: tokens[second_end - 1].end]
    return [
        Finding(
            "verbless",
            f"a subject has no verb, another noun phrase follows it ({_quote(phrase)} in {_quote(sentence, 90)})",
            2.5,
        )
    ]


POSSESSIVE_DETERMINERS = frozenset({"my", "our", "your", "their", "its"})
ARTICLES = frozenset({"the", "a", "an"})
# Words that never open the noun phrase an article or a possessive announces ("our with", "the of").
NOT_AFTER_DETERMINER = frozenset(
    """
    of with for from at by into onto in on and or but nor we they i he she you it to is are was were the a
    an our your their my its this these those
    """.split()  # noqa: SIM905 - a word list reads better as words
)
# Verbs after which a new clause starts without "that" ("we hope we see you", "I think they know"): a
# subject pronoun after them is in its place.
CLAUSE_TAKING_VERBS = frozenset(
    """
    think thinks thought know knows knew hope hopes hoped say says said feel feels felt guess guessed
    believe believes believed bet bets wish wishes wished promise promises promised mean means meant figure
    figured find finds found realise realised realize realized learn learned learnt notice noticed see sees
    saw hear hears heard show shows showed suppose supposed remember remembered forget forgot agree agreed
    decide decided imagine imagined guarantee guaranteed ensure ensured insist insisted expect expected
    admit admitted doubt assume assumed understand understood reckon reckoned swear swore pretend pretended
    trust trusted prove proved tell tells told ask asks asked wonder wondered care cared mind minded like
    liked love loved seem seems seemed appear appears appeared
    """.split()  # noqa: SIM905 - a word list reads better as words
)
SUBJECT_PRONOUNS = frozenset({"we", "they", "he", "she", "i"})
LEXICAL_VERB_TAGS = frozenset({"VB", "VBD", "VBZ", "VBP"})
AUXILIARY_WORDS = frozenset(
    """
    be is are was were am been being do does did have has had will would can could should must may might shall
    let
    """.split()  # noqa: SIM905 - a word list reads better as words
)
# Nouns and adjectives an infinitive follows ("a willingness to help", "able to come"): "to" after them
# opens a verb, never "the" or "our" ("a willingness to the bottle feeding").
INFINITIVE_TAKERS = frozenset(
    """
    willingness ability inability eagerness readiness effort efforts attempt attempts decision desire
    tendency urge courage able unable willing unwilling eager likely unlikely ready happy excited keen
    """.split()  # noqa: SIM905 - a word list reads better as words
)
# Modals the tagger cannot read as nouns ("ca" is "can't" split): an article before them is garble.
NEVER_NOUN_MODALS = frozenset({"could", "would", "should", "might", "shall", "ca", "wo"})
# Plural-looking nouns "a" stands before in good English ("a series", "a means").
SINGULAR_IN_S = frozenset({"series", "means", "species", "news", "thanks", "lens", "bus", "gas", "plus", "bonus"})
# Function words that, capitalised between two lower-case words, are no name's part but a shuffled
# sentence's opening ("in Most two days", "on the Six copies shelf").
FUNCTION_WORDS = frozenset(
    """
    the a an our your their my his its this these those most many some every each all both with without and
    or but for from of in on at by to into we they you he she it two three four five six seven eight nine ten
    """.split()  # noqa: SIM905 - a word list reads better as words
)
# Words a sentence never ends on before its end mark ("...through the research experience program. the")
NEVER_LAST = frozenset({"the", "a", "an", "our", "your", "their", "my", "and", "or", "every", "its"})
# Words the tagger tags IN that open a clause, after which "you" is a subject ("if you lack").
SUBORDINATORS = frozenset(
    """
    if because while when whenever as than since though although unless until whether that so once before
    after like whereas where
    """.split()  # noqa: SIM905 - a word list reads better as words
)
BE_FORMS = frozenset({"is", "are", "was", "were", "am"})
CLAUSE_BREAKS = frozenset({",", ";", ":", ".", "!", "?", "-", "(", ")", "and", "or", "but"})


def scrambled_order(sentence: str) -> list[Finding]:
    """Words in an order no writer types: a possessive or an article with no noun after it ("roast our with
    every", "the of"), a subject pronoun where the verb's object belongs ("Call we today"), "you" where
    "your" belongs after a preposition ("a quote on you boiler"), and a relative clause with no verb ("the
    customers who the loaf every day"). Machine garble makes these; careful prose does not."""
    tokens = tag(sentence)
    words = [token for token in tokens if token.text[:1].isalnum()]
    if len(words) >= 3 and words[-1].lower in NEVER_LAST and tokens[-1].text in (".", "!", "?"):
        return [_scrambled(sentence, words[-2], tokens[-1], "the sentence ends on a word that opens a phrase")]
    for index, word in enumerate(words[1:-1], start=1):
        if (
            word.text[:1].isupper()
            and word.text[1:].islower()
            and word.lower in FUNCTION_WORDS
            and words[index - 1].text.islower()
            and words[index + 1].text.islower()
            and word.start > 0
            and sentence[word.start - 1] == " "
            and sentence[words[index - 1].end : word.start] == " "
        ):
            return [_scrambled(sentence, words[index - 1], words[index + 1], "a capital stands mid-sentence")]
    for index, token in enumerate(tokens[:-1]):
        following = tokens[index + 1]
        lowered = token.lower
        # Only "a pounds of" is surely garble: "a sports club", "at a crossroads.", "a pros and cons list" and
        # "a kudos to" are good English with a plural-looking word after "a".
        after = tokens[index + 2] if index + 2 < len(tokens) else None
        if (
            lowered in ("a", "an")
            and following.tag == "NNS"
            and following.lower.endswith("s")
            and following.lower not in SINGULAR_IN_S
            and after is not None
            and after.lower == "of"
        ):
            return [_scrambled(sentence, token, following, '"a" stands before a plural')]
        if lowered in ARTICLES and following.lower in NEVER_NOUN_MODALS:
            return [_scrambled(sentence, token, following, "a determiner has no noun after it")]
        if lowered == "every" and following.lower in SUBJECT_PRONOUNS | ARTICLES | POSSESSIVE_DETERMINERS | {"you"}:
            return [_scrambled(sentence, token, following, "a determiner has no noun after it")]
        capital_a = token.text == "A" and (index > 0 or following.lower == "to")
        if (lowered in POSSESSIVE_DETERMINERS or lowered in ARTICLES and not capital_a) and (
            following.lower in NOT_AFTER_DETERMINER
            and following.text[:1].islower()  # "the OR pattern": a word in capitals is a name
            and not (
                following.lower in ("and", "or")
                and index + 2 < len(tokens)
                and tokens[index + 2].lower in POSSESSIVE_DETERMINERS
            )
        ):
            return [_scrambled(sentence, token, following, "a determiner has no noun after it")]
        if (
            # after its subject ("we will the"); a question puts the subject after the modal ("How can this help?")
            token.tag == "MD"
            and index > 0
            and tokens[index - 1].tag in ("PRP", "NN", "NNS", "NNP")
            and not sentence.rstrip().endswith("?")
            and following.tag in ("DT", "PRP$")
            and following.lower not in ("that", "all", "both", "each", "either", "neither", "no")
            and not grammar.verb_readings(following.lower)  # the tagger reads "like" as a preposition
        ):
            return [_scrambled(sentence, token, following, "a modal has no verb after it")]
        if (
            lowered == "to"
            and index > 0
            and tokens[index - 1].lower in INFINITIVE_TAKERS
            and following.lower in ARTICLES | POSSESSIVE_DETERMINERS
        ):
            return [_scrambled(sentence, tokens[index - 1], following, '"to" needs a verb here')]
        if lowered in BE_FORMS and following.lower in BE_FORMS and following.lower != lowered:
            return [_scrambled(sentence, token, following, "two verbs stand where one belongs")]
        # The tagger reads many nouns as verbs ("the fix we shipped"): only an imperative opening, a past or
        # third-person form, or a verb after "to" or a modal is surely a verb here.
        surely_verb = (
            token.tag in ("VBD", "VBZ") or token.tag == "VB" and (index == 0 or tokens[index - 1].tag in ("TO", "MD"))
        )
        # A pronoun with a verb of its own opens a clause: "the calls we do get", "the loaves they bake".
        pronoun_has_verb = index + 2 < len(tokens) and tokens[index + 2].tag in ("VB", "VBP", "VBD", "VBZ", "MD")
        if (
            surely_verb
            and lowered not in AUXILIARY_WORDS
            and lowered not in CLAUSE_TAKING_VERBS
            and following.lower in SUBJECT_PRONOUNS
            and following.text != "I"
            and not pronoun_has_verb
        ):
            return [_scrambled(sentence, token, following, "a subject pronoun stands where the verb's object belongs")]
        if (
            token.tag == "IN"
            and token.lower not in SUBORDINATORS
            and following.lower == "you"
            and index + 2 < len(tokens)
            and tokens[index + 2].tag == "NN"
            and tokens[index + 2].text.isalpha()
            and tokens[index + 2].lower not in TIME_NOUNS | {"guys", "all", "lot", "today", "tonight", "tomorrow"}
            and not grammar.verb_readings(tokens[index + 2].lower)
        ):
            return [_scrambled(sentence, following, tokens[index + 2], '"you" stands where "your" belongs')]
        if token.tag in ("WP", "WDT") and lowered in ("who", "which") and index > 0:
            clause: list[Token] = []
            for later in tokens[index + 1 :]:
                if later.lower in CLAUSE_BREAKS:
                    break
                clause.append(later)
            # A word the tagger took for a noun may be the verb ("who like each other", "which works out"),
            # unless an article or a possessive stands before it.
            verb_like = [
                later
                for position, later in enumerate(clause)
                if later.tag in VERB_OR_MODAL
                # "which defaults to", "which default to": right after "which", a noun reading is the verb's
                or position == 0
                and later.tag in ("NN", "NNS")
                or grammar.verb_readings(later.lower)
                and (position == 0 or clause[position - 1].tag not in ("DT", "PRP$"))
            ]
            if len(clause) >= 2 and not verb_like:
                return [_scrambled(sentence, token, clause[-1], "a relative clause has no verb")]
    return []


def _scrambled(sentence: str, first: Token, last: Token, label: str) -> Finding:
    return Finding("stitched", f"{label} ({_quote(sentence[first.start : last.end])} in {_quote(sentence, 90)})", 2.5)


def vagueness(caption: str, brand_name: str = "") -> list[Finding]:
    """A post that names nothing a reader could check, or talks in values and feelings ("impact is a team
    sport", "Creativity lives here"). A short post that names a thing ("Sunday loaves, still warm.") is not
    vague: shortness is not the defect, emptiness is."""
    name_words = {word.lower() for word in re.findall(r"\w+", brand_name)}
    tagged_sentences = [tag(sentence) for sentence in sentences(prose(caption))]
    tokens = [token for sentence in tagged_sentences for token in sentence]
    words = [token for token in tokens if token.text.isalpha()]
    # A capital opening a sentence makes no name ("Dream big.", "Big news"): the tagger calls it one, so it is
    # read again in lower case.
    openers = {id(sentence[0]) for sentence in tagged_sentences if sentence}
    nouns = [
        token
        for token in words
        if token.tag in ("NN", "NNS")
        or (id(token) in openers and token.tag in ("NNP", "NNPS") and tag(token.lower)[0].tag in ("NN", "NNS"))
    ]
    abstract = [token for token in nouns if token.lower in ABSTRACT_NOUNS]
    names = [
        token
        for token in words
        if token.tag in ("NNP", "NNPS") and id(token) not in openers and token.lower not in name_words | ABSTRACT_NOUNS
    ]
    figures = [token for token in tokens if token.tag == "CD" or any(character.isdigit() for character in token.text)]
    concrete = len(nouns) - len(abstract)
    if concrete + len(names) + len(figures) <= 1 and len(words) >= 5:
        return [Finding("vague", "it names nothing a reader could check: no thing, name or figure", 3)]
    if len(abstract) >= ABSTRACT_ENOUGH and len(abstract) >= ABSTRACT_SHARE * len(nouns):
        listed = ", ".join(dict.fromkeys(token.lower for token in abstract[:4]))
        return [Finding("vague", f"it talks in values, not things a reader could check ({listed})", 2.5)]
    return []


# Words that open a clause which needs its own verb ("... where most of our adult patients").
CLAUSE_OPENERS = frozenset(
    {"where", "when", "which", "who", "whose", "because", "if", "while", "until", "unless", "although", "whereas"}
)
CUT_AFTER_NOUN = frozenset({"of", "with", "from", "at", "into", "onto", "between", "than", "including", "the", "a"})
VERB_OR_MODAL = frozenset({"VB", "VBP", "VBZ", "VBD", "VBN", "VBG", "MD"})
# An end mark, or an emoji or hashtag standing where one would be: the post ended on purpose.
CLOSED_ENDING = re.compile(r"[.!?)\"'\u201d\u2019;\u2026]\s*$|[\U0001f300-\U0001faff\u2600-\u27bf\ufe0f#]")


def open_clause_ending(caption: str) -> list[Finding]:
    """A post without an end mark whose last clause was opened and never given its verb ("Flossing removes
    plaque your toothbrush can't reach, especially between the back molars where most of our adult
    patients"): it was cut off. "...where it belongs" has its verb and is left alone."""
    text = prose(caption).rstrip()
    if not text or CLOSED_ENDING.search(text[-3:]) or text[-1].isdigit():
        return []
    parts = sentences(text)
    if not parts:
        return []
    tokens = tag(parts[-1])
    # "...a bag of", "...ready in time for": a noun then a preposition with nothing after it
    if (
        len(tokens) >= 3
        and tokens[-1].lower in CUT_AFTER_NOUN
        and tokens[-2].tag in ("NN", "NNS", "CD", "DT")
        and tokens[-3].tag not in ("WP", "WDT", "WRB")
    ):
        return [Finding("truncated", f"it stops on a preposition with nothing after it ({_quote(parts[-1][-40:])})", 3)]
    openers = [index for index, token in enumerate(tokens) if token.lower in CLAUSE_OPENERS]
    if not openers or openers[-1] == len(tokens) - 1:
        return []  # a post ending on the opener itself is the plain truncation check's
    clause = tokens[openers[-1] + 1 :]
    if len(clause) < 2 or any(token.tag in VERB_OR_MODAL for token in clause):
        return []
    return [
        Finding("truncated", f"it stops inside a clause that never reaches its verb ({_quote(parts[-1][-60:])})", 3)
    ]


def read(caption: str) -> list[Finding]:
    """The tagger's grammar findings about a caption: the first broken sentence of each kind."""
    found: list[Finding] = open_clause_ending(caption)
    for check in (double_object, missing_verb, scrambled_order):
        for sentence in sentences(prose(caption)):
            findings = check(sentence)
            if findings:
                found += findings
                break
    return found
