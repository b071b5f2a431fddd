"""What a built-in text is made of: the request's material, and the hooks, bodies and calls to action drawn from it.

The material (topic, brand facts, platform rules, the prompt's figures and details) is chosen once per request;
every hook family, body structure and call to action is a function of it and the seeded generator, so the same
inputs give the same text. The built-in provider assembles these into captions, scripts, blogs and storyboards.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from toolhost.providers.platforms import PlatformRules, rules_for
from toolhost.providers.text.base import (
    BrandContext,
    HookFamily,
    ProofPoint,
)
from toolhost.providers.text.compose import (
    FIGURE,
    clause,
    clip,
    keywords,
    lower_first,
    overlap,
    prompt_details,
    prompt_figures,
    sentence,
    upper_first,
)

STRUCTURES = ("problem_solution", "list", "insight", "before_after", "question_led")


@dataclass(frozen=True, slots=True)
class Material:
    """What one piece of writing may draw on, chosen once per request."""

    topic: str
    brand: BrandContext
    rules: PlatformRules
    platform: str | None
    pain: str
    aspiration: str
    angle: str
    value: str
    proof: ProofPoint | None
    figures: tuple[str, ...]
    details: tuple[str, ...]
    we: str
    short: str

    @property
    def brand_name(self) -> str:
        return self.brand.name or ("we" if self.we == "we" else "I")


def _best(options: tuple[str, ...] | list[str], topic: str, rng: random.Random) -> str:
    if not options:
        return ""
    ranked = sorted(options, key=lambda option: -overlap(option, topic))
    if overlap(ranked[0], topic) > 0:
        return ranked[0]
    return rng.choice(list(options))


def material(
    topic: str,
    brand: BrandContext,
    platform: str | None,
    rng: random.Random,
    prompt: str = "",
    angle: str | None = None,
) -> Material:
    proofs = [point for point in brand.proof_points if point.verified] or list(brand.proof_points)
    ranked_proofs = sorted(proofs, key=lambda point: -overlap(point.claim + " " + point.evidence, topic))
    chosen_angle = angle or _best(
        tuple(name for name, _ in brand.content_pillars) + brand.messaging_pillars, topic, rng
    )
    perspective = brand.perspective.lower()
    we = "I" if ("singular" in perspective or perspective.strip() in {"i", "first person"}) else "we"
    figures = tuple(prompt_figures(prompt)) + tuple(
        point.claim for point in ranked_proofs if FIGURE.search(point.claim)
    )
    return Material(
        topic=topic,
        brand=brand,
        rules=rules_for(platform),
        platform=platform,
        pain=_best(brand.audience_pains, topic, rng),
        aspiration=_best(brand.audience_aspirations, topic, rng),
        angle=chosen_angle,
        value=_best(brand.value_propositions, topic + " " + chosen_angle, rng),
        proof=ranked_proofs[0] if ranked_proofs else None,
        figures=figures,
        details=tuple(prompt_details(prompt)),
        we=we,
        short=_short_subject(topic, brand),
    )


def _short_subject(topic: str, brand: BrandContext) -> str:
    """A short name for the topic for its second and later mentions, so the long topic is not repeated."""
    if len(topic) <= 36:
        return topic
    lowered = topic.lower()
    for term in list(brand.preferred_terms) + [name for name, _ in brand.content_pillars]:
        if term.lower() in lowered:
            return term.lower()
    words = keywords(topic, 8)
    nouns = [word for word in words if not word.endswith(("ing", "ed", "ly"))]
    return " ".join(nouns[-2:]) if len(nouns) >= 2 else "this"


# --- hooks -------------------------------------------------------------------------------------------------


def _hook_curiosity(m: Material, rng: random.Random) -> str:
    options = [
        f"Why does {m.topic} stall right when it matters most?",
        f"What would change if {m.topic} took half the guesswork?",
        f"The question to ask before you start on {m.topic}:",
        f"Ever wondered why {m.topic} feels harder than it should?",
    ]
    if m.pain:
        options.append(f"{sentence(m.pain)} So why do we keep doing {m.short} the same way?")
    return rng.choice(options)


def _hook_authority(m: Material, rng: random.Random) -> str:
    subject = "We" if m.we == "we" else "I"
    if m.proof is not None:
        claim = clause(m.proof.claim)
        return rng.choice(
            [
                f"{upper_first(claim)}. Here is what that taught {'us' if m.we == 'we' else 'me'} about {m.topic}.",
                f"{subject} have the results to show for it: {claim}. Here is how that applies to {m.topic}.",
            ]
        )
    if m.brand.name:
        return rng.choice(
            [
                f"At {m.brand.name}, {m.topic} is our daily work. Here is what holds up.",
                f"{subject} work on {m.topic} with clients every week. Here is what gets results.",
            ]
        )
    return f"{subject} work on {m.topic} every week. Here is what gets results."


def _hook_pain_point(m: Material, rng: random.Random) -> str:
    options = [
        f"Stop treating {m.topic} as an afterthought.",
        f"The mistake that quietly breaks {m.topic}, and how to avoid it.",
    ]
    if m.pain:
        options += [
            f"{sentence(m.pain)} Here is how to fix that with {m.short}.",
            f"If {clause(m.pain)}, this is for you: a better way to handle {m.topic}.",
        ]
    return rng.choice(options)


def _hook_contrarian(m: Material, rng: random.Random) -> str:
    return rng.choice(
        [
            f"Unpopular opinion: more effort will not fix {m.topic}.",
            f"Most advice about {m.topic} is backwards. Here is what actually works.",
            f"Myth: {m.topic} is about working harder. Reality: it is about a clearer process.",
        ]
    )


def _hook_data_driven(m: Material, rng: random.Random) -> str:
    if not m.figures:
        return _hook_curiosity(m, rng)
    figure = clip(clause(m.figures[0]), 150)
    return rng.choice(
        [
            f"{upper_first(figure)}. That number is why {m.topic} deserves a closer look.",
            f"One figure worth knowing about {m.topic}: {figure}.",
        ]
    )


HOOKS: dict[str, Callable[[Material, random.Random], str]] = {
    "curiosity": _hook_curiosity,
    "authority": _hook_authority,
    "pain_point": _hook_pain_point,
    "contrarian": _hook_contrarian,
    "data_driven": _hook_data_driven,
}


def pick_family(requested: HookFamily | None, m: Material, rng: random.Random) -> str:
    if requested:
        return requested
    families = ["curiosity", "pain_point", "contrarian", "authority"]
    if m.figures:
        families.append("data_driven")
    return rng.choice(families)


# --- bodies ------------------------------------------------------------------------------------------------


def proof_sentence(m: Material) -> str:
    if m.proof is None:
        return ""
    claim = clause(m.proof.claim)
    if m.proof.evidence:
        return sentence(f"The proof: {claim} ({m.proof.evidence.strip().rstrip('.')})")
    return sentence(f"The proof: {claim}")


def _value_sentence(m: Material, rng: random.Random) -> str:
    if not m.value:
        return ""
    value = clause(m.value)
    options = [f"What helps: {value}.", f"That is where {m.brand_name} comes in: {value}."]
    if m.we == "we" and m.brand.name:
        options.append(f"It is why we built {m.brand.name}: {value}.")
    return rng.choice(options)


def _detail_sentences(m: Material) -> list[str]:
    return [sentence(detail) for detail in m.details[:2]]


def body_problem_solution(m: Material, rng: random.Random) -> list[str]:
    first = (
        sentence(f"If {clause(m.pain)}, {m.short} is usually where it shows first")
        if m.pain
        else sentence(f"{upper_first(m.topic)} rarely fails for lack of effort. It fails for lack of a clear process")
    )
    second = _value_sentence(m, rng)
    if m.angle:
        second = (second + " " + sentence(f"Start with {lower_first(m.angle)}, then build from there")).strip()
    return [first, second, *_detail_sentences(m), proof_sentence(m)]


def _list_items(m: Material) -> list[str]:
    items = [clause(value) for value in m.brand.value_propositions[:3]]
    items += [clause(pillar) for pillar in m.brand.messaging_pillars[:3]]
    items += [clause(detail) for detail in m.details[:3]]
    unique = list(dict.fromkeys(item for item in items if 3 <= len(item) <= 160))
    return unique[:3]


def _body_list(m: Material, rng: random.Random) -> list[str]:
    items = _list_items(m)
    if len(items) < 2:
        return body_insight(m, rng)
    words = {2: "Two", 3: "Three"}
    lines = [f"{words[len(items)]} things that make {m.topic} work:"]
    lines += [f"{number}. {upper_first(item)}" for number, item in enumerate(items, start=1)]
    return ["\n".join(lines), proof_sentence(m)]


def body_insight(m: Material, rng: random.Random) -> list[str]:
    if m.angle:
        focus = lower_first(m.angle)
        first = rng.choice(
            [
                sentence(f"Here is the shift: treat {m.short} as part of {focus}, not a separate task"),
                sentence(f"The teams that get {m.short} right keep it tied to {focus}"),
            ]
        )
    else:
        first = rng.choice(
            [
                sentence(f"Here is the shift: treat {m.short} as a habit with an owner, not a one-off task"),
                sentence(f"The teams that get {m.short} right decide who owns it and when it happens"),
            ]
        )
    return [first, _value_sentence(m, rng), *_detail_sentences(m), proof_sentence(m)]


def _body_before_after(m: Material, rng: random.Random) -> list[str]:
    if not (m.pain and m.aspiration):
        return body_problem_solution(m, rng)
    return [
        f"Before: {clause(m.pain)}.\nAfter: {clause(m.aspiration)}.",
        sentence(f"The difference is how you approach {m.short}"),
        _value_sentence(m, rng),
        proof_sentence(m),
    ]


def _body_question_led(m: Material, rng: random.Random) -> list[str]:
    questions = [f"Where does {m.short} slow you down?"]
    if m.pain:
        questions.append(f"For many, it is this: {clause(m.pain)}.")
    answer = _value_sentence(m, rng) or sentence(f"Start small: pick one part of {m.topic} and make it repeatable")
    return [" ".join(questions), answer, *_detail_sentences(m), proof_sentence(m)]


BODIES: dict[str, Callable[[Material, random.Random], list[str]]] = {
    "problem_solution": body_problem_solution,
    "list": _body_list,
    "insight": body_insight,
    "before_after": _body_before_after,
    "question_led": _body_question_led,
}


# --- calls to action ---------------------------------------------------------------------------------------


def cta(m: Material, rng: random.Random) -> str:
    platform = m.platform or "general"
    voice = m.brand.voice_for(m.platform)
    style = (voice.cta_style if voice else "").lower()
    topic = m.short
    if "question" in style or "ask" in style:
        return f"What is your biggest question about {topic}? Tell us in the comments."
    options: dict[str, list[str]] = {
        "linkedin": [
            f"How does your team handle {topic}? Share one thing that works in the comments.",
            "If this is on your list for the quarter, save this post and share it with your team.",
        ],
        "twitter": [f"Reply with your take on {topic}.", "Repost if your team needs this."],
        "threads": [
            f"What would you add about {topic}? Reply below.",
            "Share this with a teammate who needs it.",
        ],
        "bluesky": [f"Reply with your take on {topic}.", "Repost if this helps your team."],
        "mastodon": [
            f"How do you handle {topic}? Reply and compare notes.",
            "Boost this if it helps your team.",
        ],
        "instagram": [
            "Save this for your next planning session and share it with a teammate.",
            "Follow for more and tap the link in bio to learn more.",
        ],
        "tiktok": [
            "Follow for part two, and comment your question below.",
            "Comment your question and follow for more.",
        ],
        "youtube": [
            "Subscribe for the next breakdown and tell us in the comments what to cover.",
            f"Tell us in the comments how you approach {topic}, and subscribe for more.",
        ],
        "facebook": [
            f"Tell us in the comments: how do you approach {topic}?",
            "Share this with a friend who needs it.",
        ],
        "general": [
            f"Share this with someone who is working on {topic}.",
            f"Tell us how you approach {topic}.",
        ],
    }
    return rng.choice(options.get(platform, options["general"]))
