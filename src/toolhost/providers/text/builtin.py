"""The built-in text provider: writes offline, from the prompt's brief and the brand runtime, in whole sentences.

It reads the prompt as a request (`brief`), never pastes it in, and says only what the prompt or the brand
says: every figure, claim and quote comes from the request or the brand's proof points, value propositions
and testimonials; the rest is connective wording chosen for the brand's trade and the platform. Choices are
drawn from a generator seeded by the inputs, so the same inputs give the same text. A model-written text
needs the OpenAI-compatible provider (README: "Model-written text").
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any

from toolhost.providers.platforms import PlatformRules, rules_for
from toolhost.providers.text import analysis, brief, phrasing
from toolhost.providers.text import carousel as carousel_slides
from toolhost.providers.text.base import (
    AdaptRequest,
    BrandContext,
    CarouselRequest,
    PlanPostDraft,
    PlanPostRequest,
    PostRequest,
    StoryboardRequest,
)
from toolhost.providers.text.brief import Brief
from toolhost.providers.text.compose import (
    apply_style,
    clip,
    cut_at_sentence,
    fit_blocks,
    hashtags_for,
    keywords,
    seeded,
    sentences,
)
from toolhost.providers.text.phrasing import Fact, Sector
from toolhost.providers.text.terms import find_terms, remove_terms

SHORT_PLATFORMS = frozenset({"twitter", "bluesky", "tiktok"})


@dataclass(frozen=True, slots=True)
class Draft:
    """The parts of one piece of writing, chosen once: the brief, the brand's facts, the trade, the rules."""

    brief: Brief
    brand: BrandContext
    facts: list[Fact]
    sector: Sector
    rules: PlatformRules
    platform: str | None

    @property
    def stems(self) -> set[str]:
        text = " ".join([self.brief.subject, self.brief.statement, self.brief.how, *self.brief.keywords])
        return set(analysis.content_stems(text))


def _clean(text: str, brand: BrandContext, platform: str | None) -> str:
    blocked = brand.blocked_terms(platform)
    if blocked and find_terms(text, blocked):
        text = remove_terms(text, blocked)
    if brand.name:
        # Lower-casing a clause's first letter must not lower-case the brand's own name.
        name = re.compile(rf"(?<![\w#]){re.escape(brand.name)}(?!\w)", re.IGNORECASE)
        text = analysis.outside_urls(text, lambda part: name.sub(brand.name, part))
    return apply_style(text, brand)


def draft_of(prompt: str, brand: BrandContext, platform: str | None, rng: random.Random) -> Draft:
    """The material of one text."""
    return Draft(
        brief=brief.read(prompt),
        brand=brand,
        facts=phrasing.brand_facts(brand, rng),
        sector=phrasing.sector_of(brand),
        rules=rules_for(platform),
        platform=platform,
    )


def body(draft: Draft, hook: str, rng: random.Random, limit: int) -> list[str]:
    """The sentences after the hook: what the prompt said, then the brand facts that bear on it."""
    said = [hook]
    result: list[str] = []

    name = draft.brand.name

    def add(text: str) -> None:
        if name and "third" not in draft.brand.perspective.lower() and any(name in other for other in said):
            text = phrasing.as_we(text, name)
        if text and not any(phrasing.overlaps(text, other) for other in said) and len(result) < limit:
            said.append(text)
            result.append(text)

    request = draft.brief
    if request.statement:
        add(phrasing.sentence(request.statement))
    for detail in request.details[:3]:
        add(phrasing.detail_sentence(detail, request.subject))
    stems = draft.stems
    # Not the audience's goal ("The goal is a calm skin every day."): in a post it reads as a stock line, and
    # the reading gate blocks posts that carry one; a blog's summary still states it.
    for fact in phrasing.relevant(draft.facts, stems, sources=("value", "proof", "pain"), limit=6):
        if (
            fact.stems & stems
            or fact.source == "value"
            and not any(item.source == "value" for item in draft.facts if item.text in result)
        ):
            if fact.source == "pain" and not fact.stems & stems:
                continue
            add(fact.text)
    testimonials = phrasing.relevant(draft.facts, stems, sources=("testimonial",), limit=1)
    if testimonials and testimonials[0].stems & stems:
        add(testimonials[0].text)
    return result


