"""Enough English grammar to write whole sentences and to notice broken ones: word classes and verb forms.

The closed classes (determiners, pronouns, prepositions, auxiliaries...) are complete lists; open-class
words are known by a list of about a thousand common verbs, their irregular forms and the regular
inflections made from them, with suffixes as the fallback. It is a lexicon, not a statistical tagger:
the built-in writer uses it to tell a clause from a noun phrase and to inflect verbs, the quality gate to
find sentences without a finite verb and subjects that disagree with their verb. A tagger trained on a
treebank would read more, but every one on offer loads a model from outside the package registry or
tens of megabytes at the first call (see `analysis.py` for the figures of the lemmatizers tried).

Kept as one module past 500 lines on purpose: half of it is the lexicon itself (the closed classes, the verbs and
their irregular forms), kept beside the few functions that read it.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Literal


def word_set(words: str) -> frozenset[str]:
    """A set of words written as one space-separated string (word lists read better as words)."""
    return frozenset(words.split())


DETERMINERS = word_set(
    """
        a an the this that these those my our your their his her its every each some any no another either
        neither all both few many several most much such what which whose
        """
)
SINGULAR_DETERMINERS = word_set("a an this that every each another either neither one")
PLURAL_DETERMINERS = word_set(
    "these those many several few both two three four five six seven eight nine ten twelve twenty"
)
POSSESSIVES = word_set("my our your their his her its")
SUBJECT_PRONOUNS = word_set("i we you they he she it")
OBJECT_PRONOUNS = word_set("me us you them him her it")
SINGULAR_SUBJECTS = word_set("he she it this that everyone everybody someone somebody nobody nothing")
PLURAL_SUBJECTS = word_set("we they these those")
PREPOSITIONS = word_set(
    """
        about above across after against along among around at before behind below beneath beside between
        beyond by despite down during except for from in inside into like near of off on onto out outside
        over past per since through throughout till toward towards under underneath until unlike up upon via
        with within without
        """
)
COORDINATORS = word_set("and but or nor so yet")
SUBORDINATORS = word_set(
    """
        because although though while whereas if unless whether since once until when whenever where
        wherever as than that
        """
)
WH_WORDS = word_set("what why how when where who whom which whose")
MODALS = word_set("can could may might must shall should will would")
BE_FORMS = {"am": "1s", "is": "3s", "are": "pl", "was": "past_s", "were": "past_pl", "be": "base", "been": "pp"}
HAVE_FORMS = {"have": "pl", "has": "3s", "had": "past"}
DO_FORMS = {"do": "pl", "does": "3s", "did": "past"}
CONTRACTED_FINITE = ("'s", "'re", "'m", "'ve", "'ll", "'d", "n't")
# Words that end a sentence only when it was cut: articles, prepositions, conjunctions, auxiliaries.
# Words a sentence is never left on unless it was cut: articles, possessives, conjunctions, "to", subject
# pronouns, and the prepositions that are not commonly left at the end ("what we are proud of" is English).
DANGLING = (
    (DETERMINERS - word_set("that this these those all both few many several most much some any no either neither"))
    | POSSESSIVES
    | COORDINATORS - {"so", "yet"}
    | word_set("to because although though whereas unless whether we i they he she")
    | PREPOSITIONS
    - word_set("in on up down out off over by about past since through of to for at from with like inside outside")
)

# Base forms of common verbs. Irregular past and participle forms are listed below; the rest inflect by rule.
_VERBS = """
accept access achieve act adapt add adjust admit adopt advise afford agree aim allow answer apologise
apologize appear apply appreciate approach approve argue arrange arrive ask assess assign assume attach
attack attend attract audit automate avoid bake balance ban base batch bear beat become begin believe belong
bend benefit bet bind bite blend block blow boil book boost borrow bother bottle bounce brainstorm break breathe
brew bring broadcast browse brush build burn burst buy calculate call calm campaign cancel capture care carry
carve cast catch cause celebrate challenge change charge chase chat check cheer chew choose chop claim clarify
clean clear click climb clip close coach code collaborate collect combine come comment commit communicate
compare compete complain complete compose compost concentrate confirm confuse connect consider consist
contact contain continue contribute control convert convince cook cool cooperate copy cost count cover crack
craft crash create cross crush cry cup cure cut cycle dare deal debug decide declare decline decorate deepen
defend define delay delegate delete deliver demand depend deploy describe deserve design desire destroy
detect determine develop die dig dip direct disagree disappear discover discuss dislike dispatch display
dive divide document donate double doubt download draft drag drain draw dream dress drink drip drive drop dry
dust earn eat edit educate email embrace emerge employ enable encourage end enjoy ensure enter equip escape
establish estimate evaluate examine exceed exchange exist expand expect experiment explain explore export
expose express extend face fade fail fall farm fear feature feed feel ferment fetch fight figure file fill
film filter find finish fire fit fix flag flip float flood flow fly fold follow forecast forget forgive form
forward found freeze frost fry fund gain gather generate get give glaze go grab grade graduate grant greet
grind grip grow guarantee guess guide handle hang happen harvest hate head heal hear heat help hide highlight
hike hire hit hold hope host hurt identify ignore imagine impact implement import improve include increase
influence inform injure innovate insist inspect inspire install integrate intend interview introduce invent
invest investigate invite invoice involve iron issue join joke judge jump keep kick kill knead knock know label
land last laugh launch lay lead lean learn leave lend let level lie lift light like limit line link list listen
live load loan lock log look lose love lower maintain make manage map march mark market master match matter
mean measure meet melt mention merge mill mind miss mix model monitor motivate move multiply need negotiate
nominate note notice notify observe obtain occur offer open operate order organise organize outline overcome
owe own pack paint park participate pass paste patch pause pay perform permit persuade pick picture pilot
place plan plant play please plug point polish pop post pour practise practice praise pray predict prefer
prepare present preserve press pretend prevent price print prioritise prioritize process produce program
promise promote proofread protect prove provide publish pull pump punch purchase push put qualify question
queue quit quote race rain raise rank rate reach react read realise realize rebuild receive recognise recognize
recommend record recover recruit recycle reduce refer reflect refresh refund refuse register regret reject
relax release rely remain remember remind remove renew rent reorder repair repeat replace reply report
represent request require research reserve reset resolve respect respond rest restart restore result retire
return reuse reveal review revise reward ride ring rinse rise risk roast roll run rush sail save say scale scan
schedule score scratch screen scroll search season seat see seek select sell send sense separate serve set
settle shape share shave shed shift shine ship shock shoot shop shout show shower shrink shut sign simplify
sing sink sip sit size sketch ski skip sleep slice slide slip slow smell smile snap sneeze solve sort sound
source speak specialise specialize spell spend spill spin split spoil sponsor spot spread sprinkle squeeze
stack staff stand star start state stay steam steep step stick sting stir stock stop store stream stretch strike
structure struggle study submit subscribe succeed suffer suggest suit summarise summarize supply support
suppose surprise survive suspect swap sweep swim switch sync tackle take talk tap taste teach tear tell tend
test thank think thrive throw tick tidy tie time tip toast top total touch tour track trade train transfer
transform translate travel treat trim trust try tune turn twist type understand unlock update upgrade upload
urge use vary verify visit volunteer vote wait wake walk want warm warn wash waste watch water wave wear weigh
welcome whisk win wipe wish wonder work worry wrap write yield zip
message text phone pin tag sample swing
"""

# base: (past, past participle)
IRREGULAR: dict[str, tuple[str, str]] = {
    "arise": ("arose", "arisen"),
    "be": ("was", "been"),
    "bear": ("bore", "borne"),
    "beat": ("beat", "beaten"),
    "become": ("became", "become"),
    "begin": ("began", "begun"),
    "bend": ("bent", "bent"),
    "bet": ("bet", "bet"),
    "bind": ("bound", "bound"),
    "bite": ("bit", "bitten"),
    "blow": ("blew", "blown"),
    "break": ("broke", "broken"),
    "bring": ("brought", "brought"),
    "broadcast": ("broadcast", "broadcast"),
    "build": ("built", "built"),
    "burn": ("burnt", "burnt"),
    "burst": ("burst", "burst"),
    "buy": ("bought", "bought"),
    "cast": ("cast", "cast"),
    "catch": ("caught", "caught"),
    "choose": ("chose", "chosen"),
    "come": ("came", "come"),
    "cost": ("cost", "cost"),
    "cut": ("cut", "cut"),
    "deal": ("dealt", "dealt"),
    "dig": ("dug", "dug"),
    "do": ("did", "done"),
    "draw": ("drew", "drawn"),
    "dream": ("dreamt", "dreamt"),
    "drink": ("drank", "drunk"),
    "drive": ("drove", "driven"),
    "eat": ("ate", "eaten"),
    "fall": ("fell", "fallen"),
    "feed": ("fed", "fed"),
    "feel": ("felt", "felt"),
    "fight": ("fought", "fought"),
    "find": ("found", "found"),
    "fly": ("flew", "flown"),
    "forecast": ("forecast", "forecast"),
    "forget": ("forgot", "forgotten"),
    "forgive": ("forgave", "forgiven"),
    "freeze": ("froze", "frozen"),
    "get": ("got", "got"),
    "give": ("gave", "given"),
    "go": ("went", "gone"),
    "grind": ("ground", "ground"),
    "grow": ("grew", "grown"),
    "hang": ("hung", "hung"),
    "have": ("had", "had"),
    "hear": ("heard", "heard"),
    "hide": ("hid", "hidden"),
    "hit": ("hit", "hit"),
    "hold": ("held", "held"),
    "hurt": ("hurt", "hurt"),
    "keep": ("kept", "kept"),
    "know": ("knew", "known"),
    "lay": ("laid", "laid"),
    "lead": ("led", "led"),
    "lean": ("leant", "leant"),
    "learn": ("learnt", "learnt"),
    "leave": ("left", "left"),
    "lend": ("lent", "lent"),
    "let": ("let", "let"),
    "lie": ("lay", "lain"),
    "light": ("lit", "lit"),
    "lose": ("lost", "lost"),
    "make": ("made", "made"),
    "mean": ("meant", "meant"),
    "meet": ("met", "met"),
    "overcome": ("overcame", "overcome"),
    "pay": ("paid", "paid"),
    "put": ("put", "put"),
    "quit": ("quit", "quit"),
    "read": ("read", "read"),
    "rebuild": ("rebuilt", "rebuilt"),
    "reset": ("reset", "reset"),
    "ride": ("rode", "ridden"),
    "ring": ("rang", "rung"),
    "rise": ("rose", "risen"),
    "run": ("ran", "run"),
    "say": ("said", "said"),
    "see": ("saw", "seen"),
    "seek": ("sought", "sought"),
    "sell": ("sold", "sold"),
    "send": ("sent", "sent"),
    "set": ("set", "set"),
    "shake": ("shook", "shaken"),
    "shed": ("shed", "shed"),
    "shine": ("shone", "shone"),
    "shoot": ("shot", "shot"),
    "show": ("showed", "shown"),
    "shrink": ("shrank", "shrunk"),
    "shut": ("shut", "shut"),
    "sing": ("sang", "sung"),
    "sink": ("sank", "sunk"),
    "sit": ("sat", "sat"),
    "sleep": ("slept", "slept"),
    "slide": ("slid", "slid"),
    "smell": ("smelt", "smelt"),
    "speak": ("spoke", "spoken"),
    "spell": ("spelt", "spelt"),
    "spend": ("spent", "spent"),
    "spill": ("spilt", "spilt"),
    "spin": ("spun", "spun"),
    "split": ("split", "split"),
    "spoil": ("spoilt", "spoilt"),
    "spread": ("spread", "spread"),
    "stand": ("stood", "stood"),
    "steal": ("stole", "stolen"),
    "stick": ("stuck", "stuck"),
    "strike": ("struck", "struck"),
    "sweep": ("swept", "swept"),
    "swim": ("swam", "swum"),
    "take": ("took", "taken"),
    "teach": ("taught", "taught"),
    "tear": ("tore", "torn"),
    "tell": ("told", "told"),
    "think": ("thought", "thought"),
    "throw": ("threw", "thrown"),
    "understand": ("understood", "understood"),
    "upset": ("upset", "upset"),
    "wake": ("woke", "woken"),
    "wear": ("wore", "worn"),
    "win": ("won", "won"),
    "write": ("wrote", "written"),
}
# Verbs that are far more often nouns in posts ("our plans", "a review"): they count as verbs only where a
# subject or an auxiliary stands before them.
NOUN_LIKE_VERBS = word_set(
    """
    access audit balance base batch benefit block book brew budget call care cause challenge change charge chat
    check claim close coach code comment contact control cook cost count cover crack craft cup cure cut cycle
    deal delay demand design display document double dream dress drink drive drop dust edit email end estimate
    exchange experiment export face fall farm fear feature figure file fill film filter finish fire fit flag
    float flood flow fold form forward frost fund gain glaze grade grant guarantee guess guide harvest head help
    hike hit hold hope host impact import increase influence interview invoice iron issue joke judge jump kick
    label land laugh lead level lie lift light like limit line link list load loan lock log look love map march
    mark market master match matter measure mill mind mix model monitor move need note notice offer order outline
    pack paint park pass paste patch pause pay pick picture pilot place plan plant play plug point polish pop post
    practice praise press price print process produce program promise question queue quote race rain rank rate
    reach record refund regret release rent repair repeat reply report request research reserve reset rest
    result return review reward ride ring rise risk roast roll run rush sail save scale scan schedule score
    scratch screen scroll search season seat sense set shape share shift ship shock shop shot shower show sign
    size sketch ski skip sleep slice slide slip smell smile snap sort sound source spell spin split spot spread
    stack staff stand star start state stay steam step stick stock stop store stream stretch strike structure
    study suit supply support surprise swap switch tap taste tear test thank tick tie time tip toast top total
    touch tour track trade train transfer travel treat trim trust try tune turn twist type update upgrade upload
    use visit volunteer vote wait walk want warm wash waste watch water wave wear welcome win wish wonder work
    worry wrap yield zip bake lose
    """
)
# Verbs an instruction to a writer starts with ("announce our launch"): pasted into a sentence, they are echo.
INSTRUCTION_VERBS = word_set(
    """
        write create draft generate compose make produce craft announce introduce share explain tell give
        invite remind thank ask describe post promote celebrate highlight showcase list summarise summarize
        outline tweet caption
        """
)
# Plural nouns without -s, and -s words that are singular.
PLURAL_WORDS = word_set("people children men women feet teeth mice staff folks customers police cattle")
SINGULAR_S_WORDS = word_set(
    """
    news series species means analysis basis bus business campus canvas chaos class focus gas glass lens process
    status success address access bonus virus thesis crisis physics mathematics economics ethics politics
    always perhaps its this his yes plus less unless thus gas atlas iris lotus cactus census citrus chorus
    hummus couscous asparagus octopus walrus dress grass mass pass boss loss moss miss kiss
    """
)

Tag = Literal["DET", "PRON", "PREP", "CONJ", "AUX", "MODAL", "WH", "NUM", "VERB", "WORD", "PUNCT"]
TOKEN = re.compile(r"[A-Za-z0-9]+(?:['\u2019][A-Za-z]+)*(?:-[A-Za-z0-9]+)*|[^\sA-Za-z0-9]")


def _regular(base: str) -> tuple[str, str, str]:
    """Third person singular, past and -ing forms of a regular verb."""
    if base.endswith(("s", "x", "z", "ch", "sh", "o")):
        third = base + "es"
    elif base.endswith("y") and base[-2:-1] not in set("aeiou"):
        third = base[:-1] + "ies"
    else:
        third = base + "s"
    if base.endswith("e"):
        past, gerund = base + "d", (base if base.endswith(("ee", "ye", "oe")) else base[:-1]) + "ing"
    elif base.endswith("y") and base[-2:-1] not in set("aeiou"):
        past, gerund = base[:-1] + "ied", base + "ing"
    elif (
        len(base) <= 4
        and len(base) >= 3
        and base[-1] not in "aeiouwxy"
        and base[-2] in "aeiou"
        and base[-3] not in "aeiou"
    ):
        past, gerund = base + base[-1] + "ed", base + base[-1] + "ing"
    else:
        past, gerund = base + "ed", base + "ing"
    return third, past, gerund


VERB_BASES = frozenset(_VERBS.split()) | frozenset(IRREGULAR)


@cache
def _forms() -> dict[str, set[tuple[str, str]]]:
    """Every form of every known verb -> {(base, tag)}; tags VB, VBZ, VBD, VBN, VBG (the Penn names)."""
    forms: dict[str, set[tuple[str, str]]] = {}

    def add(form: str, base: str, tag: str) -> None:
        forms.setdefault(form, set()).add((base, tag))

    for base in VERB_BASES:
        third, past, gerund = _regular(base)
        add(base, base, "VB")
        add(third, base, "VBZ")
        add(gerund, base, "VBG")
        if base in IRREGULAR:
            past_form, participle = IRREGULAR[base]
            add(past_form, base, "VBD")
            add(participle, base, "VBN")
            if past_form.endswith("t") and base + "ed" != past_form:
                add(past, base, "VBD")  # learned and learnt, burned and burnt
                add(past, base, "VBN")
        else:
            add(past, base, "VBD")
            add(past, base, "VBN")
    return forms


def verb_readings(word: str) -> set[tuple[str, str]]:
    """The (base, tag) readings of a word as a verb; empty when the lexicon does not know it as one."""
    return _forms().get(word.lower().replace("\u2019", "'"), set())


def third_person(base: str) -> str:
    """The verb's third person singular present ("has", "goes", "tries")."""
    if base == "be":
        return "is"
    if base == "have":
        return "has"
    return _regular(base)[0]


