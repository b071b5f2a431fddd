"""The 15 built-in compositions of CATALOG.md §4 as data: size, length, props JSON Schema and sample props.

A composition's length is fixed, or computed from its props (the `dynamic` ones). Props are validated
against the JSON Schema with jsonschema, and every error names its path (`props.captions[0].text`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

FPS = 30
PORTRAIT, SQUARE, LANDSCAPE = (1080, 1920), (1080, 1080), (1920, 1080)
SIZE_OF_ASPECT = {"9:16": PORTRAIT, "1:1": SQUARE, "16:9": LANDSCAPE}
MEDIA_KEY = {"type": "string", "minLength": 1, "maxLength": 1024}
SHORT = {"type": "string", "maxLength": 200}
LONG = {"type": "string", "maxLength": 2000}


# A JSON Schema object (the props_schema list_compositions shows and check_props applies).
def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


CAPTIONED_SCHEMA = _object(
    {
        "captions": {
            "type": "array",
            "minItems": 1,
            "maxItems": 100,
            "items": _object(
                {
                    "text": {"type": "string", "minLength": 1, "maxLength": 300},
                    "start_sec": {"type": "number", "minimum": 0, "maximum": 600},
                    "end_sec": {"type": "number", "minimum": 0, "maximum": 600},
                },
                ["text", "start_sec", "end_sec"],
            ),
        },
        "background_media_key": MEDIA_KEY,
        "audio_media_key": MEDIA_KEY,
        "title": SHORT,
    },
    ["captions"],
)
STORYBOARD_FRAME = {
    "type": "object",
    "properties": {
        "frameNumber": {"type": "integer", "minimum": 1, "maximum": 100},
        "duration": {"type": "number", "exclusiveMinimum": 0, "maximum": 60},
        "caption": {"type": "string", "maxLength": 500},
        "voiceover": {"type": "string", "maxLength": 2000},
        "imagePrompt": {"type": "string", "maxLength": 2000},
        "shotType": SHORT,
    },
    "required": ["frameNumber", "duration"],
}
STORYBOARD_SCHEMA = {
    "type": "object",
    "properties": {
        "title": SHORT,
        "frames": {"type": "array", "minItems": 1, "maxItems": 30, "items": STORYBOARD_FRAME},
        "frame_media": {
            "type": "object",
            "propertyNames": {"pattern": "^[0-9]{1,3}$"},
            "additionalProperties": MEDIA_KEY,
        },
        "voiceover_media_key": MEDIA_KEY,
    },
    "required": ["frames"],
}
LONGFORM_SCHEMA = _object(
    {
        "title": {"type": "string", "minLength": 1, "maxLength": 200},
        "sections": {
            "type": "array",
            "minItems": 1,
            "maxItems": 40,
            "items": _object({"heading": SHORT, "body": {"type": "string", "maxLength": 5000}}, ["heading", "body"]),
        },
        "audio_media_key": MEDIA_KEY,
    },
    ["title", "sections"],
)
TWITTER_AD_SCHEMA = _object(
    {
        "headline": {"type": "string", "minLength": 1, "maxLength": 200},
        "body": {"type": "string", "maxLength": 500},
        "cta": {"type": "string", "maxLength": 60},
        "logo_media_key": MEDIA_KEY,
    },
    ["headline"],
)
PRODUCT_AD_SCHEMA = _object(
    {
        "product_name": {"type": "string", "minLength": 1, "maxLength": 120},
        "tagline": SHORT,
        "features": {"type": "array", "maxItems": 8, "items": {"type": "string", "minLength": 1, "maxLength": 200}},
        "cta": {"type": "string", "maxLength": 60},
        "image_media_keys": {"type": "array", "maxItems": 8, "items": MEDIA_KEY},
        "price": {"type": "string", "maxLength": 40},
    },
    ["product_name"],
)
LABEL_VALUE = _object({"label": {"type": "string", "maxLength": 60}, "value": {"type": "number"}}, ["label", "value"])
DATAVIZ_SCHEMA = _object(
    {
        "title": {"type": "string", "minLength": 1, "maxLength": 120},
        "kpis": {
            "type": "array",
            "maxItems": 6,
            "items": _object(
                {
                    "label": {"type": "string", "maxLength": 60},
                    "value": {"type": ["string", "number"]},
                    "delta": {"type": ["string", "number"]},
                },
                ["label", "value"],
            ),
        },
        "barData": {"type": "array", "maxItems": 12, "items": LABEL_VALUE},
        "donutData": {"type": "array", "maxItems": 8, "items": LABEL_VALUE},
        "lineData": {
            "type": "array",
            "maxItems": 100,
            "items": _object({"x": {"type": ["string", "number"]}, "y": {"type": "number"}}, ["x", "y"]),
        },
    },
    ["title"],
)
REVIEWS_SCHEMA = _object(
    {
        "businessName": {"type": "string", "minLength": 1, "maxLength": 120},
        "overallRating": {"type": "number", "minimum": 0, "maximum": 5},
        "totalReviews": {"type": "integer", "minimum": 0},
        "reviews": {
            "type": "array",
            "minItems": 1,
            "maxItems": 10,
            "items": _object(
                {
                    "author": {"type": "string", "minLength": 1, "maxLength": 80},
                    "rating": {"type": "number", "minimum": 1, "maximum": 5},
                    "text": {"type": "string", "minLength": 1, "maxLength": 600},
                },
                ["author", "rating", "text"],
            ),
        },
    },
    ["businessName"],
)

CAPTIONED_SAMPLE = {
    "title": "Three habits of fast teams",
    "captions": [
        {"text": "Fast teams ship small changes", "start_sec": 0, "end_sec": 3.3},
        {"text": "They review the same day", "start_sec": 3.3, "end_sec": 6.6},
        {"text": "And they measure what users feel", "start_sec": 6.6, "end_sec": 10},
    ],
}
STORYBOARD_SAMPLE = {
    "title": "From idea to launch",
    "frames": [
        {"frameNumber": 1, "duration": 3, "caption": "Every launch starts with a question", "voiceover": ""},
        {"frameNumber": 2, "duration": 4, "caption": "Sketch the answer in one page", "voiceover": ""},
        {"frameNumber": 3, "duration": 3, "caption": "Ship it to ten people first", "voiceover": ""},
    ],
}
LONGFORM_SAMPLE = {
    "title": "How we cut our release time in half",
    "sections": [
        {"heading": "Where the time went", "body": "Most of the wait was review queues and manual checks."},
        {"heading": "Smaller changes", "body": "We split work into changes one person can review in minutes."},
        {"heading": "Automated checks", "body": "Tests and linters run on every push, before anyone looks."},
        {"heading": "A daily review slot", "body": "Everyone reviews at eleven, so nothing waits overnight."},
        {"heading": "Release trains", "body": "A release leaves every afternoon with whatever is ready."},
        {"heading": "What it gave us", "body": "Releases every day and fewer surprises in production."},
        {"heading": "Your first step", "body": "Measure how long a change waits, then cut the longest wait."},
    ],
}
PRODUCT_SAMPLE = {
    "product_name": "Northwind Planner",
    "tagline": "Plans that survive Monday",
    "features": ["Drag-and-drop weeks", "Shared team calendars", "One-click status reports"],
    "cta": "Start free today",
    "price": "$12/month",
}
DATAVIZ_SAMPLE = {
    "title": "Quarterly growth",
    "kpis": [
        {"label": "Revenue", "value": "$1.2M", "delta": "+18%"},
        {"label": "Customers", "value": 4200, "delta": "+9%"},
    ],
    "barData": [{"label": "Q1", "value": 120}, {"label": "Q2", "value": 180}, {"label": "Q3", "value": 240}],
    "donutData": [{"label": "Direct", "value": 55}, {"label": "Partners", "value": 30}, {"label": "Ads", "value": 15}],
    "lineData": [{"x": "Jan", "y": 10}, {"x": "Feb", "y": 14}, {"x": "Mar", "y": 13}, {"x": "Apr", "y": 21}],
}
REVIEWS_SAMPLE = {
    "businessName": "Harbor Coffee",
    "overallRating": 4.8,
    "totalReviews": 312,
    "reviews": [
        {"author": "Maya", "rating": 5, "text": "The best flat white in town, and the staff remember your name."},
        {"author": "Tom", "rating": 5, "text": "Quiet mornings, fast wifi, great pastries."},
        {"author": "Priya", "rating": 4, "text": "Lovely beans to take home; it gets busy at lunch."},
    ],
}


def storyboard_frames(props: dict[str, Any]) -> int:
    """StoryboardVideo's length: the sum of its frame durations."""
    return max(1, round(sum(float(frame["duration"]) for frame in props["frames"]) * FPS))