def _hashtags(draft: Draft) -> list[str]:
    voice = draft.brand.voice_for(draft.platform)
    topic = " ".join([draft.brief.subject, draft.brief.how, draft.brief.statement])
    tags = hashtags_for(topic, draft.brand, draft.rules, voice.hashtag_strategy if voice else "")
    return tags[: max(draft.rules.hashtags_min, min(3, draft.rules.hashtags_max))]


class BuiltinTextProvider:
    """Writes offline from the brief and the brand runtime; deterministic for the same inputs."""

    name = "builtin"

    async def write(self, request: PostRequest) -> str:
        """A caption, hook, script or blog post."""
        return self.compose(request)

    def compose(self, request: PostRequest) -> str:
        """The synchronous writer behind `write` (plans and suggested hooks call it for many texts)."""
        return self.compose_with_hook(request)[0]

    def compose_with_hook(self, request: PostRequest) -> tuple[str, str]:
        """The text and the hook it opens with, each as it is published."""
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
        draft = draft_of(request.prompt, request.brand, request.platform, rng)
        hook = request.hook or phrasing.hook(draft.brief, draft.brand, request.hook_family, draft.facts, rng)
        if request.content_type == "hook":
            text = hook if len(hook) <= 120 else cut_at_sentence(hook, 120)
        elif request.content_type == "script":
            text = self._script(draft, hook, request.prompt, rng)
        elif request.content_type == "blog":
            text = self._blog(draft, hook, rng)
        else:
            text = self._caption(draft, hook, rng)
        return _clean(text, request.brand, request.platform), _clean(hook, request.brand, request.platform)

    def _caption(self, draft: Draft, hook: str, rng: random.Random) -> str:
        rules = draft.rules
        short = draft.platform in SHORT_PLATFORMS or rules.caption_limit <= 500
        sentences_wanted = 2 if short else 4
        request = draft.brief
        lines = body(draft, hook, rng, sentences_wanted)
        steps_text = ""
        if request.action == "tips" and not short:
            steps = phrasing.steps(request, draft.brand, request.steps or 3)
            steps_text = "\n".join(f"{number}. {step}" for number, step in enumerate(steps, start=1))
            lines = lines[:2]
        cta = phrasing.call_to_action(request, draft.sector, draft.platform, rng)
        tags = _hashtags(draft)
        if steps_text:
            middle = [" ".join(lines), steps_text]
        elif rules.line_breaks and not short:
            middle = [" ".join(lines[:2]), " ".join(lines[2:])]
        elif rules.line_breaks:
            middle = [" ".join(lines)]
        else:
            middle = lines
        ending = [part for part in (cta, " ".join(tags)) if part]
        separator = "\n\n" if rules.line_breaks else " "
        return fit_blocks([hook, *middle, *ending], rules.caption_limit, separator, keep_last=len(ending))

    def _script(self, draft: Draft, hook: str, prompt: str, rng: random.Random) -> str:
        stated = re.search(
            r"(\d{1,3})\s*(?:-|\s)?(s|sec|secs|second|seconds|min|minute|minutes)\b", prompt, re.IGNORECASE
        )
        seconds = 50
        if stated:
            seconds = int(stated.group(1)) * (60 if stated.group(2).lower().startswith("min") else 1)
            seconds = max(10, min(seconds, 600))
        beats = body(draft, hook, rng, 3)
        if draft.brief.action == "tips":
            beats = beats[:1] + phrasing.steps(draft.brief, draft.brand, draft.brief.steps or 3)
        hook_end = max(3, round(seconds * 0.1))
        cta_start = seconds - max(5, round(seconds * 0.12))
        span = (cta_start - hook_end) / max(1, len(beats))
        lines = [f"HOOK (0-{hook_end}s): {hook}", "", "BODY"]
        for index, beat in enumerate(beats):
            start = round(hook_end + index * span)
            end = round(hook_end + (index + 1) * span)
            lines.append(f"[{start}-{end}s] {beat}")
        cta = phrasing.call_to_action(draft.brief, draft.sector, draft.platform, rng) or draft.brief.question
        lines += ["", f"CTA ({cta_start}-{seconds}s): {cta}"]
        return "\n".join(lines)

    def _blog(self, draft: Draft, hook: str, rng: random.Random) -> str:
        request = draft.brief
        title = _title(request)
        stems = draft.stems
        sections: list[tuple[str, list[str]]] = []
        given = [phrasing.detail_sentence(detail, request.subject) for detail in request.details]
        statement = phrasing.sentence(request.statement) if request.statement else ""
        if statement and phrasing.overlaps(statement, hook):
            statement = ""
        if statement or any(given):
            sections.append(
                (
                    "What is new" if request.action == "announce" else "The short version",
                    [
                        text
                        for text in [phrasing.sentence(request.statement) if request.statement else "", *given]
                        if text
                    ],
                )
            )
        pains = phrasing.relevant(draft.facts, stems, sources=("pain",), limit=2)
        if pains:
            sections.append(("The problem", [fact.text for fact in pains]))
        values = phrasing.relevant(draft.facts, stems, sources=("value",), limit=2)
        if values:
            sections.append(("How we approach it", [fact.text for fact in values]))
        proofs = phrasing.relevant(draft.facts, stems, sources=("proof", "testimonial"), limit=2)
        if proofs:
            sections.append(("What the results show", [fact.text for fact in proofs]))
        steps = phrasing.steps(request, draft.brand, request.steps or 3) if request.action == "tips" else []
        if steps:
            sections.append(("Step by step", ["\n".join(f"{n}. {step}" for n, step in enumerate(steps, start=1))]))
        sections = sections[:5]
        if len(sections) < 3:
            goals = phrasing.relevant(draft.facts, stems, sources=("goal",), limit=1)
            sections.insert(
                1,
                (
                    "What we want for you",
                    [fact.text for fact in goals] or [values[0].text]
                    if values
                    else ["We write about it because it comes up every week."],
                ),
            )
        parts = [f"# {title}", hook]
        said = [hook]
        for heading, texts in sections:
            # Brands often say one thing twice (a value proposition and a proof point); the post says it once.
            fresh = [text for text in texts if not any(phrasing.overlaps(text, other) for other in said)]
            said += fresh
            if fresh:
                parts += [f"## {heading}", " ".join(fresh)]
        cta = phrasing.call_to_action(request, draft.sector, None, rng) or request.question
        goals = phrasing.relevant(draft.facts, stems, sources=("goal",), limit=1)
        summary = goals[0].text if goals and not any(goals[0].text in text for _, text in sections) else ""
        parts += ["## In short", " ".join(part for part in (summary, cta) if part)]
        return "\n\n".join(parts)

    # -- adaptation
    async def adapt(self, request: AdaptRequest) -> str:
        """Rewrites for the target: its limit and hashtag guidance, cut at sentence boundaries, its voice."""
        rules = rules_for(request.target_platform)
        brand = request.brand
        source_tags = re.findall(r"(?:(?<=\s)|^)#\w+", request.content)
        text = re.sub(r"(?:(?<=\s)|^)#\w+", "", request.content)
        text = _clean(text, brand, request.target_platform)
        # A sentence said twice word for word is said once.
        parts = list(dict.fromkeys(part for part in sentences(text) if part))
        voice = brand.voice_for(request.target_platform)
        tags = list(dict.fromkeys(source_tags))[: rules.hashtags_max]
        if len(tags) < rules.hashtags_min:
            # Hashtags come from the words, never from the pieces of a link ("#HttpsExample").
            topic = " ".join(keywords(brief.URL.sub(" ", text), 4))
            extra = hashtags_for(topic, brand, rules, voice.hashtag_strategy if voice else "")
            tags += [tag for tag in extra if tag.lower() not in {existing.lower() for existing in tags}]
            tags = tags[: rules.hashtags_min]
        tag_text = " ".join(tags)
        separator = "\n\n" if rules.line_breaks else " "
        room = rules.caption_limit - (len(tag_text) + len(separator) if tag_text else 0)
        # Keep the opening line and the closing call to action; drop middle sentences until it fits.
        kept = list(parts)
        while len(" ".join(kept)) > room and len(kept) > 2:
            del kept[-2]
        adapted = cut_at_sentence(" ".join(kept), room) if kept else ""
        if rules.line_breaks and len(kept) > 2 and len(adapted) > 200:
            middle = " ".join(kept[1:-1])
            adapted = separator.join(block for block in (kept[0], middle, kept[-1]) if block)
            if len(adapted) > room:
                adapted = cut_at_sentence(" ".join(kept), room)
        return (adapted + separator + tag_text).strip() if tag_text else adapted

    # -- storyboard
    async def storyboard(self, request: StoryboardRequest) -> dict[str, Any]:
        """Frames on the concept: its hook first, what it says in the middle, a call to action last."""
        rng = seeded(
            "storyboard",
            request.concept,
            request.platform,
            request.duration,
            request.scenes,
            request.style,
            request.brand.name,
        )
        draft = draft_of(request.concept, request.brand, None, rng)
        hook = phrasing.hook(draft.brief, draft.brand, None, draft.facts, rng)
        middle_count = request.scenes - 2
        beats = [beat for beat in body(draft, hook, rng, middle_count) if len(beat) <= 160]
        spare = [fact.text for fact in draft.facts if len(fact.text) <= 160]
        if draft.brief.wants_steps:
            # A how-to shows its steps first, as many as it asked for; the brand's facts follow if scenes remain.
            steps = phrasing.steps(draft.brief, draft.brand, min(middle_count, draft.brief.steps or middle_count))
            beats = steps + [beat for beat in beats if not any(phrasing.overlaps(beat, step) for step in steps)]
        elif draft.brief.action == "tips":
            spare = phrasing.steps(draft.brief, draft.brand, middle_count) + spare
        # A storyboard needs a beat for every scene: the brand's other facts fill in, never a repeat.
        for candidate in [*spare, *phrasing.steps(draft.brief, draft.brand, middle_count)]:
            if len(beats) >= middle_count:
                break
            if not any(phrasing.overlaps(candidate, other) for other in [hook, *beats]):
                beats.append(candidate)
        beats = beats[:middle_count]
        while len(beats) < middle_count:
            beats.append(beats[-1] if beats else hook)
        cta = phrasing.call_to_action(draft.brief, draft.sector, None, rng) or draft.brief.question
        captions = [hook, *beats, cta]
        durations = split_duration(request.duration, len(captions))
        shots = _shot_sequence(len(captions), rng)
        movements = ["static", "zoom-in", "pan-left", "tracking", "zoom-out", "pan-right", "tilt-up", "tilt-down"]
        subject = draft.brief.topic
        character = _character(request, subject)
        visual = request.style or "clean, natural light, brand colours"
        frames = []
        for index, caption in enumerate(captions):
            role = "hook" if index == 0 else "call to action" if index == len(captions) - 1 else "story beat"
            spoken = _clean(caption, request.brand, None)
            frames.append(
                {
                    "id": f"frame-{index + 1}",
                    "frameNumber": index + 1,
                    "shotType": shots[index],
                    "cameraMovement": movements[(index + rng.randrange(len(movements))) % len(movements)]
                    if index
                    else "zoom-in",
                    "duration": durations[index],
                    "imagePrompt": f"{character} {_shot_words(shots[index]).capitalize()} for a video about "
                    f"{clip(subject, 80)}, showing: {clip(spoken, 140)} Style: {visual}. No on-screen text.",
                    "videoPrompt": f"{_shot_words(shots[index]).capitalize()}, {role}: {clip(spoken, 140)}",
                    "caption": spoken if len(spoken) <= 120 else cut_at_sentence(spoken, 120),
                    "voiceover": spoken,
                    "notes": f"{role.capitalize()} ({durations[index]:g}s).",
                }
            )
        return {
            "title": phrasing.upper_first(clip(_title(draft.brief), 80)),
            "totalDuration": request.duration,
            "aspectRatio": "9:16" if request.short_form else "16:9",
            "characterDescription": character,
            "frames": frames,
        }

    # -- carousel
    async def carousel(self, request: CarouselRequest) -> list[dict[str, Any]]:
        """Slide text for the template on the topic, hook first and CTA last, short enough for its layout."""
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
        prompt = request.topic + (". " + request.constraints if request.constraints else "")
        draft = draft_of(prompt, request.brand, request.platform, rng)
        hook = request.hook or phrasing.hook(draft.brief, draft.brand, request.hook_family, draft.facts, rng)
        slides = carousel_slides.build(request, draft, hook, rng)
        for slide in slides:
            for key, value in list(slide.items()):
                if isinstance(value, str) and key != "body" or isinstance(value, str) and value != request.cta_url:
                    slide[key] = _clean(value, request.brand, request.platform)
        return slides

    # -- plans
    async def plan_post(self, request: PlanPostRequest) -> PlanPostDraft:
        """One plan post: the caption in the rotation's hook family, with its hashtags."""
        post = PostRequest(
            prompt=request.topic + (". " + request.source_notes if request.source_notes else ""),
            content_type="caption",
            brand=request.brand,
            platform=request.platform,
            hook_family=request.hook_family,
            angle=request.angle or None,
            hook=request.top_hook,
            variant=request.day * 10 + request.index,
        )
        # The hook is the opening the caption was written with, not its first line: a platform without line
        # breaks would give the whole caption, hashtags and all.
        caption, hook = self.compose_with_hook(post)
        hashtags = re.findall(r"(?:(?<=\s)|^)#\w+", caption)
        topic = brief.read(request.topic)
        title = clip(phrasing.upper_first(_title(topic)), 100) if request.platform == "youtube" else None
        return PlanPostDraft(
            hook=cut_at_sentence(hook, 300),
            angle=request.angle,
            caption=caption,
            hashtags=hashtags,
            title=title,
            visual_direction=_visual_direction(request.media_type, topic.topic, request.brand),
        )


