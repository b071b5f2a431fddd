"""Whole sentences from the brief and the brand: each phrase goes into a frame made for its grammatical kind.

A value proposition may be a clause ("every loaf is slow-fermented for 36 hours"), an imperative ("Close
your books in days"), a participle phrase ("Used by 850 bakeries"), a gerund phrase or a noun phrase
("Gear that is built to be repaired"); `grammar.phrase_kind` says which, and only frames that take that kind
are used. The words around the facts are chosen for the brand's trade (`sector_of`), so a coffee roaster is
never framed as a software business, and for what the prompt asked (announce, explain, invite...).

Kept as one module past 500 lines on purpose: the frames, calls to action and procedures are tables kept beside the
functions that choose from them.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Literal

from toolhost.providers.text import analysis, grammar
from toolhost.providers.text.base import BrandContext
from toolhost.providers.text.brief import Brief

Sector = Literal["software", "food", "beauty", "finance", "outdoor", "services"]
SECTOR_WORDS: dict[Sector, tuple[str, ...]] = {
    "software": ("software", "saas", "app", "platform", "tool", "b2b", "fintech", "automation", "api"),
    "food": ("coffee", "bakery", "bread", "food", "beverage", "roaster", "meal", "restaurant", "cafe", "kitchen"),
    "beauty": ("skincare", "beauty", "cosmetic", "personal care", "skin", "salon"),
    "finance": ("wealth", "financial", "advis", "invest", "bank", "insurance", "fiduciary"),
    "outdoor": ("outdoor", "gear", "apparel", "clothing", "retail", "shop", "store", "fashion"),
}


def sector_of(brand: BrandContext) -> Sector:
    """The brand's trade from its industry first, then its name and pillars."""
    for text in (brand.industry.lower(), " ".join([brand.name, *(name for name, _ in brand.content_pillars)]).lower()):
        for sector, words in SECTOR_WORDS.items():
            if any(re.search(rf"\b{re.escape(word)}", text) for word in words):
                return sector
    return "services"


def lower_first(text: str) -> str:
    """The text with its first letter lower-cased, unless the first word is a name or an acronym."""
    words = text.split(" ", 2) if text else []
    first = words[0] if words else ""
    if not first or any(letter.isupper() for letter in first[1:]) or first in ("I",):
        return text
    if len(words) > 1 and words[1][:1].isupper():
        return text  # "Levain Street Bakery": a name of more than one word keeps its capitals
    if first.lower() in _PROPER_STARTS:
        return text
    return text[0].lower() + text[1:]


_PROPER_STARTS = frozenset({"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"})


def upper_first(text: str) -> str:
    """The text with its first letter capitalised, unless it starts with a web address (whose case is its own)."""
    if not text or analysis.URL.match(text):
        return text
    return text[:1].upper() + text[1:]


def sentence(text: str, mark: str = ".") -> str:
    """A clause as a sentence: capitalised, one end mark."""
    text = " ".join(text.split()).strip(" ,;:")
    if not text:
        return ""
    text = upper_first(text)
    return text if text[-1] in ".!?" else text + mark


def clause(text: str) -> str:
    """A phrase without its end mark, first letter lowered where safe, to embed in a frame."""
    return lower_first(" ".join(text.split()).rstrip(".!?;: "))


def is_plural(noun_phrase: str) -> bool:
    """Whether a noun phrase takes a plural verb ("our repair days are", "the new feature is")."""
    head = re.split(r"\s+(?:that|which|who|with|from|for|in|on|of|at|to|this|by)\s+", noun_phrase.strip())[0]
    words = head.split()
    if not words or words[0].lower().endswith("ing") and words[0].lower() not in ("things", "wings"):
        return False  # a gerund phrase is one thing: "chasing late invoices is"
    if " and " in f" {head} " or words[0].lower() in grammar.PLURAL_DETERMINERS:
        return True
    last = words[-1].lower().strip(",")
    if last in grammar.PLURAL_WORDS:
        return True
    return last.endswith("s") and not last.endswith(("ss", "us", "is", "'s")) and last not in grammar.SINGULAR_S_WORDS