def section_seconds(section: dict[str, Any]) -> float:
    """YouTubeLongForm's time for one section: max(8 s, words ÷ 2.5)."""
    return max(8.0, len(str(section.get("body", "")).split()) / 2.5)


def longform_frames(props: dict[str, Any]) -> int:
    """YouTubeLongForm's length: a 4 s title, then each section's time."""
    return round((4 + sum(section_seconds(section) for section in props["sections"])) * FPS)


def reviews_frames(props: dict[str, Any]) -> int:
    """ReviewsTestimonial's length: 5 s intro, 4 s per review, 3 s outro."""
    return (5 + 4 * len(props.get("reviews") or []) + 3) * FPS


@dataclass(frozen=True, slots=True)
class Composition:
    """One built-in composition: the renderer family that draws it, its size, and its length."""

    id: str
    family: str
    width: int
    height: int
    frames: int
    description: str
    schema: dict[str, Any]
    sample: dict[str, Any]
    dynamic_frames: Callable[[dict[str, Any]], int] | None = None

    def duration_in_frames(self, props: dict[str, Any]) -> int:
        """The length with these props."""
        return self.dynamic_frames(props) if self.dynamic_frames is not None else self.frames


def _variants(
    family: str, base: str, description: str, schema: dict[str, Any], sample: dict[str, Any], **extra: Any
) -> list[Composition]:
    return [
        Composition(
            f"{base}{suffix}", family, size[0], size[1], 300, f"{description} ({label}).", schema, sample, **extra
        )
        for suffix, size, label in (
            ("", PORTRAIT, "vertical 9:16"),
            ("-Square", SQUARE, "square 1:1"),
            ("-Horizontal", LANDSCAPE, "horizontal 16:9"),
        )
    ]


