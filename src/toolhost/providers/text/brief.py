"""Reading a request to write: what it is about, for whom, why, and what the post should ask of its reader.

A prompt is an instruction ("Announce our new wholesale invoicing feature", "Write a post for freelancers
about chasing late invoices", "How to price a croissant in 3 steps"), never a phrase to paste into a
sentence. The brief keeps each part in the grammatical shape it has, so the writer can put it in a frame
that fits: a noun phrase ("our new wholesale invoicing feature"), a clause the post may state ("we
slow-ferment our dough for 36 hours"), a verb phrase for a how-to ("price a croissant"), a question for
the audience ("which ingredient labels confuse you most?"), and the facts given after the first sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Literal

from toolhost.providers.text import analysis, grammar

Action = Literal["announce", "explain", "tips", "story", "invite", "thank", "remind", "ask", "talk"]

URL = re.compile(r"\b(?:https?://|www\.)[^\s<>\"']+", re.IGNORECASE)
PLATFORMS = r"(?:linkedin|twitter|x|instagram|insta|tiktok|youtube|facebook|threads|bluesky|mastodon)"
SHAPES = (
    r"(?:post|posts|caption|captions|thread|script|blog(?:\s+post)?|article|hook|video|tweet|reel|update|"
    r"newsletter|copy|carousel|story|stories|message|announcement|description)"
)
LEAD_IN = re.compile(
    r"^\s*(?:please\s+)?(?:can you\s+|could you\s+|i need\s+|we need\s+)?"
    r"(?:(?:write|create|draft|generate|make|compose|produce|craft|give me|prepare)\s+(?:me\s+|us\s+)?)?"
    r"(?:an?\s+|the\s+|some\s+|\d+\s+)?(?:(?:short|quick|friendly|fun|punchy|warm|professional|casual|new|"
    rf"long|brief|\d+[- ]?(?:second|sec|s|minute|min)s?|{PLATFORMS})\s+)*{SHAPES}\b[:,]?\s*",
    re.IGNORECASE,
)
WRITE_ABOUT = re.compile(r"^\s*(?:please\s+)?(?:write|talk|post)\s+(?:something\s+)?(?=about\b|on\b)", re.I)
PLATFORM_MENTION = re.compile(rf"\s*\b(?:for|on)\s+{PLATFORMS}\b", re.IGNORECASE)
TONE_MENTION = re.compile(
    r"\s*(?:,\s*)?\b(?:in\s+an?\s+|with\s+an?\s+)?(?:friendly|warm|playful|formal|professional|casual|upbeat)"
    r"\s+(?:tone|voice|way)\b",
    re.IGNORECASE,
)
COUNT_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}
PEOPLE = re.compile(
    r"^(?:(?:our|your|the|all|new|busy|first-time|small|local|independent|uk|us|young|adult|\w+-\w+)\s+)*"
    r"(?:[\w-]+\s+){0,2}(?:people|families|parents|teams|customers|clients|followers|owners|managers|founders|"
    r"leaders|bakeries|cafes|cafés|businesses|students|beginners|developers|engineers|designers|brewers|"
    r"readers|members|friends|community|regulars|neighbours|neighbors|buyers|shoppers|guests|everyone|"
    r"\w+ers|\w+ists|\w+ians)\b",
    re.IGNORECASE,
)
DETAIL_LEAD = re.compile(
    r"^(?:please\s+)?(?:mention|include|add|say|note|remember|make sure to mention|make sure|tell them|stress|"
    r"point out|explain)\s+(?:that\s+)?",
    re.IGNORECASE,
)
NON_LATIN = re.compile(r"[^\x00-\u024f\u1e00-\u1eff\u2000-\u206f\u20a0-\u20cf\s\d\W]")


@dataclass(frozen=True, slots=True)
class Brief:
    """A request to write, read into parts; every text part keeps the prompt's own words."""

    action: Action
    subject: str  # a noun phrase (or gerund phrase): "our new wholesale invoicing feature"
    statement: str = ""  # a clause the post may state: "we slow-ferment our dough for 36 hours"
    question: str = ""  # a question for the audience, already addressed to them
    how: str = ""  # a verb phrase for a how-to: "price a croissant"
    audience: str = ""  # "freelancers", "home brewers"
    details: tuple[str, ...] = ()  # further facts given: "tickets are £35", "it is out on 3 March"
    steps: int | None = None
    question_word: str = ""  # "why" or "how" for an explanation of a statement
    link: str = ""  # a link the caller asked the post to carry
    keywords: tuple[str, ...] = field(default=())

    @property
    def topic(self) -> str:
        """What the post is about, as a noun phrase."""
        return self.subject or self.how or self.statement

    @property
    def wants_steps(self) -> bool:
        """Whether the request asks for steps: a how-to ("how to price a croissant") or a count of tips."""
        return self.action == "tips" and bool(self.how or self.steps)