def be(noun_phrase: str) -> str:
    """ "is" or "are" for a subject."""
    return "are" if is_plural(noun_phrase) else "is"


def with_article(noun_phrase: str) -> str:
    """A bare singular noun phrase with "a" in front ("lifetime repair program" -> "a lifetime repair program")."""
    words = noun_phrase.split()
    if not words or words[0].lower() in grammar.DETERMINERS | grammar.POSSESSIVES or words[0][:1].isdigit():
        return noun_phrase
    head_words = re.split(r",|\s+(?:that|which|who|with|from|for|in|on|of|at|to|by|worth)\s+", noun_phrase)[0].split()
    head = head_words[-1].lower().strip(",")
    if (
        is_plural(noun_phrase)
        or any(is_plural(word) for word in head_words)
        or head.endswith(("ion", "ity", "ness", "ice", "ance", "ence", "ing", "ment", "ware"))
        or head in MASS_NOUNS
        or words[0].lower() in MASS_NOUNS
    ):
        return noun_phrase
    if words[0][:1].isupper() and not noun_phrase[:1].isupper():
        return noun_phrase
    return ("an " if words[0][:1].lower() in "aeiou" else "a ") + noun_phrase


MASS_NOUNS = grammar.word_set(
    """
    advice bread coffee tea food gear clothing equipment money time help support water skincare care
    information knowledge progress work feedback freedom peace confidence clarity continuity flour sourdough
    nutrition cooking baking brewing produce stock cash admin paperwork research guidance skin
    """
)


@dataclass(frozen=True, slots=True)
class Fact:
    """One thing the post may say, already a whole sentence, with the stems that tie it to a topic."""

    text: str
    source: str
    stems: frozenset[str]


def _fact(text: str, source: str) -> Fact | None:
    if not text:
        return None
    return Fact(text=text, source=source, stems=frozenset(analysis.content_stems(text)))


NOUN_PHRASE_FRAMES = (
    "With {name}, you get {phrase}",
    "{name} gives you {phrase}",
    "You can count on {phrase}",
    "{name} is known for {phrase}",
    "{name} stands for {phrase}",
)


def brand_sentence(phrase: str, brand: BrandContext, rng: random.Random, position: int = 0) -> str:
    """A brand phrase (value proposition or proof point) as a sentence in the frame its kind takes;
    `position` turns the noun-phrase frames, so three noun phrases do not share one."""
    phrase = " ".join(phrase.split()).rstrip(".!? ")
    if not phrase:
        return ""
    kind = grammar.phrase_kind(phrase)
    name = brand.name
    if kind == "clause":
        return sentence(phrase)
    if kind == "imperative":
        return sentence(f"{name} helps you {clause(phrase)}" if name else phrase)
    if kind == "participle":
        return sentence(f"{name} is {clause(phrase)}" if name else f"We are {clause(phrase)}")
    if kind == "gerund":
        if " since " in phrase:
            return sentence(f"{name or 'We'} {'has' if name else 'have'} been {clause(phrase)}")
        return sentence(f"It is all about {clause(phrase)}")
    body = with_article(clause(phrase))
    if not name:
        return sentence(f"You can count on {body}")
    return sentence(NOUN_PHRASE_FRAMES[position % len(NOUN_PHRASE_FRAMES)].format(name=name, phrase=body))


def as_we(text: str, name: str) -> str:
    """A sentence that opens with the brand's name, said in the first person ("Acme gives you ..." -> "We give
    you ..."): the name twice in a row reads as stock sentences pasted together. Unchanged when the verb after
    the name is not one the grammar knows."""
    if not name:
        return text
    if text.startswith(f"With {name}, "):
        return "With us, " + text[len(f"With {name}, ") :]
    if not text.startswith(name + " "):
        return text
    verb, _, rest = text[len(name) + 1 :].partition(" ")
    irregular = {"is": "are", "has": "have", "was": "were"}
    if verb in irregular and rest:
        return f"We {irregular[verb]} {rest}"
    bases = [base for base, tag in grammar.verb_readings(verb) if tag == "VBZ"]
    return f"We {bases[0]} {rest}" if bases and rest else text