def past_tense(base: str) -> str:
    """The verb's simple past."""
    if base in IRREGULAR:
        return IRREGULAR[base][0]
    return _regular(base)[1]


def gerund(base: str) -> str:
    """The verb's -ing form."""
    return _regular(base)[2]


def tokens(text: str) -> list[str]:
    """Words (with inner apostrophes and hyphens) and punctuation marks, in order."""
    return TOKEN.findall(text.replace("\u2019", "'"))


def word_class(word: str, previous: str = "") -> Tag:
    """The closed class of a word, or VERB for a word the lexicon knows as a verb, else WORD."""
    lowered = word.lower()
    if not word[:1].isalnum():
        return "PUNCT"
    if lowered[:1].isdigit():
        return "NUM"
    if lowered in MODALS:
        return "MODAL"
    if lowered in BE_FORMS or lowered in HAVE_FORMS or lowered in DO_FORMS or lowered.endswith(CONTRACTED_FINITE):
        return "AUX"
    if lowered in SUBJECT_PRONOUNS or lowered in OBJECT_PRONOUNS:
        return "PRON"
    if lowered in WH_WORDS:
        return "WH"
    if lowered in DETERMINERS:
        return "DET"
    if lowered in PREPOSITIONS or lowered == "to":
        return "PREP"
    if lowered in COORDINATORS or lowered in SUBORDINATORS:
        return "CONJ"
    if verb_readings(lowered):
        return "VERB"
    return "WORD"