def unusable(prompt: str, *, english_only: bool = True, noun: str = "prompt") -> str:
    """Why a prompt cannot be written from ("" when it can): blank, a link alone, no words, or (for a writer
    that writes English only) another language. `noun` names the text in the answer ("the topic is ...")."""
    text = prompt.strip()
    if not text:
        return f"the {noun} is empty"
    without_links = URL.sub(" ", text).strip()
    if not without_links or not analysis.WORD.search(without_links):
        if URL.search(text):
            return f"the {noun} is only a link, and generation does not open links"
        return f"the {noun} has no words to write about"
    words = analysis.words(without_links)
    if not english_only:
        return ""
    not_english = f"the {noun} is not in English, and the built-in writer writes English only"
    if NON_LATIN.search(without_links) and len(NON_LATIN.findall(without_links)) > len(without_links) / 4:
        return not_english
    foreign = [word for word in words if word in FOREIGN_FUNCTION_WORDS]
    english = [word for word in words if word in analysis.STOPWORDS or word in grammar.INSTRUCTION_VERBS]
    if len(foreign) >= 2 and len(foreign) > len(english):
        return not_english
    return ""


# The commonest short words of the languages a prompt is most often written in besides English (French,
# German, Spanish, Italian, Portuguese, Dutch): two of them, outnumbering English ones, mark another language.
FOREIGN_FUNCTION_WORDS = grammar.word_set(
    """
    le la les des du une et est pour sur notre nos votre vos avec dans qui que pas sont nouveau nouvelle
    der die das und ist für über unsere unser ein eine einen mit nicht sich auf dem den zu neue neuen
    el los las y para con nuestro nuestra nuestros por del una es más sobre nuevo nueva
    il di che per gli della nostro nostra sono nuovo nuova
    os um uma com nosso nossa não são novo sobre
    het een voor onze van niet zijn nieuwe
    """
)


def _clean(text: str) -> str:
    return " ".join(text.replace("\u2019", "'").split()).strip(" ,;:-")


def _strip_end(text: str) -> str:
    return _clean(re.sub(r"[.!?]+$", "", text.strip()))


def _split_people(text: str) -> tuple[str, str]:
    """ "freelancers about chasing late invoices" -> ("freelancers", "chasing late invoices")."""
    match = PEOPLE.match(text)
    if not match:
        return "", text
    audience = match.group(0)
    rest = text[match.end() :].strip()
    who = re.match(r"^(?:who|that)\s+[^,]+", rest)
    if who and not re.match(r"^(?:about|on)\b", rest):
        audience += " " + who.group(0)
        rest = rest[who.end() :].strip(" ,")
    rest = re.sub(r"^(?:about|on|regarding|covering)\s+", "", rest)
    return _clean(audience), _clean(rest)


def _people_object(text: str) -> tuple[str, str]:
    """The people a verb names first ("invite our community to ...", "remind freelancers that ...")."""
    match = re.match(
        r"^((?:our|your|the|all)?\s*(?:[\w-]+\s+){0,3}?(?:people|followers|customers|clients|community|"
        r"members|readers|regulars|everyone|families|\w+ers|\w+ists)(?:\s+(?:in|across|around)\s+(?:the\s+)?"
        r"(?-i:[A-Z]\w*(?:\s+[A-Z]\w*)*))?)\b\s*",
        text,
        re.IGNORECASE,
    )
    if not match:
        return "", text
    return _clean(match.group(1)), text[match.end() :].strip()