def pain_sentence(pain: str) -> str:
    """An audience pain as a sentence, when it is a clause ("late invoices hurt cash flow.")."""
    return sentence(pain) if grammar.phrase_kind(pain) == "clause" else ""


def goal_sentence(aspiration: str) -> str:
    """An aspiration as the goal ("The goal is a great cup at home every morning.")."""
    kind = grammar.phrase_kind(aspiration)
    if kind in ("noun_phrase", "gerund"):
        return sentence(f"The goal is {with_article(clause(aspiration))}")
    return ""


def testimonial_sentence(testimonial: str) -> str:
    """ "We cut our standups to zero - Dana, engineering lead" -> a quoted sentence with who said it."""
    quote, _, who = testimonial.partition(" - ")
    quote = quote.strip().rstrip(".")
    if not who.strip() or not quote:
        return ""
    return f"\u201c{upper_first(quote)},\u201d says {who.strip()}."


def detail_sentence(detail: str, subject: str) -> str:
    """A fact the prompt gave, as a sentence: a clause as it is, a phrase attached to the subject."""
    kind = grammar.phrase_kind(detail)
    if kind == "clause" or grammar.has_finite_verb(detail):
        return sentence(detail)
    if kind == "imperative":
        return sentence(detail)
    if re.match(r"^\d", detail):
        return sentence(f"The numbers are simple: {detail}")
    return ""


def brand_facts(brand: BrandContext, rng: random.Random) -> list[Fact]:
    """Every brand fact the writer may use, each as a sentence; nothing but the brand's own words in them."""
    facts: list[Fact | None] = []
    phrases = [(value, "value") for value in brand.value_propositions]
    proofs = [point for point in brand.proof_points if point.verified] or list(brand.proof_points)
    phrases += [(point.claim, "proof") for point in proofs]
    # The noun-phrase frames turn over the noun phrases alone, so no two of them share a frame.
    positions: dict[str, int] = {}
    for text, _ in phrases:
        if grammar.phrase_kind(text) == "noun_phrase":
            positions[text] = len(positions)
    facts += [_fact(brand_sentence(text, brand, rng, positions.get(text, 0)), source) for text, source in phrases]
    facts += [_fact(pain_sentence(pain), "pain") for pain in brand.audience_pains]
    facts += [_fact(goal_sentence(goal), "goal") for goal in brand.audience_aspirations]
    facts += [_fact(testimonial_sentence(quote), "testimonial") for quote in brand.testimonials]
    seen: set[str] = set()
    result = []
    for fact in facts:
        if fact and fact.text.lower() not in seen:
            seen.add(fact.text.lower())
            result.append(fact)
    return result


def relevant(facts: list[Fact], stems: set[str], *, sources: tuple[str, ...], limit: int) -> list[Fact]:
    """The facts of the given sources that share most words with the topic, best first; ties keep order."""
    chosen = [fact for fact in facts if fact.source in sources]
    ranked = sorted(chosen, key=lambda fact: -len(fact.stems & stems))
    return ranked[:limit]


def overlaps(first: str, second: str) -> bool:
    """Whether two sentences say mostly the same thing (so the second is left out)."""
    one, two = set(analysis.content_stems(first)), set(analysis.content_stems(second))
    if not one or not two:
        return False
    return len(one & two) / min(len(one), len(two)) >= 0.6


# --- hooks -----------------------------------------------------------------------------------------------------