_ADJECTIVE_MARKERS = word_set(
    """
        more less most least very well newly freshly recently fully locally so too better fewer faster
        easier cheaper smaller bigger quicker newer older lower higher
        """
)


def _is_finite_at(words: list[str], index: int, *, lenient: bool = False, look_around: bool = True) -> bool:
    """Whether the word at `index` reads as a finite verb where it stands (`words` keeps punctuation marks).

    `lenient` counts any verb reading that no determiner or preposition rules out: the gate uses it, so a
    sentence is called verbless only when no word in it could be its verb.
    """
    word = words[index].lower()
    if not word[:1].isalnum():
        return False
    previous = words[index - 1].lower() if index else ""
    following = words[index + 1].lower() if index + 1 < len(words) else ""
    if word in MODALS or word in HAVE_FORMS or word in DO_FORMS or word in BE_FORMS and word not in ("be", "been"):
        return True
    if word.endswith(CONTRACTED_FINITE):
        return word != "let's" and (word.endswith("n't") or word.split("'")[0] in _CONTRACTING_SUBJECTS)
    readings = verb_readings(word)
    tags = {tag for _, tag in readings}
    if not tags:
        # A verb the lexicon does not know: after a subject pronoun it is the verb ("we shovelled").
        return (
            previous in SUBJECT_PRONOUNS and word.replace("-", "").isalpha() and word not in DETERMINERS | PREPOSITIONS
        )
    if tags == {"VBG"}:
        return False
    if previous in SUBJECT_PRONOUNS or previous in ("who", "that", "which", "what", "there"):
        return True
    if previous in DETERMINERS or previous in POSSESSIVES or previous in PREPOSITIONS or previous == "to":
        return False
    if previous in _ADJECTIVE_MARKERS or previous[:1].isdigit():
        return False
    if lenient:
        return True
    if tags & {"VBD", "VBN"} and not tags & {"VB", "VBZ"}:
        # "Jackets made from recycled nylon", "bread made slowly": participles; "we made 300 loaves": a verb.
        if index == 0:
            return following not in PREPOSITIONS and following != "to"  # "Used by 850 bakeries." has no verb
        if previous == ",":
            return False  # "revolutionary, guaranteed results": an adjective in a row
        return not (following in PREPOSITIONS or following.endswith("ly") or not following[:1].isalnum())
    if index == 0:
        return "VB" in tags  # an imperative: "Bring your pack."
    if (
        look_around
        and previous in COORDINATORS
        and not any(_is_finite_at(words, earlier, look_around=False) for earlier in range(index - 1))
    ):
        return False  # "production sheets and invoices": a list of nouns, not a second verb
    base = next(iter(readings))[0]
    if "-" in previous:
        return False  # "our cash-flow forecast": a compound noun
    if base not in NOUN_LIKE_VERBS:
        return True
    if "VBZ" in tags:
        # "coffee tastes flat" is a clause; "wholesale orders, production sheets" a list of nouns.
        later = look_around and any(
            _is_finite_at(words, later, look_around=False) for later in range(index + 1, len(words))
        )
        return not later and following[:1].isalnum() and following not in COORDINATORS
    # "Our loaves rise": a base form that is more often a noun counts after a plural.
    return previous.endswith("s") and previous not in SINGULAR_S_WORDS and len(previous) > 3


