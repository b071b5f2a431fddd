"""Does the built-in writer write? Brands x prompts x platforms x content types, each text read by bench/coherence.py.

Run: `PYTHONPATH=src .venv/bin/python bench/writer_coherence.py [--samples 30] [--show-failures]`. It writes with
the built-in provider for every brand and prompt of tests/data/writer/ (10 brands, 40 prompts): captions for
LinkedIn, Instagram, Twitter and Facebook, a hook, a TikTok script, a blog post, a storyboard and a carousel,
and checks each with bench/coherence.py, which the writer does not use: every sentence has a verb, no piece of
the request, no truncation, no link or markdown (headings allowed in a blog), no repeated four-word run, the
topic's words present. It prints the generations, the share that passes every check, the failures by check
and content type, and `--samples N` texts picked with a fixed seed, for reading.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from coherence import problems

from toolhost.providers.text.base import BrandContext, CarouselRequest, PostRequest, StoryboardRequest
from toolhost.providers.text.builtin import BuiltinTextProvider

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "writer"
CAPTION_PLATFORMS = ("linkedin", "instagram", "twitter", "facebook")
TEMPLATES = ("step-by-step", "myth-vs-reality", "before-after", "hormozi-authority", "data-stats", "story-arc")


def _word_set(words: str) -> frozenset[str]:
    """A word list written as one string."""
    return frozenset(words.split())


# The request's own words: never topic words.
REQUEST_WORDS = _word_set(
    "write post posts linkedin instagram tweet caption announce explain share tips tell invite remind ask give "
    "introduce story people followers about why how what that our new simple three steps step customer"
)


def topic_words(prompt: str) -> list[str]:
    """Content words of the prompt that are not part of the request, longest first."""
    words = [word.lower() for word in re.findall(r"[A-Za-z][A-Za-z'-]+", prompt)]
    kept = [word for word in words if len(word) > 3 and word not in REQUEST_WORDS]
    return sorted(dict.fromkeys(kept), key=len, reverse=True)[:6]


def _script_lines(text: str) -> str:
    """The spoken lines of a script, without its HOOK/BODY/CTA labels and timing cues."""
    lines = [re.sub(r"^(?:HOOK|CTA) \([^)]*\):\s*|^\[[^\]]*\]\s*", "", line) for line in text.splitlines()]
    return "\n".join(line for line in lines if line.strip() and line.strip() != "BODY")


def _blog_prose(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.startswith("#"))


async def generate() -> list[dict[str, Any]]:
    """Every generation: brand, prompt, kind, the text as written and the text as checked."""
    brands = json.loads((DATA / "brands.json").read_text())
    prompts = json.loads((DATA / "prompts.json").read_text())
    writer = BuiltinTextProvider()
    rows: list[dict[str, Any]] = []
    for name, brand_prompts in prompts.items():
        brand = BrandContext.from_runtime(brands[name])
        for number, prompt in enumerate(brand_prompts):
            for platform in CAPTION_PLATFORMS:
                text = await writer.write(
                    PostRequest(prompt=prompt, content_type="caption", brand=brand, platform=platform)
                )
                rows.append(
                    {"brand": name, "prompt": prompt, "kind": f"caption/{platform}", "text": text, "checked": text}
                )
            hook = await writer.write(PostRequest(prompt=prompt, content_type="hook", brand=brand, platform="linkedin"))
            rows.append({"brand": name, "prompt": prompt, "kind": "hook", "text": hook, "checked": hook})
            script = await writer.write(
                PostRequest(prompt=prompt, content_type="script", brand=brand, platform="tiktok")
            )
            rows.append(
                {
                    "brand": name,
                    "prompt": prompt,
                    "kind": "script/tiktok",
                    "text": script,
                    "checked": _script_lines(script),
                }
            )
            blog = await writer.write(PostRequest(prompt=prompt, content_type="blog", brand=brand))
            rows.append(
                {
                    "brand": name,
                    "prompt": prompt,
                    "kind": "blog",
                    "text": blog,
                    "checked": _blog_prose(blog),
                    "markdown_allowed": True,
                }
            )
            board = await writer.storyboard(
                StoryboardRequest(concept=prompt, platform="tiktok", duration=30, scenes=6, brand=brand)
            )
            spoken = "\n".join(frame["voiceover"] for frame in board["frames"])
            rows.append({"brand": name, "prompt": prompt, "kind": "storyboard", "text": spoken, "checked": spoken})
            template = TEMPLATES[number % len(TEMPLATES)]
            slides = await writer.carousel(
                CarouselRequest(topic=prompt[:200], template_id=template, slide_count=6, brand=brand)
            )
            shown = "\n".join(f"[{slide['headline']}] {slide.get('body', '')}".strip() for slide in slides)
            # Headlines are labels ("Step 2", "Myth"); the hook, the bodies and the closing line are sentences.
            prose = "\n".join(
                [slides[0]["headline"], *(slide.get("body", "") for slide in slides[1:-1]), slides[-1]["headline"]]
            )
            rows.append(
                {"brand": name, "prompt": prompt, "kind": f"carousel/{template}", "text": shown, "checked": prose}
            )
    return rows


def main() -> None:
    samples = int(sys.argv[sys.argv.index("--samples") + 1]) if "--samples" in sys.argv else 30
    rows = asyncio.run(generate())
    failures: Counter[str] = Counter()
    by_kind: Counter[str] = Counter()
    failed_by_kind: Counter[str] = Counter()
    for row in rows:
        found = problems(
            row["checked"],
            prompt=row["prompt"],
            topic_words=topic_words(row["prompt"]),
            markdown_allowed=row.get("markdown_allowed", False),
        )
        row["problems"] = {check: items for check, items in found.items() if items}
        kind = row["kind"].split("/")[0]
        by_kind[kind] += 1
        if row["problems"]:
            failed_by_kind[kind] += 1
        for check in row["problems"]:
            failures[check] += 1
    clean = sum(1 for row in rows if not row["problems"])
    print(f"generations: {len(rows)} (10 brands x 4 prompts x 9 outputs)")
    print(f"passing every check: {clean} ({clean / len(rows):.1%})")
    for check, count in failures.most_common():
        print(f"  failed {check}: {count}")
    for kind, count in sorted(by_kind.items()):
        print(f"  {kind}: {count - failed_by_kind[kind]}/{count} pass")
    if "--show-failures" in sys.argv:
        for row in rows:
            if row["problems"]:
                print(
                    f"\nFAIL {row['brand']} {row['kind']} {row['problems']}\n  prompt: {row['prompt']}\n{row['text']}"
                )
    picker = random.Random(20261126)
    for row in picker.sample(rows, min(samples, len(rows))):
        verdict = "pass" if not row["problems"] else f"fail {sorted(row['problems'])}"
        print(f"\n--- {row['brand']} | {row['kind']} | {verdict}\nprompt: {row['prompt']}\n{row['text']}")


if __name__ == "__main__":
    main()