def question_from_statement(statement: str, wh: str = "why") -> str:
    """ "we slow-ferment our dough for 36 hours" -> "Why do we slow-ferment our dough for 36 hours?"; "" when the
    clause does not invert safely."""
    words = statement.split()
    lowered = [word.lower() for word in words]
    for index in range(1, min(len(words), 8)):
        word = lowered[index]
        if (
            word in grammar.MODALS
            or word in ("is", "are", "was", "were", "has", "have", "had")
            and index + 1 < len(words)
        ):
            if word in ("has", "have", "had") and not grammar.verb_readings(lowered[index + 1]) & {
                (base, "VBN") for base, _ in grammar.verb_readings(lowered[index + 1])
            }:
                return ""
            subject = " ".join(words[:index])
            rest = " ".join(words[index + 1 :])
            return f"{upper_first(wh)} {word} {lower_first(subject)} {rest}?"
        readings = grammar.verb_readings(word)
        tags = {tag for _, tag in readings}
        if tags & {"VB", "VBZ", "VBD"} and (lowered[index - 1] in grammar.SUBJECT_PRONOUNS or index >= 1):
            if lowered[index - 1] in grammar.DETERMINERS or lowered[index - 1] in grammar.PREPOSITIONS:
                continue
            base = next(iter(readings))[0]
            subject = " ".join(words[:index])
            helper = "did" if tags == {"VBD"} or tags == {"VBD", "VBN"} else "does" if "VBZ" in tags else "do"
            if helper == "do" and not (lowered[index - 1] in ("we", "i", "you", "they") or is_plural(subject)):
                return ""
            rest = " ".join(words[index + 1 :])
            return f"{upper_first(wh)} {helper} {lower_first(subject)} {base} {rest}".strip() + "?"
        if not tags and lowered[index - 1] in ("we", "i", "you", "they") and word.replace("-", "").isalpha():
            subject = " ".join(words[:index])
            return f"{upper_first(wh)} do {lower_first(subject)} {' '.join(words[index:])}?"
    return ""


def hook(brief: Brief, brand: BrandContext, family: str | None, facts: list[Fact], rng: random.Random) -> str:
    """The opening line: what the post is, in the shape the prompt asked for and the hook family prefers."""
    subject = clause(brief.subject) if brief.subject else ""
    statement = clause(brief.statement) if brief.statement else ""
    options: list[str] = []
    if brief.action == "ask" and brief.question:
        return brief.question
    if brief.action == "announce":
        if subject:
            options += [
                sentence(f"{upper_first(subject)} {be(subject)} here"),
                sentence(f"Meet {subject}"),
                sentence(f"Say hello to {subject}"),
            ]
        elif statement:
            options += [sentence(f"Good news: {statement}"), sentence(statement)]
    elif brief.action == "explain":
        if statement:
            wh = brief.question_word or "why"
            question = question_from_statement(statement, wh)
            options += [question] if question else []
            options += [sentence(f"Here is {wh} {statement}"), sentence(f"People often ask {wh} {statement}")]
        elif subject:
            options += [sentence(f"Here is how we think about {subject}"), sentence(f"Let us talk about {subject}")]
    elif brief.action == "tips":
        count = _count_word(brief.steps)
        if brief.how:
            options += [sentence(f"How do you {clause(brief.how)}", "?")]
            options += [sentence(f"Here is how to {clause(brief.how)}" + (f" in {count} steps" if count else ""))]
        elif subject:
            if re.search(r"\b(?:recipe|routine|checklist|guide|plan)\b", subject):
                options += [sentence(f"Here is {subject}")]
            else:
                options += [sentence(f"Here are {count or 'a few'} tips for {subject}")]
    elif brief.action == "story":
        if statement:
            options += [sentence(statement) + " Here is how.", sentence(f"This is the story of how {statement}")]
        elif subject:
            options += [sentence(f"This is a story about {subject}")]
    elif brief.action == "invite":
        if subject:
            options += [sentence(f"Join us for {subject}"), sentence(f"You are invited to {subject}")]
    elif brief.action == "thank":
        if statement:
            options += [sentence(statement) + " Thank you."]
        options += [sentence("Thank you, all of you")]
    elif brief.action == "remind":
        if statement and brief.audience:
            options += [sentence(f"A quick reminder for {clause(brief.audience)}: {statement}")]
        if statement:
            options += [sentence(f"Reminder: {statement}")]
    if not options:
        if statement:
            options += [sentence(statement)]
        elif subject:
            if subject.split()[0].lower() in grammar.POSSESSIVES:
                options += [sentence(f"Meet {subject}"), sentence(f"We want to tell you about {subject}")]
            elif subject.split()[0].lower().endswith("ing"):
                options += [
                    sentence(f"Let us talk about {subject}"),
                    sentence(f"{upper_first(subject)} {be(subject)} worth getting right"),
                ]
            else:
                options += [sentence(f"Let us talk about {subject}"), sentence(f"Meet {subject}")]
    preferred = _family_options(family, brief, brand, subject, statement)
    lead = _family_lead(family, brief, facts, rng)
    preferred = [option for option in preferred if option]
    if preferred and not lead:
        options = preferred
    chosen = rng.choice(options) if options else sentence(f"News from {brand.name or 'us'}")
    if lead and not overlaps(lead, chosen) and len(lead) + len(chosen) < 200:
        return f"{lead} {chosen}"
    return chosen