_CONTRACTING_SUBJECTS = SUBJECT_PRONOUNS | frozenset({"there", "here", "that", "what", "who", "where", "how"})


def _words_and_marks(text: str) -> list[str]:
    return [word for word in tokens(text) if word[:1].isalnum() or word in ",;:()"]


def has_finite_verb(sentence: str, *, lenient: bool = False) -> bool:
    """Whether a sentence has a finite verb, or opens as an imperative, as far as the lexicon can tell."""
    words = _words_and_marks(sentence)
    return any(_is_finite_at(words, index, lenient=lenient) for index in range(len(words)))


def _reduced_relative(words: list[str], index: int) -> bool:
    """ "Ingredients you can read", "reports your accountant can trust": a noun, then a subject and a verb
    with nothing after it, is a noun phrase whose relative pronoun was left out."""
    subject_start = index - 1
    if subject_start > 0 and words[subject_start - 1].lower() in POSSESSIVES | DETERMINERS:
        subject_start -= 1
    elif words[subject_start].lower() not in SUBJECT_PRONOUNS:
        return False
    rest = [word for word in words[index + 1 :] if word[:1].isalnum()]
    return subject_start > 0 and words[0].lower() not in SUBJECT_PRONOUNS and len(rest) <= 1


PhraseKind = Literal["clause", "imperative", "participle", "gerund", "noun_phrase"]