def _count(text: str) -> int | None:
    match = re.search(
        r"\b(\d|two|three|four|five|six|seven)\b(?=[\s-]+(?:\w+[\s-]+)?(?:tips|steps|ways|things|ideas|"
        r"mistakes|lessons|reasons|questions|signs|step))",
        text,
        re.IGNORECASE,
    )
    if not match:
        match = re.search(r"\bin\s+(\d|two|three|four|five|six|seven)\s+steps\b", text, re.IGNORECASE)
    if not match:
        return None
    value = match.group(1).lower()
    return int(value) if value.isdigit() else COUNT_WORDS[value]


def _to_you(text: str) -> str:
    """An indirect question about the followers, turned to them: "them" -> "you", "their" -> "your"."""
    replaced = re.sub(r"\bthem\b", "you", text)
    replaced = re.sub(r"\btheir\b", "your", replaced)
    replaced = re.sub(r"\bthemselves\b", "yourselves", replaced)
    return re.sub(r"\bthey\b", "you", replaced)


def direct_question(indirect: str) -> str:
    """ "what they cook when they have no time" -> "What do you cook when you have no time?"."""
    text = _strip_end(indirect)
    text = re.sub(r"^(?:whether|if)\s+", "", text, flags=re.IGNORECASE)
    words = text.split()
    if not words:
        return ""
    first = words[0].lower()
    if first in grammar.WH_WORDS and len(words) >= 3:
        # "what they cook": a subject after the question word takes do-support; "which labels confuse them":
        # the question word's noun is the subject and the order stays.
        for index in range(1, min(len(words), 4)):
            word = words[index].lower()
            if word in ("they", "you", "people", "we", "customers", "followers"):
                verb = words[index + 1] if index + 1 < len(words) else ""
                readings = grammar.verb_readings(verb.lower())
                if verb.lower() in grammar.MODALS or verb.lower() in grammar.BE_FORMS:
                    question = [*words[:index], verb, "you", *words[index + 2 :]]
                elif readings:
                    base = next(iter(readings))[0]
                    question = [*words[:index], "do", "you", base, *words[index + 2 :]]
                else:
                    break
                return _capitalised_question(_to_you(" ".join(question)))
        return _capitalised_question(_to_you(text))
    if words[0].lower() in ("they", "you"):
        verb = words[1].lower() if len(words) > 1 else ""
        if verb in grammar.MODALS or verb in grammar.BE_FORMS or verb in grammar.HAVE_FORMS:
            return _capitalised_question(_to_you(" ".join([verb, "you", *words[2:]])))
        readings = grammar.verb_readings(verb)
        if readings:
            base = next(iter(readings))[0]
            return _capitalised_question(_to_you(" ".join(["do", "you", base, *words[2:]])))
    if words[0].lower() == "about":
        return _capitalised_question("what do you think about " + _to_you(" ".join(words[1:])))
    return _capitalised_question("what do you think of " + _to_you(text))


def _capitalised_question(text: str) -> str:
    text = _strip_end(text)
    return text[:1].upper() + text[1:] + "?"


def _statement_of(text: str) -> str:
    """A wh-clause's statement: "why we slow-ferment our dough" -> "we slow-ferment our dough"."""
    return _clean(re.sub(r"^(?:why|how|that|when)\s+", "", text, flags=re.IGNORECASE))


def _relative_statement(noun_phrase: str) -> str:
    """ "a bakery owner who got her evenings back" -> "a bakery owner got her evenings back"."""
    match = re.match(r"^(.+?)\s+(?:who|that|which)\s+(.+)$", noun_phrase)
    if not match:
        return ""
    verb = match.group(2).split()[0].lower()
    if not grammar.verb_readings(verb) and verb not in grammar.MODALS and verb not in grammar.BE_FORMS:
        return ""
    return f"{match.group(1)} {match.group(2)}"


