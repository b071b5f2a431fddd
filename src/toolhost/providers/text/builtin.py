"""The built-in text provider: a deterministic composer driven by the brand runtime and the platform rules.

It never invents facts: every figure, claim and testimonial it writes comes from the request or the brand
(proof points, value propositions); the rest is connective wording. Choices (hook template, structure, CTA)
are drawn from a generator seeded by the inputs, so the same inputs give the same text.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from toolhost.providers.platforms import PlatformRules, rules_for
from toolhost.providers.text import carousel as carousel_templates
from toolhost.providers.text.base import (
    AdaptRequest,
    BrandContext,
    CarouselRequest,
    HookFamily,
    PlanPostDraft,
    PlanPostRequest,
    PostRequest,
    ProofPoint,
    StoryboardRequest,
)
from toolhost.providers.text.compose import (
    FIGURE,
    apply_style,
    clause,
    clip,
    cut_at_sentence,
    extract_topic,
    fit_blocks,
    hashtags_for,
    keywords,
    lower_first,
    overlap,
    prompt_details,
    prompt_figures,
    seeded,
    sentence,
    sentences,
    upper_first,
)
from toolhost.providers.text.terms import find_terms, remove_terms

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


def _material(
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


def _pick_family(requested: HookFamily | None, m: Material, rng: random.Random) -> str:
    if requested:
        return requested
    families = ["curiosity", "pain_point", "contrarian", "authority"]
    if m.figures:
        families.append("data_driven")
    return rng.choice(families)


# --- bodies ------------------------------------------------------------------------------------------------


def _proof_sentence(m: Material) -> str:
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


def _body_problem_solution(m: Material, rng: random.Random) -> list[str]:
    first = (
        sentence(f"If {clause(m.pain)}, {m.short} is usually where it shows first")
        if m.pain
        else sentence(f"{upper_first(m.topic)} rarely fails for lack of effort. It fails for lack of a clear process")
    )
    second = _value_sentence(m, rng)
    if m.angle:
        second = (second + " " + sentence(f"Start with {lower_first(m.angle)}, then build from there")).strip()
    return [first, second, *_detail_sentences(m), _proof_sentence(m)]


def _list_items(m: Material) -> list[str]:
    items = [clause(value) for value in m.brand.value_propositions[:3]]
    items += [clause(pillar) for pillar in m.brand.messaging_pillars[:3]]
    items += [clause(detail) for detail in m.details[:3]]
    unique = list(dict.fromkeys(item for item in items if 3 <= len(item) <= 160))
    return unique[:3]


def _body_list(m: Material, rng: random.Random) -> list[str]:
    items = _list_items(m)
    if len(items) < 2:
        return _body_insight(m, rng)
    words = {2: "Two", 3: "Three"}
    lines = [f"{words[len(items)]} things that make {m.topic} work:"]
    lines += [f"{number}. {upper_first(item)}" for number, item in enumerate(items, start=1)]
    return ["\n".join(lines), _proof_sentence(m)]


def _body_insight(m: Material, rng: random.Random) -> list[str]:
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
    return [first, _value_sentence(m, rng), *_detail_sentences(m), _proof_sentence(m)]


def _body_before_after(m: Material, rng: random.Random) -> list[str]:
    if not (m.pain and m.aspiration):
        return _body_problem_solution(m, rng)
    return [
        f"Before: {clause(m.pain)}.\nAfter: {clause(m.aspiration)}.",
        sentence(f"The difference is how you approach {m.short}"),
        _value_sentence(m, rng),
        _proof_sentence(m),
    ]


def _body_question_led(m: Material, rng: random.Random) -> list[str]:
    questions = [f"Where does {m.short} slow you down?"]
    if m.pain:
        questions.append(f"For many, it is this: {clause(m.pain)}.")
    answer = _value_sentence(m, rng) or sentence(f"Start small: pick one part of {m.topic} and make it repeatable")
    return [" ".join(questions), answer, *_detail_sentences(m), _proof_sentence(m)]


BODIES: dict[str, Callable[[Material, random.Random], list[str]]] = {
    "problem_solution": _body_problem_solution,
    "list": _body_list,
    "insight": _body_insight,
    "before_after": _body_before_after,
    "question_led": _body_question_led,
}


# --- calls to action ---------------------------------------------------------------------------------------


def _cta(m: Material, rng: random.Random) -> str:
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


# --- the provider ------------------------------------------------------------------------------------------


def _clean(text: str, brand: BrandContext, platform: str | None) -> str:
    blocked = brand.blocked_terms(platform)
    if blocked and find_terms(text, blocked):
        text = remove_terms(text, blocked)
    text = re.sub(r"\.\.(?!\.)", ".", text)
    if brand.name:
        # Lower-casing a clause's first letter must not lower-case the brand's own name.
        text = re.sub(rf"(?<![\w#]){re.escape(brand.name)}(?!\w)", brand.name, text, flags=re.IGNORECASE)
    return apply_style(text, brand)


def _words(count: int) -> str:
    return {2: "two", 3: "three", 4: "four", 5: "five"}.get(count, str(count))


class BuiltinTextProvider:
    """Writes offline from the brand runtime and the platform rules; deterministic for the same inputs."""

    name = "builtin"

    # -- posts
    async def write(self, request: PostRequest) -> str:
        """A caption, hook, script or blog post."""
        return self.compose(request)

    def compose(self, request: PostRequest) -> str:
        """The synchronous composer behind `write` (plans call it for many posts)."""
        topic = extract_topic(request.prompt)
        rng = seeded(
            request.prompt,
            request.content_type,
            request.platform,
            request.hook_family,
            request.angle,
            request.variant,
            request.brand.name,
            request.brand.tone,
        )
        m = _material(topic, request.brand, request.platform, rng, request.prompt, request.angle)
        family = _pick_family(request.hook_family, m, rng)
        hook = request.hook or HOOKS[family](m, rng)
        if request.content_type == "hook":
            text = clip(hook, 120)
        elif request.content_type == "script":
            text = self._script(m, hook, request.prompt, rng)
        elif request.content_type == "blog":
            text = self._blog(m, hook, rng)
        else:
            text = self._caption(m, hook, rng)
        return _clean(text, request.brand, request.platform)

    def _caption(self, m: Material, hook: str, rng: random.Random) -> str:
        structure = rng.choice(STRUCTURES)
        body = [block for block in BODIES[structure](m, rng) if block]
        voice = m.brand.voice_for(m.platform)
        tags = hashtags_for(m.topic, m.brand, m.rules, voice.hashtag_strategy if voice else "")
        cta = _cta(m, rng)
        separator = "\n\n" if m.rules.line_breaks else " "
        if not m.rules.line_breaks:
            body = [block.replace("\n", " ") for block in body[:2]]
        ending = [cta, " ".join(tags)] if tags else [cta]
        return fit_blocks([hook, *body, *ending], m.rules.caption_limit, separator, keep_last=len(ending))

    def _script(self, m: Material, hook: str, prompt: str, rng: random.Random) -> str:
        stated = re.search(
            r"(\d{1,3})\s*(?:-|\s)?(s|sec|secs|second|seconds|min|minute|minutes)\b", prompt, re.IGNORECASE
        )
        seconds = 50
        if stated:
            seconds = int(stated.group(1)) * (60 if stated.group(2).lower().startswith("min") else 1)
            seconds = max(10, min(seconds, 600))
        beats = [block for block in _body_problem_solution(m, rng) if block][:3]
        if len(beats) < 3:
            beats.append(sentence(f"Try one change to {m.topic} this week and watch what it does"))
        hook_end = max(3, round(seconds * 0.1))
        cta_start = seconds - max(5, round(seconds * 0.12))
        span = (cta_start - hook_end) / len(beats)
        lines = [f"HOOK (0-{hook_end}s): {hook}", "", "BODY"]
        for index, beat in enumerate(beats):
            start = round(hook_end + index * span)
            end = round(hook_end + (index + 1) * span)
            lines.append(f"[{start}-{end}s] {beat.replace(chr(10), ' ')}")
        lines += ["", f"CTA ({cta_start}-{seconds}s): {_cta(m, rng)}"]
        return "\n".join(lines)

    def _blog(self, m: Material, hook: str, rng: random.Random) -> str:
        title = upper_first(clip(m.topic, 70))
        if m.brand.name and rng.random() < 0.5:
            title = f"{title}: what {m.brand.name} has learned"
        sections: list[tuple[str, str]] = []
        if m.pain:
            sections.append(
                (
                    "The problem",
                    sentence(f"{upper_first(clause(m.pain))}. That is where {m.topic} tends to break"),
                )
            )
        if m.angle:
            sections.append((upper_first(clip(m.angle, 60)), " ".join(_body_insight(m, rng)[:2])))
        for value in m.brand.value_propositions[:2]:
            sections.append((upper_first(clip(clause(value), 60)), sentence(f"Applied to {m.topic}, {clause(value)}")))
        if m.proof is not None:
            sections.append(("What the results show", _proof_sentence(m)))
        for detail in m.details[:2]:
            sections.append((upper_first(clip(clause(detail), 60)), sentence(detail)))
        if len(sections) < 3:
            sections.append(("Where to start", sentence(f"Pick one part of {m.topic} and make it repeatable")))
            sections.append(
                (
                    "How to keep it going",
                    sentence(f"Review {m.topic} on a fixed rhythm and adjust one thing at a time"),
                )
            )
        sections = sections[:5]
        parts = [
            f"# {title}",
            hook,
            sentence(f"This post walks through {_words(len(sections))} parts of {m.topic}"),
        ]
        for heading, text in sections:
            parts += [f"## {heading}", text]
        parts += [
            "## Conclusion",
            sentence(f"{upper_first(m.topic)} gets easier once it has a clear owner and a clear process"),
            _cta(m, rng),
        ]
        return "\n\n".join(parts)

    # -- adaptation
    async def adapt(self, request: AdaptRequest) -> str:
        """Rewrites for the target: its limit and hashtag guidance, cut at sentence boundaries, its voice."""
        rules = rules_for(request.target_platform)
        brand = request.brand
        source_tags = re.findall(r"(?:(?<=\s)|^)#\w+", request.content)
        body = re.sub(r"(?:(?<=\s)|^)#\w+", "", request.content)
        body = _clean(body, brand, request.target_platform)
        parts = [part for part in sentences(body) if part]
        voice = brand.voice_for(request.target_platform)
        tags = [tag for tag in dict.fromkeys(source_tags)][: rules.hashtags_max]
        if len(tags) < rules.hashtags_min:
            topic = " ".join(keywords(body, 4))
            extra = hashtags_for(topic, brand, rules, voice.hashtag_strategy if voice else "")
            tags += [tag for tag in extra if tag.lower() not in {existing.lower() for existing in tags}]
            tags = tags[: max(rules.hashtags_min, len(tags) if len(tags) <= rules.hashtags_max else rules.hashtags_max)]
        tag_text = " ".join(tags)
        separator = "\n\n" if rules.line_breaks else " "
        room = rules.caption_limit - (len(tag_text) + len(separator) if tag_text else 0)
        # Keep the opening line and the closing call to action; drop middle sentences until it fits.
        kept = list(parts)
        while len(" ".join(kept)) > room and len(kept) > 2:
            del kept[-2]
        text = cut_at_sentence(" ".join(kept), room) if kept else ""
        if rules.line_breaks and len(kept) > 2 and len(text) > 200:
            middle = " ".join(kept[1:-1])
            text = separator.join(block for block in (kept[0], middle, kept[-1]) if block)
            if len(text) > room:
                text = cut_at_sentence(" ".join(kept), room)
        return (text + separator + tag_text).strip() if tag_text else text

    # -- storyboard
    async def storyboard(self, request: StoryboardRequest) -> dict[str, Any]:
        """Frames from the concept and the brand: hook first, CTA last, shots varied, durations exact."""
        rng = seeded(
            "storyboard",
            request.concept,
            request.platform,
            request.duration,
            request.scenes,
            request.style,
            request.brand.name,
        )
        topic = extract_topic(request.concept)
        m = _material(topic, request.brand, None, rng, request.concept)
        character = _character(request, m)
        beats = _story_beats(m, request.scenes - 2)
        hook = HOOKS[_pick_family(None, m, rng)](m, rng)
        cta = (
            _cta(m, rng)
            if request.platform not in {"tiktok", "instagram-reels", "youtube-shorts"}
            else ("Follow for more, and comment your question below.")
        )
        captions = [hook, *beats, cta]
        durations = split_duration(request.duration, len(captions))
        shots = _shot_sequence(len(captions), rng)
        movements = [
            "static",
            "zoom-in",
            "pan-left",
            "tracking",
            "zoom-out",
            "pan-right",
            "tilt-up",
            "tilt-down",
        ]
        visual = request.style or "clean, natural light, brand colours"
        frames = []
        for index, caption in enumerate(captions):
            role = "hook" if index == 0 else "call to action" if index == len(captions) - 1 else "story beat"
            scene = clip(caption, 160)
            frames.append(
                {
                    "id": f"frame-{index + 1}",
                    "frameNumber": index + 1,
                    "shotType": shots[index],
                    "cameraMovement": movements[(index + rng.randrange(len(movements))) % len(movements)]
                    if index
                    else "zoom-in",
                    "duration": durations[index],
                    "imagePrompt": f"{character} {_shot_words(shots[index])} illustrating: {scene} "
                    f"Style: {visual}. No on-screen text.",
                    "videoPrompt": f"{_shot_words(shots[index]).capitalize()}, {role}: {scene}",
                    "caption": clip(caption, 120),
                    "voiceover": caption.replace("\n", " "),
                    "notes": f"{role.capitalize()} ({durations[index]:g}s).",
                }
            )
        return {
            "title": upper_first(clip(topic, 80)),
            "totalDuration": request.duration,
            "aspectRatio": "9:16" if request.short_form else "16:9",
            "characterDescription": character,
            "frames": frames,
        }

    # -- carousel
    async def carousel(self, request: CarouselRequest) -> list[dict[str, Any]]:
        """Slide text for the template, hook first and CTA last, each field short enough for its layout."""
        rng = seeded(
            "carousel",
            request.topic,
            request.template_id,
            request.slide_count,
            request.hook,
            request.hook_family,
            request.cta_text,
            request.constraints,
            request.brand.name,
        )
        m = _material(
            clip(lower_first(request.topic), 90),
            request.brand,
            request.platform,
            rng,
            request.topic + ". " + request.constraints,
        )
        hook = request.hook or HOOKS[_pick_family(request.hook_family, m, rng)](m, rng)
        slides = carousel_templates.build(request, m.topic, hook, m, rng)
        for slide in slides:
            for key, value in list(slide.items()):
                if isinstance(value, str):
                    slide[key] = _clean(value, request.brand, request.platform)
        return slides

    # -- plans
    async def plan_post(self, request: PlanPostRequest) -> PlanPostDraft:
        """One plan post: the caption in the rotation's hook family and angle, with its hashtags."""
        hook = request.top_hook
        post = PostRequest(
            prompt=request.topic + (". " + request.source_notes if request.source_notes else ""),
            content_type="caption",
            brand=request.brand,
            platform=request.platform,
            hook_family=request.hook_family,
            angle=request.angle or None,
            hook=hook,
            variant=request.day * 10 + request.index,
        )
        caption = self.compose(post)
        first_line = caption.split("\n", 1)[0]
        hashtags = re.findall(r"(?:(?<=\s)|^)#\w+", caption)
        title = None
        if request.platform == "youtube":
            title = clip(upper_first(extract_topic(request.topic)), 100)
        return PlanPostDraft(
            hook=clip(first_line, 300),
            angle=request.angle,
            caption=caption,
            hashtags=hashtags,
            title=title,
            visual_direction=_visual_direction(request.media_type, extract_topic(request.topic), request.brand),
        )


