"""Reading a post the way an editor does before it goes out: is every sentence whole, does it say one thing
once, is anything left over from how it was made?

Each check returns findings with a weight (how much a careful editor would mind); the scorer turns them
into the Message Clarity, Hook Strength and Novelty scores. The checks look for what makes a post
unpublishable, never for what makes one look like a template (hashtags, lists, emoji or a stock call to
action are not rewarded here): a plain post that reads well has no findings at all.

Kept as one module past 500 lines on purpose: it does one job, reading a post for findings (`read`); the checks
share its sentence splitting, patterns and word lists, and their weights are set against each other, so one
check is read and tuned beside the others.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from toolhost.providers.text import analysis, grammar

HASHTAG = re.compile(r"(?:(?<=\s)|^)#(\w+)", re.UNICODE)
# A link: with a scheme or "www.", or a bare domain followed by a path ("example.com/book?promo=X"); a bare
# domain alone ("example.com") is how people name a website and stays prose.
URL = re.compile(
    r"\b(?:https?://|www\.)\S+|\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|org|net|co|io|uk|us|ca|au|de|app|shop|dev)/\S*",
    re.IGNORECASE,
)
# The same word twice in a row ("and and", "in in"); a few words are doubled in good English ("had had").
DOUBLED_WORD = re.compile(r"\b(\w+)\s+\1\b", re.IGNORECASE)
GOOD_DOUBLES = frozenset({"had", "that", "is", "very", "so", "really", "bye", "no", "yes", "knock", "tick", "ha"})
# A sentence ends at an end mark followed by a space (so "2.6" and "example.com" stay whole) or a line break.
SENTENCE_BREAK = re.compile(r"(?<=[.!?\u2026])[\"'\u201d\u2019)]*[ \t]+|\n+")
LIST_ITEM = re.compile(r"^\s*(?:[-\u2022*]|\d{1,2}[.)]|\d{1,2}:\d{2})\s+")
LIST_MARKER = re.compile(r"(?:^|\s)(\d{1,2})[.)](?=\s|$)")
# Words a sentence cannot end on without an end mark: relative words and verbs that need an object.
OPEN_ENDINGS = grammar.word_set(
    """
        which than takes makes gives brings includes requires lets puts
        """
)
# Prepositions a teaser never trails off on ("Doors open at..."), though a sentence may end on them.
CUT_PREPOSITIONS = grammar.word_set(
    "of with from for at to into onto between than including like such as on in by about during until before "
    "after over around across through via without within"
)
# A verb that cannot close a sentence without its complement ("Thursday is").
AUXILIARIES = grammar.word_set("is are was were be been being am has have had will would can could should must shall")
BEFORE_AFTER = re.compile(r"^(?:before|after|then|now|myth|fact|reality)\s*:", re.IGNORECASE)
LABEL = re.compile(r"^([A-Z][\w'-]*(?: [\w'-]+){0,3}):\s+(?=\S)")

INSTRUCTION_OPENING = re.compile(
    r"^\s*(?:please\s+)?(?:can you\s+|could you\s+)?(?:write|create|draft|generate|compose|give me|produce|craft)"
    r"\b.{0,80}?\b(?:post|caption|tweet|thread|script|blog|article|copy|hook|update)s?\b",
    re.IGNORECASE,
)
PLATFORM_NAMES = r"(?:linkedin|instagram|insta|facebook|twitter|x|tiktok|threads|bluesky|mastodon|youtube|pinterest)"
PLATFORM_OPENING = re.compile(
    rf"^\s*(?:an?\s+)?(?:{PLATFORM_NAMES}\s+(?:post|caption|tweet|thread|video|description|update)"
    r"|(?:tweet|caption|post|thread)\s+(?:announcing|about|for|on|introducing))\b",
    re.IGNORECASE,
)
ASSISTANT_TALK = re.compile(
    r"^\s*(?:sure|certainly|of course|absolutely)\s*[!,.]|"
    r"\bhere(?:'s| is) (?:a|an|your) (?:[\w-]+ ){0,3}(?:post|caption|tweet|draft|version)"
    r"(?: for| about| that| you|:)|"
    r"\blet me know if you(?:'d| would)? (?:like|want|need)\b|\bfeel free to (?:adjust|edit|tweak|change)\b|"
    r"\bas an ai\b|\bi hope this helps\b|\b(?:word|character) count\b|"
    r"\b(?:below|above) (?:is|are) (?:a|an|the|some|your) (?:[\w-]+ ){0,3}"
    r"(?:post|caption|tweet|draft|version|option)s?\b|"
    r"\bhere are (?:some|a few|\w+) (?:[\w-]+ ){0,2}(?:captions|posts|tweets|options|versions|hashtags)\b|"
    r"\bi(?:'ve| have) (?:written|drafted|created|put together) (?:a|an|this|the|your)\b|"
    r"^\s*(?:in )?this (?:post|caption|tweet|thread|draft) (?:is|will|highlights|focuses|announces|covers)\b",
    re.IGNORECASE,
)
BRIEF_LABEL = re.compile(
    r"(?im)^\s*(?:topic|audience|target audience|goal|objective|tone|platform|post idea|prompt|format|cta|"
    r"call to action|brief|key message|word count|length|caption|post copy|option \d|version \d|variation \d|"
    r"hook|headline|body copy|hashtags|alt text|suggested image|suggested visual)\s*:"
)
BRIEF_ASIDE = re.compile(
    r"\((?:keep|under|max|maximum|no more than|friendly|professional|casual|include|mention|add|insert|use|"
    r"note to self|check with|confirm|verify|double-check|replace|swap in|tbd|todo)\b[^)]{0,80}\)|"
    # a bracketed note where a picture or a tag was meant to go ("[photo of the new oven]")
    r"\[(?:photo|image|picture|video|visual|graphic|gif|tag|add|insert|note)\b[^\]]{0,80}\]",
    re.IGNORECASE,
)
# Verbs a request to a writer starts with; pasted into a sentence where a noun belongs, they are echo.
PASTED_VERBS = grammar.INSTRUCTION_VERBS | frozenset({"launch", "promote", "reveal", "feature", "encourage"})
# Verbs that take a bare infinitive ("help share the load", "let us share"): a verb after them is no echo.
BARE_INFINITIVE_TAKERS = grammar.word_set("help helps helped let lets make makes made watch see hear please")
PREPOSITION_THEN_SUBJECT = re.compile(
    r"\b(?:of|about|for|with|from|into|onto|at|by|to|without|towards?|make|makes|let|lets|help|helps)\s+"
    r"(?:we|i|they|he|she)\s+(?!and\b|or\b)",
    re.IGNORECASE,
)
DETERMINER_THEN_PRONOUN = re.compile(
    r"\b(?:the|a|an|our|your|my|their)\s+(?:the|a|an|we|they|i|our|your|my)\b(?!-)", re.IGNORECASE
)
MARKDOWN = (
    re.compile(r"(?m)^\s{0,3}#{1,6}\s+\S"),
    re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__"),
    re.compile(r"\[[^\]\n]+\]\([^)\s]+\)"),
    re.compile(r"`[^`\n]+`"),
    re.compile(r"(?m)^\s*\*\s+\S"),
    # emphasis in single marks, a fenced block, a quote marker, HTML tags and entities, an escaped line break
    re.compile(r"(?<![\w*])\*[^*\s][^*\n]{0,60}[^*\s]\*(?![\w*])|(?<![\w_])_[^_\s][^_\n]{0,60}[^_\s]_(?![\w_])"),
    re.compile(r"(?m)```|^\s{0,3}>\s+\S"),
    re.compile(r"</?(?:b|i|p|br|strong|em|h[1-6]|ul|li|div|span|a)\b[^>]{0,40}>|&(?:amp|nbsp|quot|#\d{2,4});", re.I),
    re.compile(r"\\n"),
)
PLACEHOLDER = re.compile(
    r"\[(?:[A-Z][A-Z0-9 _/&-]{1,40}|insert[^\]]{0,40}|your [^\]]{1,30}|(?:name|date|time|email|link|url|company|"
    r"product|location|price|role|title)[^\]]{0,20})\]|"
    r"\{\{[^}]{1,40}\}\}|\{[a-z_]{2,30}\}|<(?:link|url|name|date|time|insert[^>]{0,30}|product)>|"
    r"\b(?:lorem ipsum|tktk)\b|\b(?:TODO|TBD|TBC|XXX+)\b|[$\u00a3\u20ac]X{2,}|\bX{2,}\s?%|\bXYZ\b|"
    r"\b(?:DATE|NAME|LINK|URL|PRODUCT|INSERT)\b|_{3,}|\[\s*\]|\(\s*\)|%s\b|\$\{\w+\}|\{[\w ]{2,30}\}|"
    r"<(?:your|company|brand|business|first|last|customer|client|city|event)[\w ]{0,30}>|"
    r"\((?:link|url|date|time|name|price|location|phone|email)(?: here)?\)|\bX{1,2}[/:.]X{2}\b",
    re.IGNORECASE,
)
# The placeholder words above count only in capitals ("on DATE"), the bracketed ones in any case.
_CAPITAL_ONLY = re.compile(r"^(?:TODO|TBD|TBC|DATE|NAME|LINK|URL|PRODUCT|INSERT|XYZ)$")
# Vocabulary of software-business framing, which reads as a stranger's voice in a post about food, skin,
# gear, care or money. Two distinct terms beside a product of another trade is the signal.
SOFTWARE_FRAMING = grammar.word_set(
    """
    workflow workflows kpi kpis okr okrs sprint sprints velocity stack churn deploy deploys deployment
    deployed pipeline pipelines saas onboard onboarding integrates integration integrations stakeholders
    scalable scale scales scaling streamline streamlines streamlined productivity roadmap backlog dashboard
    dashboards stand-up standup standups b2b synergy roi uptime api apis automate automates automated
    automation demo demos bottleneck bottlenecks bandwidth deliverables headcount sla slas seamlessly
    frictionless enterprise enterprises conversions funnel funnels leads quarterly stakeholder optimise
    optimize optimises optimizes reconciliation invoicing month-end crm users seats per-seat use-case
    use-cases efficiency efficiencies
    """
)
# What software is called when a post is about software, which a software brand's post names and a
# stranger's framing of a loaf or a serum does not.
SOFTWARE_PRODUCTS = grammar.word_set(
    """
    app apps software platform dashboard dashboards login feature features plugin release update updates
    integration integrations tool tools account accounts inbox spreadsheet spreadsheets csv sync syncs synced
    """
)
CONSUMER_WORDS = grammar.word_set(
    """
    loaf loaves bread breads sourdough dough croissant croissants pastry pastries bakery bakeries baker
    bagel bagels cake cakes cookie cookies muffin muffins scone scones rye baguette
    coffee coffees beans espresso latte lattes cappuccino roast roasted roasts brew brews barista tea teas
    beer beers ale lager wine wines cheese pizza burger burgers taco tacos soup salad chocolate dinner dinners
    menu recipe recipes flour butter cream serum serums moisturiser moisturizer skin skincare lipstick
    shampoo fragrance perfume candle candles jacket jackets sweater sweaters hoodie hoodies sneakers boots
    denim linen wool tee tees hike hikes hiking trail trails tent tents bike bikes curry sauce spices
    fiduciary portfolio wealth estate pension mortgage teeth tooth dental floss flossing cavity puppy
    puppies kitten kittens dog dogs cat cats yoga pilates massage haircut haircuts plumbing boiler garden
    gardens flowers bouquet bouquets florist sofa mattress pottery clay
    """
)


@dataclass(frozen=True, slots=True)
class Finding:
    """Something an editor would fix: its kind, a sentence saying where, and how much it weighs (0-3)."""

    kind: str
    detail: str
    weight: float


def prose(caption: str) -> str:
    """The caption without its hashtags and links, as a reader reads it."""
    return URL.sub(" ", HASHTAG.sub("", caption)).strip()


def sentences(text: str) -> list[str]:
    """The sentences of a text: end marks followed by a space, and line breaks, close one."""
    return [part.strip() for part in SENTENCE_BREAK.split(text) if part.strip() and analysis.WORD.search(part)]


def quote(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return f'"{text[:limit]}{"..." if len(text) > limit else ""}"'


def instruction_echo(caption: str) -> list[Finding]:
    """The brief pasted in: "Write a post about...", "Topic: ...", "Sure! Here is a caption", "(keep it short)"."""
    found: list[Finding] = []
    opening = caption.strip()
    for pattern in (INSTRUCTION_OPENING, PLATFORM_OPENING):
        match = pattern.search(opening[:160])
        if match:
            found.append(Finding("instruction_echo", f"it opens with the request itself ({quote(match.group(0))})", 3))
            break
    assistant = ASSISTANT_TALK.search(caption)
    if assistant:
        found.append(Finding("instruction_echo", f"it talks to whoever asked for it ({quote(assistant.group(0))})", 3))
    labels = BRIEF_LABEL.findall(caption)
    if labels:
        found.append(
            Finding("instruction_echo", f"it carries the brief's labels ({quote(labels[0])})", 2 + len(labels))
        )
    aside = BRIEF_ASIDE.search(caption)
    if aside:
        found.append(Finding("instruction_echo", f"it keeps a note to the writer ({quote(aside.group(0))})", 2.5))
    pasted = _pasted_request(prose(caption))
    if pasted:
        found.append(Finding("instruction_echo", f"a request is pasted into a sentence ({quote(pasted)})", 3))
    tags = [tag.lower() for tag in HASHTAG.findall(caption)]
    instruction_tags = [tag for tag in tags if tag in grammar.INSTRUCTION_VERBS]
    if instruction_tags:
        found.append(Finding("instruction_echo", f"a hashtag is a word of the request (#{instruction_tags[0]})", 1.5))
    return found


def _pasted_request(text: str) -> str:
    """The words of a request ("announce our launch") standing where a noun or a clause belongs."""
    for sentence in sentences(text):
        words = [word for word in grammar.tokens(sentence) if word[:1].isalnum() or word in ",;:"]
        lowered = [word.lower() for word in words]
        for index, word in enumerate(lowered):
            if word not in PASTED_VERBS:
                continue
            previous = lowered[index - 1] if index else ""
            following = lowered[index + 1] if index + 1 < len(lowered) else ""
            object_follows = following in grammar.DETERMINERS | grammar.POSSESSIVES | grammar.WH_WORDS or (
                following in {"that", "people", "followers", "customers", "tips"}
            )
            previous_tags = {tag for _, tag in grammar.verb_readings(previous)}
            slot_for_noun = (
                previous in grammar.PREPOSITIONS
                or previous in NOUN_DETERMINERS
                or previous in {"why", "how", "if", "does", "do", "did", "is", "are", "fix", "treating", "treat"}
                or previous_tags & {"VBZ", "VBD", "VBG"}
                and previous not in BARE_INFINITIVE_TAKERS
                and previous not in grammar.BE_FORMS
            )
            if slot_for_noun and object_follows and previous not in COORDINATING_SAFE:
                return " ".join(words[max(0, index - 2) : index + 4])
            if (index == 0 or previous in {":", ","}) and object_follows:
                # "Myth: introduce our new night cream is about...": the request used as a subject.
                rest = lowered[index + 1 : index + 10]
                for later in rest:
                    if later in {",", ";", "and", "if", "when", "that", "what", "who", "so", "because", "to"}:
                        break
                    if later in {"is", "are", "was", "feels", "deserves", "matters", "stalls", "works"}:
                        return " ".join(words[index : index + 6])
    return ""


NOUN_DETERMINERS = grammar.word_set("a an the this these those my our your their his her its every each another")
COORDINATING_SAFE = frozenset({"and", "or", "to", "please", "you", "us", "me", "them", "we", "i", "they"})


def truncation(caption: str) -> list[Finding]:
    """A post cut off: it ends on a word no sentence ends with, on an empty list item, or trails off mid-clause."""
    body = URL.sub("", HASHTAG.sub("", caption)).rstrip()
    without_emoji = re.sub(r"[\s\U0001f300-\U0001faff\u2600-\u27bf\ufe0f\u200d]+$", "", body)
    # An emoji after the last word closes the sentence the way a full stop does ("...plenty of asparagus 🍓").
    closed_by_emoji = len(without_emoji) < len(body)
    body = without_emoji
    if not body:
        return []
    markers = [(int(match.group(1)), match.end()) for match in LIST_MARKER.finditer(body)]
    if len(markers) >= 2 and markers[-1][1] == len(body) and markers[-1][0] == markers[-2][0] + 1:
        return [Finding("truncated", "it ends on an empty list item", 3)]
    if body[-1] in ",-\u2013\u2014/&" and not body.endswith(("--", "\u2014\u2014")):
        return [Finding("truncated", f'it stops on "{body[-1]}", mid-sentence', 3)]
    trailing = re.search(r"([A-Za-z']+)\s*(?:\.\.\.|\u2026)$", body)
    if trailing:
        # "Something big is coming..." is a teaser; "...and the best part is..." was cut.
        if trailing.group(1).lower() in grammar.DANGLING | AUXILIARIES | OPEN_ENDINGS | CUT_PREPOSITIONS:
            return [Finding("truncated", f'it trails off after "{trailing.group(1)}"', 3)]
        return []
    if body[-1] == ":":
        return [Finding("truncated", f"it stops on a label with nothing after it ({quote(body[-30:])})", 3)]
    if body[-1] in ".!?)\"'\u201d\u2019;" or body[-1].isdigit():
        return []
    last_word = re.findall(r"[A-Za-z']+", body)[-1:] or [""]
    if last_word[0].lower() in grammar.DANGLING | OPEN_ENDINGS | AUXILIARIES | {"why"}:
        return [Finding("truncated", f'it stops mid-sentence, after "{last_word[0]}"', 3)]
    # "...growth slowed sharply onc": a lower-case word no dictionary knows, with no end mark after it
    if closed_by_emoji:
        return []
    cut_word = last_word[0]
    cut = len(cut_word) >= 2 and cut_word.isalpha() and cut_word.islower() and not analysis.in_lexicon(cut_word)
    if cut and analysis.starts_a_longer_word(cut_word):
        return [Finding("truncated", f'it stops mid-word ("{cut_word}")', 3)]
    parts = sentences(body)
    final = parts[-1] if parts else ""
    earlier_closed = len(parts) >= 2 and all(part.rstrip()[-1:] in ".!?:" for part in parts[:-1])
    if earlier_closed and len(analysis.words(final)) >= 6:
        # Every other sentence ends with a mark and this one runs out: the post was cut.
        return [Finding("truncated", "its last sentence has no ending", 2)]
    if len(analysis.words(final)) >= 8 and len(analysis.words(body)) >= 25 and final[:1].isupper():
        return [Finding("truncated", "its last sentence has no ending", 1)]
    return []


def leftovers(caption: str) -> list[Finding]:
    """Links, markdown and placeholders a person would have removed or filled in."""
    found: list[Finding] = []
    for match in URL.finditer(caption):
        url = match.group(0)
        tracked = bool(re.search(r"[?&]\w+=", url))  # a query string: tracking or a campaign code
        inline = bool(caption[match.end() :].strip(" .)\n#").split())  # text continues after the link
        weight = 2.5 if tracked else 1.5 if inline else 1.0
        found.append(Finding("url", f"a raw link is left in the text ({quote(url, 40)})", weight))
    for pattern in MARKDOWN:
        markdown = pattern.search(caption)
        if markdown:
            found.append(Finding("markdown", f"markdown is left in ({quote(markdown.group(0), 30)})", 2.5))
            break
    placeholders = [
        match.group(0)
        for match in PLACEHOLDER.finditer(caption)
        if not _CAPITAL_ONLY.match(match.group(0).upper()) or match.group(0).isupper()
    ]
    if placeholders:
        found.append(Finding("placeholder", f"a placeholder was never filled in ({quote(placeholders[0], 30)})", 3))
    return found


def _content_words(text: str) -> list[str]:
    return [word for word in analysis.words(text) if word not in analysis.STOPWORDS and len(word) > 2]


def repetition(caption: str) -> list[Finding]:
    """The same sentence, phrase or keyword again and again."""
    found: list[Finding] = []
    text = prose(caption)
    parts = [re.sub(r"\W+", " ", part.lower()).strip() for part in sentences(text)]
    repeated = [part for part, count in Counter(parts).items() if count > 1 and len(part.split()) >= 2]
    if repeated:
        found.append(Finding("repetition", f'a sentence appears twice ("{repeated[0][:50]}")', 2.5))
    doubled = [
        match.group(0)
        for match in DOUBLED_WORD.finditer(text)
        if match.group(1).lower() not in GOOD_DOUBLES and not match.group(1).isdigit()
    ]
    if doubled:
        found.append(Finding("repetition", f'a word is written twice in a row ("{doubled[0]}")', 2.5))
    words = analysis.words(text)
    for size, times in ((4, 2), (3, 3)):
        grams = Counter(tuple(words[index : index + size]) for index in range(len(words) - size + 1))
        phrase, count = max(grams.items(), key=lambda item: item[1], default=((), 0))
        meaningful = [word for word in phrase if word not in analysis.STOPWORDS]
        if count >= times and len(meaningful) >= 2:
            # Once more is a refrain a writer may mean; three times and more is a loop.
            weight = 1.0 if count == times else min(3.0, 1.0 + (count - times + 1) * 0.75)
            found.append(Finding("repetition", f'"{" ".join(phrase)}" comes back {count} times', weight))
            break
    stems = [analysis.stem(word) for word in _content_words(text)]
    stuffed = ""
    if len(stems) >= 6:
        stem, count = Counter(stems).most_common(1)[0]
        if count >= 5 and count / len(stems) >= 0.2:
            stuffed = f'one word carries the post ("{stem}" {count} times)'
    for part in sentences(text):
        part_stems = [analysis.stem(word) for word in _content_words(part)]
        if len(part_stems) >= 6:
            stem, count = Counter(part_stems).most_common(1)[0]
            if count >= 4 or count >= 3 and count / len(part_stems) >= 0.35:
                stuffed = f'one sentence repeats "{stem}" {count} times'
    if stuffed:
        found.append(Finding("keyword_stuffing", stuffed, 2.5))
    echoed = _restated_sentence(text)
    if echoed and not repeated:
        # A long post may come back to its opening on purpose: this lowers the score without blocking alone.
        found.append(Finding("repetition", f"a sentence says again what another said ({quote(echoed, 50)})", 1.5))
    openings = Counter(" ".join(part.split()[:2]) for part in parts if len(part.split()) >= 3)
    if openings and openings.most_common(1)[0][1] >= 3:
        found.append(Finding("repetition", "three sentences or more open the same way", 1))
    return found


# Share of a sentence's content words (stems) another sentence already carried, from which it restates it.
RESTATED_SHARE = 0.75
RESTATED_MINIMUM = 3


def _restated_sentence(text: str) -> str:
    """A sentence whose content words another sentence of the post already said ("Our night cream is gentle.
    Our night cream is gentle on sensitive skin."): a thought written twice, not a refrain."""
    stem_sets: list[tuple[str, set[str]]] = []
    for part in sentences(text):
        stems = {analysis.stem(word) for word in _content_words(part)}
        if len(stems) >= RESTATED_MINIMUM:
            stem_sets.append((part, stems))
    for index, (part, stems) in enumerate(stem_sets):
        for _, other in stem_sets[:index]:
            smaller = min(len(stems), len(other))
            if len(stems & other) >= max(RESTATED_MINIMUM, RESTATED_SHARE * smaller):
                return part
    return ""


def _verb_checked(sentence: str) -> str:
    """The part of a sentence a verb is looked for in: without a leading label ("The result: ...")."""
    return LABEL.sub("", sentence)


def fragments(caption: str) -> list[Finding]:
    """Sentences with no verb, and pieces stitched together where a phrase of another kind belongs."""
    found: list[Finding] = []
    text = prose(caption)
    lines = [line for line in text.splitlines() if line.strip()]
    counted = [
        part
        for line in lines
        if not LIST_ITEM.match(line) and not line.rstrip().endswith(":")
        for part in sentences(line)
        if len(analysis.words(part)) >= 2
    ]
    # "Before: ... After: ..." is a device, not a fragment; the other sentences carry the verbs.
    unlabelled = [part for part in counted if not BEFORE_AFTER.match(part)]
    verbless = [part for part in unlabelled if not grammar.has_finite_verb(_verb_checked(part), lenient=True)]
    if len(verbless) >= 3 and len(verbless) / len(unlabelled) >= 0.5:
        weight = 3.0 if len(verbless) / len(unlabelled) >= 0.75 else 2.0
        found.append(
            Finding(
                "verbless",
                f"{len(verbless)} of {len(counted)} sentences have no verb ({quote(verbless[0], 40)})",
                weight,
            )
        )
    elif len(unlabelled) >= 3 and not any(grammar.has_finite_verb(_verb_checked(part)) for part in unlabelled):
        found.append(Finding("verbless", f"no sentence has a verb ({quote(unlabelled[0], 40)})", 3))
    elif unlabelled and len(unlabelled) <= 2 and len(verbless) == len(unlabelled) and len(analysis.words(text)) >= 4:
        found.append(
            Finding("verbless_post", f"it never says anything: no sentence has a verb ({quote(counted[0], 40)})", 2)
        )
    for pattern, label in (
        (PREPOSITION_THEN_SUBJECT, "a clause is pasted where a noun belongs"),
        (DETERMINER_THEN_PRONOUN, "two pieces are stitched together"),
    ):
        match = pattern.search(text)
        if match:
            found.append(Finding("stitched", f"{label} ({quote(match.group(0))})", 2.5))
    labelled = [part for part in counted if LABEL.match(part)]
    if len(labelled) >= 2 and len(labelled) / len(counted) >= 0.5:
        found.append(Finding("stitched", f"{len(labelled)} sentences are label-and-colon fragments", 1.5))
    lowercase_starts = re.findall(r"[a-z]{2,}[.!?]\s+([a-z]{2,})\b", text)
    if lowercase_starts and text[:1].isupper():
        found.append(Finding("stitched", f'a sentence starts in lower case ("{lowercase_starts[0]}")', 1))
    return found


# A comma, colon, semicolon or dash ends the stretch in which a subject meets its verb: "have a drink, find
# your seat" is two imperatives, not "drink find".
CLAUSE_BREAK = re.compile(r"[,;:\u2013\u2014]|\s-\s")


def _agreement_errors(sentence: str) -> list[str]:
    return [error for clause in CLAUSE_BREAK.split(sentence) for error in _clause_agreement_errors(clause)]


def _clause_agreement_errors(sentence: str) -> list[str]:
    words = [word for word in grammar.tokens(sentence) if word[:1].isalnum()]
    lowered = [word.lower() for word in words]
    errors: list[str] = []
    for index in range(1, len(words)):
        word, previous = lowered[index], lowered[index - 1]
        before = lowered[index - 2] if index >= 2 else ""
        inverted = before in grammar.MODALS or before in grammar.DO_FORMS or before in grammar.HAVE_FORMS
        inverted |= before in {"let", "make", "help", "watch", "see", "hear", "to", "is", "are", "was", "were"}
        tags = {tag for _, tag in grammar.verb_readings(word)}
        if (
            previous in ("we", "they", "you")
            and word in ("is", "was", "has", "does")
            and not inverted
            or previous == "i"
            and word in ("is", "are", "has", "does")
            and not inverted
            or previous in ("he", "she")
            and word in ("are", "were", "have", "do")
            and not inverted
            or previous in ("we", "they", "i")
            and tags == {"VBZ"}
            and not inverted
            or previous in ("he", "she", "it")
            and _subject_position(lowered, index - 1)
            and _base_only(tags)
        ):
            errors.append(f"{words[index - 1]} {words[index]}")
        elif _base_only(tags) | (word in ("are", "were", "have")) and _each_of_plural_before(lowered, index):
            errors.append(f"{words[index - 2]} {words[index]}")
        elif _is_plural_noun(previous) and (
            before in grammar.DETERMINERS | grammar.POSSESSIVES - grammar.SINGULAR_DETERMINERS
            and (index < 3 or lowered[index - 3] not in grammar.PREPOSITIONS)  # "the price of our loaves has"
            or index == 1
        ):
            following = lowered[index + 1] if index + 1 < len(words) else ""
            if word in ("is", "was", "has", "does") or tags == {"VBZ"} and _object_follows(following):
                errors.append(f"{words[index - 1]} {words[index]}")
        elif _is_singular_noun(previous) and _singular_determiner_before(lowered, index - 1):
            following = lowered[index + 1] if index + 1 < len(words) else ""
            if word in ("are", "were") or (
                tags and "VB" in tags and not tags & {"VBD", "VBZ"} and _object_follows(following)
            ):
                errors.append(f"{words[index - 1]} {words[index]}")
    return errors


def _base_only(tags: set[str]) -> bool:
    return "VB" in tags and not tags & {"VBD", "VBZ"}


SUBJECT_OPENERS = grammar.word_set(
    "because before when if and but so while until after once though although since as whenever unless"
)


def _subject_position(words: list[str], pronoun: int) -> bool:
    """Whether the pronoun at `pronoun` is a subject: first in the sentence or after a conjunction."""
    return pronoun == 0 or words[pronoun - 1] in SUBJECT_OPENERS


def _each_of_plural_before(words: list[str], verb: int) -> bool:
    """ "Each of our customers know": the verb of "each of" + a plural is singular."""
    if verb < 3 or not _is_plural_noun(words[verb - 1]):
        return False
    window = words[max(0, verb - 5) : verb - 1]
    return any(
        words_pair == ("each", "of") or words_pair == ("one", "of")
        for words_pair in zip(window, window[1:], strict=False)
    )


def _is_plural_noun(word: str) -> bool:
    return (
        len(word) > 3
        and word.endswith("s")
        and not word.endswith(("ss", "us", "is", "ics", "'s"))
        and word not in grammar.SINGULAR_S_WORDS
        and not grammar.verb_readings(word) & {(word, "VB")}
    )


# Nouns for groups, which British English gives a plural verb ("the team are").
COLLECTIVE_NOUNS = grammar.word_set(
    "team staff crew family group government company club band police audience committee board class public "
    "majority couple pair jury council community"
)


def _is_singular_noun(word: str) -> bool:
    return (
        word.isalpha()
        and word not in COLLECTIVE_NOUNS
        and grammar.word_class(word) in ("WORD", "VERB")
        and not word.endswith("s")
        and word not in grammar.PLURAL_WORDS
        and word not in grammar.DETERMINERS
        and not {tag for _, tag in grammar.verb_readings(word)} & {"VBD", "VBN", "VBG"}
    )


def _object_follows(word: str) -> bool:
    return (
        word in grammar.DETERMINERS
        or word in grammar.POSSESSIVES
        or word in grammar.OBJECT_PRONOUNS
        or word in grammar.WH_WORDS
        or word[:1].isdigit()
        or word in {"two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "every", "each"}
    )


def _singular_determiner_before(words: list[str], noun: int) -> bool:
    """A singular determiner opens the noun phrase that ends at `noun` ("the new invoicing feature")."""
    for index in range(noun - 1, max(-1, noun - 4), -1):
        word = words[index]
        if word in grammar.SINGULAR_DETERMINERS - {"that", "one"} or word == "the":
            return word != "the" or index == 0 or words[index - 1] in {",", "and", "but", "so", "because", "when"}
        if word in grammar.PREPOSITIONS or word in grammar.DETERMINERS or not word.isalpha() or word.endswith("s"):
            return False
        if {tag for _, tag in grammar.verb_readings(word)} & {"VBZ", "VBD"}:
            return False
    return False


def agreement(caption: str) -> list[Finding]:
    """Subjects that disagree with their verbs ("we is", "our bakers bakes every loaf", "this serum are")."""
    errors = [error for part in sentences(prose(caption)) for error in _agreement_errors(part)]
    if not errors:
        return []
    return [Finding("agreement", f'a subject and its verb disagree ("{errors[0]}")', min(3.0, 1.5 * len(errors)))]


def industry_mix(caption: str) -> list[Finding]:
    """Software-business framing about a product of another trade ("our sourdough helps teams hit KPIs")."""
    words = set(analysis.words(caption.lower()))
    software = words & SOFTWARE_FRAMING
    consumer = words & CONSUMER_WORDS
    # A bakery-software post names its app and its bakeries' flour: that is its trade, not a stranger's.
    about_software = words & (SOFTWARE_PRODUCTS - SOFTWARE_FRAMING)
    if len(software) >= 2 and consumer and not about_software:
        return [
            Finding(
                "industry_mix",
                f"it frames {sorted(consumer)[0]} in software terms ({', '.join(sorted(software)[:3])})",
                2.5,
            )
        ]
    return []


def hashtag_wall(caption: str) -> list[Finding]:
    """More hashtags than words of prose."""
    tags = HASHTAG.findall(caption)
    body_words = len(analysis.words(prose(caption)))
    if len(tags) >= 8 and len(tags) >= body_words:
        return [Finding("hashtag_wall", f"{len(tags)} hashtags against {body_words} words", 2)]
    return []


def read(caption: str) -> list[Finding]:
    """Every finding about a caption, heaviest first."""
    findings = (
        instruction_echo(caption)
        + truncation(caption)
        + leftovers(caption)
        + repetition(caption)
        + fragments(caption)
        + agreement(caption)
        + industry_mix(caption)
        + hashtag_wall(caption)
    )
    return sorted(findings, key=lambda finding: -finding.weight)