def _appositive(subject: str) -> tuple[str, str]:
    """ "the farm that mills our flour, 40 miles from the bakery" -> (the farm..., "40 miles from the bakery")."""
    head, _, tail = subject.partition(", ")
    if not tail or len(tail.split()) > 8:
        return subject, ""
    if grammar.phrase_kind(tail) == "clause":
        return _clean(head), _clean(tail)  # "..., tickets are £35"
    first = tail.split()[0].lower()
    # "..., 40 miles from the bakery", "..., out on 3 March": a place or a time. "squash, mushrooms and
    # apples" is a list and "our revolutionary, guaranteed standups" a row of adjectives.
    if first[:1].isdigit() or first in grammar.PREPOSITIONS or first in ("out", "available", "open", "now", "just"):
        return _clean(head), _clean(tail)
    return subject, ""


def _details(sentences: list[str]) -> list[str]:
    details = []
    for sentence in sentences:
        text = _strip_end(DETAIL_LEAD.sub("", sentence))
        if 2 <= len(text.split()) <= 40:
            details.append(text)
    return details


def _keywords(*texts: str) -> tuple[str, ...]:
    words: list[str] = []
    for text in texts:
        for word in analysis.words(text):
            ordinary = word in analysis.STOPWORDS or word in grammar.INSTRUCTION_VERBS or word in words
            if len(word) > 2 and not ordinary and word not in ("tips", "post", "story", "steps", "ways"):
                words.append(word)
    return tuple(words[:12])


def read(prompt: str) -> Brief:
    """The brief of a prompt that `unusable` accepted."""
    text = prompt.replace("\u2019", "'").strip()
    links = URL.findall(text)
    wants_link = bool(links) and bool(
        re.search(r"\b(?:link|url|include|add|point|send people|drive traffic)\b", URL.sub("", text), re.I)
    )
    text = URL.sub("", text)
    parts = [part for part in re.split(r"(?<=[.!?])\s+|\n+", text) if analysis.WORD.search(part)]
    first = parts[0] if parts else text
    details = _details(parts[1:12])
    first, _, after_colon = first.partition(": ") if re.search(r"\w: \S", first) else (first, "", "")
    if after_colon:
        details.insert(0, _strip_end(after_colon))
    first = TONE_MENTION.sub("", PLATFORM_MENTION.sub("", first))
    brief = _instruction(_strip_end(first), details)
    return Brief(
        action=brief.action,
        subject=brief.subject,
        statement=brief.statement,
        question=brief.question,
        how=brief.how,
        audience=brief.audience,
        details=brief.details,
        steps=brief.steps,
        question_word=brief.question_word,
        link=links[0] if wants_link else "",
        keywords=_keywords(brief.subject, brief.statement, brief.how, brief.question, *brief.details[:2]),
    )


def _instruction(text: str, details: list[str]) -> Brief:
    """The first sentence of a prompt read as an instruction (or a bare topic)."""
    # A statement first, then instructions: "We sold out of rye by 10am, thank our customers and say ...".
    joined = "|".join(sorted(grammar.INSTRUCTION_VERBS | {"say", "mention"}))
    clauses = re.split(r",\s*(?:and\s+)?|\s+and\s+(?=(?:" + joined + r")\b)", text)
    if len(clauses) > 1 and clauses[0].split()[0].lower() in grammar.SUBJECT_PRONOUNS | {"our"}:
        statement = _clean(clauses[0])
        said = [
            _clean(re.sub(r"^(?:say|tell them|mention)\s+(?:that\s+)?", "", clause, flags=re.I))
            for clause in clauses[1:]
            if re.match(r"^(?:say|tell them|mention)\b", clause, re.I)
        ]
        verbs = [clause for clause in clauses[1:] if clause.split()[0].lower() in grammar.INSTRUCTION_VERBS]
        action: Action = "thank" if any(clause.lower().startswith("thank") for clause in verbs) else "talk"
        return Brief(action=action, subject="", statement=statement, details=tuple(said + details))

    stripped = LEAD_IN.sub("", text, count=1)
    stripped = WRITE_ABOUT.sub("", stripped, count=1)
    stripped = _clean(stripped)
    audience = ""
    lowered = stripped.lower()
    if re.match(r"^for\s+", lowered):
        audience, stripped = _split_people(stripped[4:].strip())
        lowered = stripped.lower()
    stripped = re.sub(r"^(?:about|on|regarding|covering|introducing|announcing)\s+", "", stripped, flags=re.I)
    if stripped != _clean(text):
        # What was left after "Write a post about": itself a topic, a wh-clause or an instruction again.
        if stripped.lower().startswith(tuple(grammar.INSTRUCTION_VERBS)):
            return _verb_led(stripped, audience, details)
        return _topic(stripped, audience, details, action="talk")
    return _verb_led(stripped, audience, details)