def split_duration(total: float, count: int) -> list[float]:
    """`count` durations in tenths of a second that sum exactly to `total` (hook and CTA shorter)."""
    tenths = round(total * 10)
    weights = [0.8] + [1.0] * (count - 2) + [0.9] if count >= 2 else [1.0]
    scale = sum(weights)
    parts = [max(1, int(tenths * weight / scale)) for weight in weights]
    parts[len(parts) // 2] += tenths - sum(parts)
    return [part / 10 for part in parts]


def _shot_sequence(count: int, rng: random.Random) -> list[str]:
    shots = ["CU", "MS", "FS", "WS"]
    sequence = ["CU"]
    while len(sequence) < count:
        choices = [shot for shot in shots if shot != sequence[-1]]
        sequence.append(rng.choice(choices))
    return sequence


def _shot_words(shot: str) -> str:
    return {"CU": "close-up shot", "MS": "medium shot", "FS": "full shot", "WS": "wide shot"}[shot]


def _character(request: StoryboardRequest, m: Material) -> str:
    age = f"in the {request.brand.audience_age} age range" if request.brand.audience_age else "adult"
    setting = lower_first(m.angle) if m.angle else "their everyday work"
    person = f"The same {age} presenter in smart casual clothes, friendly and focused"
    base = f"{person}, in a setting about {setting}."
    if request.brand_notes:
        base = f"{person}; {clip(request.brand_notes, 160)}."
    return base.replace("  ", " ")


def _story_beats(m: Material, count: int) -> list[str]:
    pool = [part for part in m.details if part]
    if m.pain:
        pool.append(sentence(f"The problem: {clause(m.pain)}"))
    pool += [sentence(f"What helps: {clause(value)}") for value in m.brand.value_propositions[:3]]
    if m.proof is not None:
        pool.append(_proof_sentence(m))
    if m.aspiration:
        pool.append(sentence(f"The result you want: {clause(m.aspiration)}"))
    pool += [sentence(f"{upper_first(name)} in practice") for name, _ in m.brand.content_pillars[:2]]
    generic = [
        sentence(f"Show the moment {m.topic} gets stuck"),
        sentence(f"Show the first small change to {m.topic}"),
        sentence("Show the change working day to day"),
        sentence(f"Show what {m.topic} looks like once it runs smoothly"),
        sentence("Recap the one idea to remember"),
    ]
    beats = list(dict.fromkeys(pool))
    index = 0
    while len(beats) < count:
        beats.append(
            generic[index % len(generic)]
            if index < len(generic)
            else f"Beat {len(beats) + 1}: {generic[index % len(generic)]}"
        )
        index += 1
    return beats[:count]


def _visual_direction(media_type: str, topic: str, brand: BrandContext) -> str:
    palette = "in the brand palette" if brand.exists else "in clean, neutral colours"
    return {
        "video": f"Short vertical video: open on the hook within 2 seconds, then show {topic} step by step, {palette}.",
        "carousel": f"Carousel: hook slide, one idea per slide about {topic}, CTA slide last, {palette}.",
        "image": f"Single image with one clear subject that stands for {topic}, {palette}, no small text.",
        "text-only": "Text-only post: short paragraphs with line breaks, no image needed.",
    }.get(media_type, f"Visual about {topic}, {palette}.")