def phrase_kind(phrase: str) -> PhraseKind:
    """What a brand phrase is, to choose the frame it fits: a clause ("every loaf is slow-fermented"), an
    imperative ("Close your books in days"), a participle phrase ("Used by 850 bakeries"), a gerund phrase
    ("supporting local growers") or a noun phrase ("Plant-based dinners ready in 20 minutes", "Gear that is
    built to be repaired", "relaxed family dinners")."""
    words = _words_and_marks(phrase)
    plain = [word.lower() for word in words if word[:1].isalnum()]
    if not plain:
        return "noun_phrase"
    if plain[0] == "not" and len(plain) > 1:
        plain = plain[1:]
    first = plain[0]
    first_tags = {tag for _, tag in verb_readings(first)}
    second = plain[1] if len(plain) > 1 else ""
    if first_tags & {"VBN", "VBD"} and not first_tags & {"VB", "VBZ"} and first not in BE_FORMS:
        # "Used by 850 bakeries", "Rated 4.8"; "relaxed family dinners" is an adjective and its noun.
        return "participle" if second in PREPOSITIONS or second == "to" or second[:1].isdigit() else "noun_phrase"
    if first_tags == {"VBG"}:
        return "gerund"
    if "-" in first and first.endswith("ed") and (second in PREPOSITIONS or not second):
        return "participle"  # "dermatologist-tested on 120 volunteers"
    if "VB" in first_tags and (
        second in DETERMINERS | POSSESSIVES | OBJECT_PRONOUNS | PREPOSITIONS or second in ("outside", "more")
    ):
        return "imperative"
    # A relative clause inside a noun phrase ("gear that is built...") does not make the phrase a clause.
    for index in range(1, len(words)):
        if words[index - 1].lower() in ("that", "which", "who", "where"):
            break
        if _is_finite_at(words, index):
            return "noun_phrase" if _reduced_relative(words, index) else "clause"
    return "noun_phrase"