def _family_options(family: str | None, brief: Brief, brand: BrandContext, subject: str, statement: str) -> list[str]:
    """Openings in the voice of a hook family, for subjects and statements that take them."""
    if not family or brief.action in ("ask", "invite", "thank", "remind"):
        return []
    if not subject and brief.how:
        verb, _, rest = brief.how.partition(" ")
        readings = grammar.verb_readings(verb.lower())
        if readings:
            # "run a shorter weekly meeting" -> "running a shorter weekly meeting", a subject the frames take
            subject = f"{grammar.gerund(next(iter(readings))[0])} {rest}".strip()
    if subject:
        verb = be(subject)
        own = subject.split()[0].lower() in grammar.POSSESSIVES
        return {
            "curiosity": [sentence(f"What makes {subject} {'different' if own else 'work'}", "?")],
            "pain_point": [sentence(f"{upper_first(subject)} {verb} harder than it looks")] if not own else [],
            "contrarian": [sentence(f"{upper_first(subject)} {verb} not what most people expect")],
            "authority": [
                sentence(f"At {brand.name}, we have been working on {subject}")
                if brand.name and own
                else sentence(f"Here is what we have learned about {subject}")
            ],
        }.get(family, [])
    if statement:
        return {
            "curiosity": [question_from_statement(statement, brief.question_word or "why")],
            "contrarian": [sentence(f"Not everyone expects this, but {statement}")],
            "authority": [sentence(f"Here is something we know well: {statement}")],
        }.get(family, [])
    return []


def _family_lead(family: str | None, brief: Brief, facts: list[Fact], rng: random.Random) -> str:
    """A first sentence the hook family asks for: a pain for pain_point, a figure for data_driven."""
    stems = set(analysis.content_stems(" ".join([brief.subject, brief.statement, brief.how, *brief.details])))
    if family == "pain_point":
        pains = relevant(facts, stems, sources=("pain",), limit=1)
        return pains[0].text if pains and pains[0].stems & stems else ""
    if family == "data_driven":
        figures = [fact for fact in facts if fact.source == "proof" and re.search(r"\d", fact.text)]
        ranked = relevant(figures, stems, sources=("proof",), limit=1)
        return ranked[0].text if ranked and ranked[0].stems & stems else ""
    return ""