def _verb_led(text: str, audience: str, details: list[str]) -> Brief:
    words = text.split()
    verb = words[0].lower() if words else ""
    rest = " ".join(words[1:])
    steps = _count(text)
    if verb in ("announce", "introduce", "launch", "unveil", "reveal", "promote", "showcase", "highlight", "present"):
        if rest.lower().startswith("that "):
            return Brief(
                action="announce", subject="", statement=_clean(rest[5:]), audience=audience, details=tuple(details)
            )
        return _topic(rest, audience, details, action="announce")
    if verb in ("explain", "describe", "discuss", "clarify"):
        return _topic(rest, audience, details, action="explain")
    if verb in ("share", "give", "list", "offer", "write", "post", "create", "suggest"):
        lowered = rest.lower()
        story = re.match(
            r"^(?:a|the|our)?\s*(?:customer|client|short|quick|true)?\s*(?:story|case study)\s+"
            r"(?:about|of|from)\s+(.+)$",
            rest,
            re.I,
        )
        if story:
            return _topic(story.group(1), audience, details, action="story")
        if re.match(r"^(?:how|why|what|when)\b", lowered):
            return _topic(rest, audience, details, action="story" if lowered.startswith("how") else "explain")
        return _tips(rest, audience, details) or _topic(rest, audience, details, action="talk")
    if verb == "tell":
        story = re.match(r"^(?:the\s+)?story\s+of\s+(.+)$", rest, re.I)
        if story:
            return _topic(story.group(1), audience, details, action="story")
        people, remainder = _people_object(rest)
        remainder = re.sub(r"^(?:about|that)\s+", "", remainder, flags=re.I)
        return _topic(remainder, audience or "", details, action="talk")
    if verb == "invite":
        people, remainder = _people_object(rest)
        remainder = re.sub(r"^(?:to|for)\s+", "", remainder, flags=re.I)
        return _topic(remainder, audience or people, details, action="invite")
    if verb == "remind":
        people, remainder = _people_object(rest)
        remainder = re.sub(r"^(?:that|about|of)\s+", "", remainder, flags=re.I)
        brief = _topic(remainder, audience or people, details, action="remind")
        return brief
    if verb in ("thank", "celebrate"):
        people, remainder = _people_object(rest)
        remainder = re.sub(r"^(?:for)\s+", "", remainder, flags=re.I)
        return _topic(remainder, audience or people, details, action="thank")
    if verb in ("ask", "poll"):
        people, remainder = _people_object(rest)
        return Brief(
            action="ask",
            subject="",
            question=direct_question(remainder),
            audience=audience or people,
            details=tuple(details),
        )
    if verb == "how" and rest.lower().startswith("to "):
        how = re.sub(r"\s+in\s+(?:\d+|two|three|four|five|six|seven)\s+steps$", "", rest[3:], flags=re.I)
        return Brief(action="tips", subject="", how=_clean(how), audience=audience, details=tuple(details), steps=steps)
    # A bare title such as "5 tips for keeping sourdough fresh" (a carousel's topic) asks for tips as well;
    # "lessons", "mistakes" or "guide" alone may just name what a post is about.
    return _tips(text, audience, details, kinds=BARE_TIPS) or _topic(text, audience, details, action="talk")


TIPS = re.compile(
    r"^(?:(?:a|some|our|my|\d+|two|three|four|five|six|seven|simple|quick|practical|easy|"
    r"useful|\d+-step|[\w-]+-step|[\w-]+-minute)\s+)*(?:[\w-]+\s+)?(tips|ideas|ways|steps|"
    r"advice|recipe|routine|checklist|guide|lessons|mistakes)\b\s*(?:(for|on|about|to)\s+)?(.*)$",
    re.I,
)


BARE_TIPS = frozenset({"tips", "ideas", "ways", "steps", "advice"})


