"""The built-in text provider: a deterministic composer driven by the brand runtime and the platform rules.

It never invents facts: every figure, claim and testimonial it writes comes from the request or the brand
(proof points, value propositions); the rest is connective wording. Choices (hook template, structure, CTA)
are drawn from a generator seeded by the inputs, so the same inputs give the same text. The material and the
hooks, bodies and calls to action drawn from it are in `material`; this module assembles them per request kind.
"""

from __future__ import annotations

import random
import re
from typing import Any

from toolhost.providers.platforms import rules_for
from toolhost.providers.text import analysis, material
from toolhost.providers.text import carousel as carousel_templates
from toolhost.providers.text.base import (
    AdaptRequest,
    BrandContext,
    CarouselRequest,
    PlanPostDraft,
    PlanPostRequest,
    PostRequest,
    StoryboardRequest,
)
from toolhost.providers.text.compose import (
    apply_style,
    clause,
    clip,
    cut_at_sentence,
    extract_topic,
    fit_blocks,
    hashtags_for,
    keywords,
    lower_first,
    seeded,
    sentence,
    sentences,
    upper_first,
)
from toolhost.providers.text.terms import find_terms, remove_terms

# --- the provider ------------------------------------------------------------------------------------------


def _clean(text: str, brand: BrandContext, platform: str | None) -> str:
    blocked = brand.blocked_terms(platform)
    if blocked and find_terms(text, blocked):
        text = remove_terms(text, blocked)
    text = re.sub(r"\.\.(?!\.)", ".", text)
    if brand.name:
        # Lower-casing a clause's first letter must not lower-case the brand's own name.
        name = re.compile(rf"(?<![\w#]){re.escape(brand.name)}(?!\w)", re.IGNORECASE)
        text = analysis.outside_urls(text, lambda part: name.sub(brand.name, part))
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
        m = material.material(topic, request.brand, request.platform, rng, request.prompt, request.angle)
        family = material.pick_family(request.hook_family, m, rng)
        hook = request.hook or material.HOOKS[family](m, rng)
        if request.content_type == "hook":
            text = clip(hook, 120)
        elif request.content_type == "script":
            text = self._script(m, hook, request.prompt, rng)
        elif request.content_type == "blog":
            text = self._blog(m, hook, rng)
        else:
            text = self._caption(m, hook, rng)
        return _clean(text, request.brand, request.platform)

    def _caption(self, m: material.Material, hook: str, rng: random.Random) -> str:
        structure = rng.choice(material.STRUCTURES)
        body = [block for block in material.BODIES[structure](m, rng) if block]
        voice = m.brand.voice_for(m.platform)
        tags = hashtags_for(m.topic, m.brand, m.rules, voice.hashtag_strategy if voice else "")
        cta = material.cta(m, rng)
        separator = "\n\n" if m.rules.line_breaks else " "
        if not m.rules.line_breaks:
            body = [block.replace("\n", " ") for block in body[:2]]
        ending = [cta, " ".join(tags)] if tags else [cta]
        return fit_blocks([hook, *body, *ending], m.rules.caption_limit, separator, keep_last=len(ending))

    def _script(self, m: material.Material, hook: str, prompt: str, rng: random.Random) -> str:
        stated = re.search(
            r"(\d{1,3})\s*(?:-|\s)?(s|sec|secs|second|seconds|min|minute|minutes)\b", prompt, re.IGNORECASE
        )
        seconds = 50
        if stated:
            seconds = int(stated.group(1)) * (60 if stated.group(2).lower().startswith("min") else 1)
            seconds = max(10, min(seconds, 600))
        beats = [block for block in material.body_problem_solution(m, rng) if block][:3]
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
        lines += ["", f"CTA ({cta_start}-{seconds}s): {material.cta(m, rng)}"]
        return "\n".join(lines)

    def _blog(self, m: material.Material, hook: str, rng: random.Random) -> str:
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
            sections.append((upper_first(clip(m.angle, 60)), " ".join(material.body_insight(m, rng)[:2])))
        for value in m.brand.value_propositions[:2]:
            sections.append((upper_first(clip(clause(value), 60)), sentence(f"Applied to {m.topic}, {clause(value)}")))
        if m.proof is not None:
            sections.append(("What the results show", material.proof_sentence(m)))
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
            material.cta(m, rng),
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
        m = material.material(topic, request.brand, None, rng, request.concept)
        character = _character(request, m)
        beats = _story_beats(m, request.scenes - 2)
        hook = material.HOOKS[material.pick_family(None, m, rng)](m, rng)
        cta = (
            material.cta(m, rng)
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
        m = material.material(
            clip(lower_first(request.topic), 90),
            request.brand,
            request.platform,
            rng,
            request.topic + ". " + request.constraints,
        )
        hook = request.hook or material.HOOKS[material.pick_family(request.hook_family, m, rng)](m, rng)
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


def _character(request: StoryboardRequest, m: material.Material) -> str:
    age = f"in the {request.brand.audience_age} age range" if request.brand.audience_age else "adult"
    setting = lower_first(m.angle) if m.angle else "their everyday work"
    person = f"The same {age} presenter in smart casual clothes, friendly and focused"
    base = f"{person}, in a setting about {setting}."
    if request.brand_notes:
        base = f"{person}; {clip(request.brand_notes, 160)}."
    return base.replace("  ", " ")


def _story_beats(m: material.Material, count: int) -> list[str]:
    pool = [part for part in m.details if part]
    if m.pain:
        pool.append(sentence(f"The problem: {clause(m.pain)}"))
    pool += [sentence(f"What helps: {clause(value)}") for value in m.brand.value_propositions[:3]]
    if m.proof is not None:
        pool.append(material.proof_sentence(m))
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