def _count_word(count: int | None) -> str:
    return {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven"}.get(count or 0, "")


# --- calls to action -------------------------------------------------------------------------------------------

CTAS: dict[tuple[str, str], tuple[str, ...]] = {
    ("announce", "software"): ("Try it and tell us what you think.", "What should it do next? Tell us."),
    ("announce", "food"): ("Tell us what you taste.", "Tell us what you think when you try it."),
    ("announce", "beauty"): ("Tell us how your skin feels after a week.", "Which product should we make next?"),
    ("announce", "finance"): ("If you would like to talk it through, get in touch.",),
    ("announce", "outdoor"): ("Tell us what you think of it.", "Which trip will you take it on first?"),
    ("tips", "any"): ("Which one will you try first?", "What would you add?"),
    ("explain", "any"): ("What would you like us to explain next?", "Questions? Ask us in the replies."),
    ("story", "any"): ("Has something like this happened to you? Tell us.", "What would you do with the time back?"),
    ("invite", "any"): ("Tell us if you are coming.", "We would love to see you there."),
    ("thank", "any"): ("We will see you soon.", "Thank you for being part of it."),
    ("remind", "any"): ("Set a reminder today.", "Put it in your calendar now."),
    ("ask", "any"): ("Reply and tell us.", "We read every reply."),
    ("talk", "software"): ("How do you handle it today?", "What has worked for you?"),
    ("talk", "food"): ("Tell us what you think.", "What would you like to know about it?"),
    ("talk", "any"): ("What has worked for you?", "Tell us what you think."),
}


def call_to_action(brief: Brief, sector: Sector, platform: str | None, rng: random.Random) -> str:
    """A call to action that fits what the post does and the brand's trade (none for a question post)."""
    options = CTAS.get((brief.action, sector)) or CTAS.get((brief.action, "any")) or CTAS[("talk", "any")]
    chosen = rng.choice(options)
    if platform == "youtube":
        chosen += " Subscribe if you want the next one."
    if brief.link:
        chosen = f"Find out more: {brief.link}"
    return chosen


# --- steps -----------------------------------------------------------------------------------------------------

PROCEDURES: tuple[tuple[frozenset[str], tuple[str, ...]], ...] = (
    (
        frozenset({"price", "cost", "budget", "charge", "quote"}),
        (
            "Add up what goes into {object}, ingredient by ingredient",
            "Add your time, energy and packaging",
            "Set a price that leaves the margin you need",
            "Check it against what customers pay elsewhere",
            "Review the price whenever your costs change",
        ),
    ),
    (
        frozenset({"brew", "bake", "cook", "make", "prepare", "roast"}),
        (
            "Weigh everything before you start",
            "Use the same steps every time you {verb} {object}",
            "Change one thing at a time",
            "Write down what you changed and how it turned out",
            "Keep the version you like best",
        ),
    ),
    (
        frozenset({"plan", "organise", "organize", "run", "manage", "schedule", "start"}),
        (
            "Decide what a good result looks like",
            "Write the plan down where everyone can see it",
            "Start with the one change that matters most",
            "Check after a week what has changed",
            "Keep what works and drop the rest",
        ),
    ),
)
# A routine with no subject of its own. Only carousels still use it, to fill the slides they were asked for
# when the prompt and the brand give no steps: a caption, script or blog writes no steps instead.
ROUTINE_STEPS = (
    "Write down what a good result looks like for you",
    "Start with one small change this week",
    "Make it part of your routine",
    "Check what has changed after a week",
    "Keep what works and drop the rest",
    "Ask someone you trust what they would change",
)


def routine_steps(count: int) -> list[str]:
    """The first `count` steps of the subject-free routine, as sentences."""
    return [sentence(step) for step in ROUTINE_STEPS[:count]]


def steps(brief: Brief, brand: BrandContext, count: int) -> list[str]:
    """Imperative steps for a how-to or a tips post: the prompt's own, the brand's imperatives, then a
    procedure for the verb asked about. Each is a whole imperative sentence. Without any of these there are
    no steps: self-help filler ("Start with one small change this week") under a specific topic is what a
    careful editor strikes out, and the reading gate blocks it (carousels, which must fill
    their slides, fall back on `routine_steps`)."""
    found: list[str] = [sentence(detail) for detail in brief.details if grammar.phrase_kind(detail) == "imperative"]
    stems = set(analysis.content_stems(" ".join([brief.how, brief.subject, *brief.keywords])))
    for phrase in [*brand.value_propositions, *brand.messaging_pillars]:
        if grammar.phrase_kind(phrase) == "imperative" and set(analysis.content_stems(phrase)) & stems:
            found.append(sentence(phrase))
    verb, _, rest = brief.how.partition(" ")
    first = brief.subject.split(" ", 1)[0].lower() if brief.subject else ""
    if not verb and re.search(r"\brecipe\b", brief.subject):
        verb = "make"
    elif not verb and first.endswith("ing") and grammar.verb_readings(first):
        verb = next(iter(grammar.verb_readings(first)))[0]  # "running a team" asks for the steps of "run"
    object_ = rest or "it"
    topic = clause(brief.how and grammar.gerund(verb.lower()) + (" " + rest if rest else "") or brief.subject or "it")
    procedure = next((steps for verbs, steps in PROCEDURES if verb.lower() in verbs), ())
    for template in procedure:
        found.append(sentence(template.format(object=object_, verb=verb.lower(), topic=topic)))
    unique: list[str] = []
    for step in found:
        if not any(overlaps(step, other) for other in unique):
            unique.append(step)
    return unique[:count]