def _tips(text: str, audience: str, details: list[str], kinds: frozenset[str] | None = None) -> Brief | None:
    """The brief of a request for tips, ideas, ways or steps ("three ways to use stale bread"), or None;
    `kinds` narrows the words that ask for them."""
    tips = TIPS.match(text)
    if not tips or kinds is not None and tips.group(1).lower() not in kinds:
        return None
    connector, subject = (tips.group(2) or "").lower(), tips.group(3) or text
    if tips.group(1).lower() in ("recipe", "routine", "checklist", "guide"):
        subject = text
    people, topic = _split_people(subject) if tips.group(3) else ("", subject)
    first = (topic or subject).split(" ", 1)[0].lower()
    if connector == "to" and (first, "VB") in grammar.verb_readings(first):
        # "ways to use stale bread": after "to", a word that can be a verb's base form is an infinitive
        how = _clean(topic or subject)
        brief = Brief(action="tips", subject="", how=how, audience=people or audience, details=tuple(details))
    else:
        brief = _topic(topic or subject, people or audience, details, action="tips")
    return replace(brief, action="tips", steps=_count(text), question="", question_word="")


def _topic(text: str, audience: str, details: list[str], *, action: Action) -> Brief:
    """A topic in whatever shape it came: "why/how" + clause, a clause, "how to" + verb, or a noun phrase."""
    text = _clean(text)
    lowered = text.lower()
    if not audience:
        match = re.search(r"\s+for\s+(.+)$", text)
        if match and PEOPLE.fullmatch(match.group(1).strip()):
            audience = match.group(1).strip()
    if lowered.startswith("how to "):
        return Brief(
            action="tips" if action == "talk" else action,
            subject="",
            how=_clean(text[7:]),
            audience=audience,
            details=tuple(details),
            steps=_count(text),
        )
    if re.match(r"^(?:why|how|that)\s+\S+\s+\S+\s+\S", lowered):
        statement = _statement_of(text)
        wh = lowered.split()[0]
        return Brief(
            action="explain" if action == "talk" else action,
            subject="",
            statement=statement,
            audience=audience,
            details=tuple(details),
            question_word=wh if wh != "that" else "",
        )
    if lowered.startswith("what ") and " means" in lowered:
        subject = _clean(re.sub(r"^what\s+|\s+means\b.*$", "", text, flags=re.I))
        return Brief(action="explain", subject=subject, audience=audience, details=tuple(details))
    text, _, how_clause = text.partition(" and how ")
    if how_clause:
        details = [how_clause, *details]
    words = text.split()
    if (
        words
        and (words[0].lower() in grammar.SUBJECT_PRONOUNS and grammar.has_finite_verb(text))
        or (action in ("remind", "announce", "talk") and grammar.phrase_kind(text) == "clause")
    ):
        return Brief(action=action, subject="", statement=text, audience=audience, details=tuple(details))
    subject, appositive = _appositive(text)
    extra = list(details)
    if appositive and grammar.has_finite_verb(appositive, lenient=True):
        extra.insert(0, appositive)  # "our bread class on 14 June, tickets are £35"
    elif appositive:
        extra.insert(0, f"{'they are' if _plural(subject) else 'it is'} {appositive}")
    if not subject and not extra and audience:
        # "a post for small business owners who still close their books in spreadsheets"
        who = re.search(r"\b(?:who|that)\s+(?:still\s+|now\s+|often\s+)?(\w+)\s+(.*)$", audience)
        if who and grammar.verb_readings(who.group(1).lower()):
            base = next(iter(grammar.verb_readings(who.group(1).lower())))[0]
            subject = _to_you(f"{grammar.gerund(base)} {who.group(2)}")
    view = re.match(r"^(?:our|my|the)\s+(?:view|take|thinking|approach|stance|position)\s+on\s+(.+)$", subject, re.I)
    if view:
        subject = view.group(1)
    story = _relative_statement(subject) if action == "story" else ""
    return Brief(action=action, subject=subject, statement=story, audience=audience, details=tuple(extra))


def _plural(noun_phrase: str) -> bool:
    head = re.split(r"\s+(?:that|which|who|with|from|for|in|on|of|at)\s+", noun_phrase)[0].split()
    last = head[-1].lower() if head else ""
    return (last.endswith("s") and not last.endswith(("ss", "us", "is"))) or " and " in " ".join(head)