def _title(request: Brief) -> str:
    """A headline for a blog post, a video or a storyboard: the topic as a phrase."""
    if request.action == "explain" and request.statement:
        return phrasing.upper_first(f"{request.question_word or 'why'} {phrasing.clause(request.statement)}")
    if request.how:
        return phrasing.upper_first(f"how to {phrasing.clause(request.how)}")
    if request.action == "ask" and request.question:
        return request.question
    if request.statement:
        return phrasing.upper_first(phrasing.clause(request.statement))
    return phrasing.upper_first(phrasing.clause(request.subject or "what we are working on"))


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


def _character(request: StoryboardRequest, subject: str) -> str:
    age = f" in the {request.brand.audience_age} age range" if request.brand.audience_age else ""
    person = f"The same adult presenter{age}, in smart casual clothes, friendly and focused"
    if request.brand_notes:
        return f"{person}; {clip(request.brand_notes, 160)}."
    industry = request.brand.industry.lower()
    setting = phrasing.with_article(industry) if industry else "the place where it happens"
    return f"{person}, at work in {setting}."


def _visual_direction(media_type: str, topic: str, brand: BrandContext) -> str:
    palette = "in the brand palette" if brand.exists else "in clean, neutral colours"
    return {
        "video": f"Short vertical video: open on the hook within 2 seconds, then show {topic} step by step, {palette}.",
        "carousel": f"Carousel: hook slide, one idea per slide about {topic}, CTA slide last, {palette}.",
        "image": f"Single image with one clear subject that stands for {topic}, {palette}, no small text.",
        "text-only": "Text-only post: short paragraphs with line breaks, no image needed.",
    }.get(media_type, f"Visual about {topic}, {palette}.")