COMPOSITIONS: dict[str, Composition] = {
    composition.id: composition
    for composition in [
        *_variants(
            "captioned",
            "CaptionedClip",
            "Timed captions over a background image or video, or the brand gradient; optional title and audio",
            CAPTIONED_SCHEMA,
            CAPTIONED_SAMPLE,
        ),
        *_variants(
            "storyboard",
            "StoryboardVideo",
            "create_storyboard's frames as timed scenes: caption and voiceover text, per-frame media, voiceover audio",
            STORYBOARD_SCHEMA,
            STORYBOARD_SAMPLE,
            dynamic_frames=storyboard_frames,
        ),
        Composition(
            "YouTubeLongForm",
            "longform",
            *LANDSCAPE,
            1800,
            "Long-form explainer: a title card, then one chapter card per section (heading and body), optional audio.",
            LONGFORM_SCHEMA,
            LONGFORM_SAMPLE,
            longform_frames,
        ),
        Composition(
            "TwitterAd",
            "twitter_ad",
            *LANDSCAPE,
            450,
            "15 s ad: headline, body and a call to action with the logo.",
            TWITTER_AD_SCHEMA,
            {
                "headline": "Plan a month of posts in ten minutes",
                "body": "Your brand voice, every channel, one calendar.",
                "cta": "Try it free",
            },
        ),
        Composition(
            "ProductAd",
            "product_ad",
            *LANDSCAPE,
            2130,
            "71 s product ad: name and tagline, product images, each feature, price and call to action.",
            PRODUCT_AD_SCHEMA,
            PRODUCT_SAMPLE,
        ),
        Composition(
            "ProductAd-60s",
            "product_ad",
            *LANDSCAPE,
            1800,
            "60 s product ad: name and tagline, product images, each feature, price and call to action.",
            PRODUCT_AD_SCHEMA,
            PRODUCT_SAMPLE,
        ),
        Composition(
            "ProductAd-GTM-A",
            "product_ad_gtm",
            *LANDSCAPE,
            1800,
            "60 s go-to-market ad ordered problem (tagline) → solution (product and features) → proof "
            "(price, call to action).",
            PRODUCT_AD_SCHEMA,
            PRODUCT_SAMPLE,
        ),
        Composition(
            "ProductAd-30s",
            "product_ad",
            *LANDSCAPE,
            900,
            "30 s product ad: name and tagline, images, features, price and call to action.",
            PRODUCT_AD_SCHEMA,
            PRODUCT_SAMPLE,
        ),
        Composition(
            "ProductAd-15s",
            "product_ad",
            *LANDSCAPE,
            450,
            "15 s product ad: name and tagline, features, price and call to action.",
            PRODUCT_AD_SCHEMA,
            PRODUCT_SAMPLE,
        ),
        Composition(
            "DataVizDashboard",
            "dataviz",
            *PORTRAIT,
            450,
            "15 s animated dashboard: KPI cards, a bar chart, a donut and a line graph from the props' data.",
            DATAVIZ_SCHEMA,
            DATAVIZ_SAMPLE,
        ),
        Composition(
            "ReviewsTestimonial",
            "reviews",
            *PORTRAIT,
            600,
            "Customer reviews: an intro with the overall rating, 4 s per review with its stars, an outro.",
            REVIEWS_SCHEMA,
            REVIEWS_SAMPLE,
            reviews_frames,
        ),
    ]
}


def field_errors(schema: dict[str, Any], props: Any, *, prefix: str) -> list[dict[str, str]]:
    """The props' schema violations as {path, message}, paths like `props.captions[0].text`."""
    from jsonschema import (
        Draft202012Validator,
    )  # imported on first use: with attrs, referencing and rpds it holds ~3 MB

    errors = []
    for error in sorted(Draft202012Validator(schema).iter_errors(props), key=lambda item: list(item.absolute_path)):
        path = prefix
        for part in error.absolute_path:
            path += f"[{part}]" if isinstance(part, int) else f".{part}"
        errors.append({"path": path, "message": error.message[:300]})
    return errors[:20]


def seconds(frames: int) -> float:
    """A frame count as seconds at 30 fps."""
    return round(frames / FPS, 3)


def output_credits(output_seconds: float) -> int:
    """The renders' cost: 5 + 1 per started 5 s of output."""
    return 5 + math.ceil(max(0.0, output_seconds) / 5 - 1e-9)
