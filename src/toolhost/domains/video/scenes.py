"""The scenes of the built-in compositions: each family's props laid out as backdrops and timed Pillow layers.

A scene is a stretch of the video: its backdrop (a picture, a gradient in the brand look, or a looping clip)
and the layers shown over it, typeset once in the brand's fonts and colours; `render` draws them frame by frame.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from PIL import Image, ImageDraw, ImageOps

from toolhost.domains.video.compositions import FPS, Composition, section_seconds
from toolhost.providers import graphics

Backdrop = Callable[[float], Image.Image]


@dataclass(slots=True)
class Layer:
    """A typeset element shown from `start` to `end` (seconds) with an entrance effect."""

    image: Image.Image
    position: tuple[int, int]
    start: float
    end: float
    effect: str = "fade"


@dataclass(slots=True)
class Scene:
    """A stretch of the video: its backdrop (a function of time, for video backgrounds) and its layers."""

    start: float
    end: float
    backdrop: Backdrop
    layers: list[Layer] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Assets:
    """The media the props name, already read: images by key, a background video's frames, and audio."""

    images: dict[str, Image.Image] = field(default_factory=dict)
    videos: dict[str, list[Image.Image]] = field(default_factory=dict)
    audio: bytes | None = None


class Typesetter:
    """Draws text blocks and shapes in the brand's fonts and colours at one output size."""

    def __init__(self, size: tuple[int, int], look: graphics.BrandLook) -> None:
        self.size = size
        self.look = look
        self.unit = min(size)
        self.measure = ImageDraw.Draw(Image.new("RGBA", (1, 1)))

    def text(
        self,
        text: str,
        *,
        scale: float,
        width: float,
        heading: bool = False,
        color: tuple[int, int, int] = (255, 255, 255),
        max_lines: int = 6,
        align: str = "center",
    ) -> Image.Image:
        """A transparent layer with the text wrapped to `width`, shrunk until it fits `max_lines`."""
        font_size = max(14, round(self.unit * scale))
        family = self.look.heading_font if heading else self.look.body_font
        while True:
            font = graphics.load_font(family, font_size, bold=heading)
            lines: list[str] = []
            for word in text.split():
                candidate = f"{lines[-1]} {word}" if lines else word
                if lines and self.measure.textlength(candidate, font=font) <= width:
                    lines[-1] = candidate
                else:
                    lines.append(word)
            if len(lines) <= max_lines or font_size <= 16:
                break
            font_size = int(font_size * 0.88)
        lines = lines[:max_lines] or [""]
        line_height = round(font_size * 1.25)
        block_width = max(1, round(max(self.measure.textlength(line, font=font) for line in lines)))
        layer = Image.new("RGBA", (block_width + 4, line_height * len(lines) + 4), (0, 0, 0, 0))
        draw = ImageDraw.Draw(layer)
        for index, line in enumerate(lines):
            line_width = self.measure.textlength(line, font=font)
            x = (block_width - line_width) / 2 if align == "center" else 0
            draw.text((x, index * line_height), line, font=font, fill=color)
        return layer

    def band(self, layer: Image.Image, *, padding: float = 0.5, dark: bool = True) -> Image.Image:
        """The layer on a translucent rounded band, legible over any backdrop."""
        pad = round(self.unit * 0.02 * padding * 2) + 8
        banded = Image.new("RGBA", (layer.width + 2 * pad, layer.height + 2 * pad), (0, 0, 0, 0))
        ImageDraw.Draw(banded).rounded_rectangle(
            (0, 0, banded.width - 1, banded.height - 1),
            radius=pad,
            fill=(0, 0, 0, 120) if dark else (255, 255, 255, 150),
        )
        banded.alpha_composite(layer, (pad, pad))
        return banded

    def stars(self, rating: float, *, scale: float) -> Image.Image:
        """Five stars, filled up to the rating in the accent colour."""
        radius = max(8, round(self.unit * scale))
        layer = Image.new("RGBA", (radius * 2 * 5 + radius * 4, radius * 2 + 2), (0, 0, 0, 0))
        draw = ImageDraw.Draw(layer)
        for index in range(5):
            center_x = radius + index * (radius * 2 + radius)
            points = [
                (
                    center_x + (radius if point % 2 == 0 else radius * 0.45) * math.sin(point * math.pi / 5),
                    radius - (radius if point % 2 == 0 else radius * 0.45) * math.cos(point * math.pi / 5),
                )
                for point in range(10)
            ]
            filled = rating >= index + 0.75 or (rating > index + 0.25 and rating < index + 0.75)
            draw.polygon(points, fill=(*self.look.accent, 255) if filled else (255, 255, 255, 70))
        return layer

    def centered(self, layer: Image.Image, y_fraction: float) -> tuple[int, int]:
        """Where a layer sits horizontally centred with its middle at `y_fraction` of the height."""
        return ((self.size[0] - layer.width) // 2, round(self.size[1] * y_fraction - layer.height / 2))


def _static(image: Image.Image) -> Backdrop:
    return lambda _: image


def _backdrop(size: tuple[int, int], look: graphics.BrandLook, reference: Image.Image | None, seed: str) -> Backdrop:
    return _static(graphics.background(size, look, reference, seed.encode().ljust(8, b"\0")))


def _video_backdrop(size: tuple[int, int], frames: list[Image.Image]) -> Backdrop:
    fitted = [
        Image.blend(ImageOps.fit(frame, size, method=Image.Resampling.BILINEAR), Image.new("RGB", size), 0.4)
        for frame in frames
    ]
    # A background clip shorter than the composition loops.
    return lambda time: fitted[int(time * FPS) % len(fitted)]


def _media_backdrop(size: tuple[int, int], look: graphics.BrandLook, assets: Assets, key: Any, seed: str) -> Backdrop:
    if isinstance(key, str) and key in assets.videos:
        return _video_backdrop(size, assets.videos[key])
    return _backdrop(size, look, assets.images.get(key) if isinstance(key, str) else None, seed)


def _wordmark(setter: Typesetter, start: float, end: float) -> Layer | None:
    if setter.look.logo is not None:
        logo = setter.look.logo.convert("RGBA")
        logo.thumbnail((round(setter.unit * 0.16), round(setter.unit * 0.08)))
        image = logo
    elif setter.look.name:
        image = setter.text(setter.look.name[:60], scale=0.03, width=setter.size[0] * 0.5, heading=True, max_lines=1)
    else:
        return None
    margin = round(setter.unit * 0.05)
    position = (setter.size[0] - margin - image.width, setter.size[1] - margin - image.height)
    return Layer(image, position, start, end, "fade")


def _stack(
    setter: Typesetter, blocks: list[Image.Image], *, center: float = 0.5, gap: float = 0.03
) -> list[tuple[int, int]]:
    """Positions that stack blocks vertically, centred as a group at `center` of the height."""
    spacing = round(setter.unit * gap)
    total = sum(block.height for block in blocks) + spacing * max(0, len(blocks) - 1)
    y = round(setter.size[1] * center - total / 2)
    positions = []
    for block in blocks:
        positions.append(((setter.size[0] - block.width) // 2, y))
        y += block.height + spacing
    return positions


def _card_scene(
    setter: Typesetter, start: float, end: float, backdrop: Backdrop, texts: list[tuple[str, float, bool]]
) -> Scene:
    """A scene of stacked text blocks (text, scale, heading) that enter one after another."""
    width = setter.size[0] * 0.84
    blocks = [setter.text(text, scale=scale, width=width, heading=heading) for text, scale, heading in texts if text]
    scene = Scene(start, end, backdrop)
    for index, (block, position) in enumerate(zip(blocks, _stack(setter, blocks), strict=True)):
        scene.layers.append(Layer(block, position, start + 0.25 * index, end, "rise"))
    return scene


def _captioned(setter: Typesetter, props: dict[str, Any], assets: Assets, duration: float) -> list[Scene]:
    scene = Scene(
        0, duration, _media_backdrop(setter.size, setter.look, assets, props.get("background_media_key"), "captioned")
    )
    width = setter.size[0] * 0.84
    if props.get("title"):
        title = setter.band(setter.text(str(props["title"]), scale=0.055, width=width, heading=True, max_lines=2))
        scene.layers.append(Layer(title, setter.centered(title, 0.14), 0, duration, "rise"))
    for caption in props["captions"]:
        start, end = float(caption["start_sec"]), min(duration, float(caption["end_sec"]))
        if end <= start or start >= duration:
            continue
        block = setter.band(setter.text(str(caption["text"]), scale=0.06, width=width, heading=True, max_lines=4))
        scene.layers.append(Layer(block, setter.centered(block, 0.72), start, end, "rise"))
    return [scene]


def _storyboard(setter: Typesetter, props: dict[str, Any], assets: Assets, duration: float) -> list[Scene]:
    scenes, start = [], 0.0
    frame_media = props.get("frame_media") or {}
    for frame in sorted(props["frames"], key=lambda item: int(item["frameNumber"])):
        end = start + float(frame["duration"])
        backdrop = _media_backdrop(
            setter.size, setter.look, assets, frame_media.get(str(frame["frameNumber"])), f"frame{frame['frameNumber']}"
        )
        texts = [(str(frame.get("caption") or ""), 0.065, True), (str(frame.get("voiceover") or ""), 0.035, False)]
        if start == 0 and props.get("title"):
            texts.insert(0, (str(props["title"]), 0.04, False))
        scenes.append(_card_scene(setter, start, end, backdrop, texts))
        start = end
    return scenes


def _longform(setter: Typesetter, props: dict[str, Any], assets: Assets, duration: float) -> list[Scene]:
    backdrop = _backdrop(setter.size, setter.look, None, "longform")
    scenes = [_card_scene(setter, 0, 4, backdrop, [(str(props["title"]), 0.08, True)])]
    start = 4.0
    for number, section in enumerate(props["sections"], start=1):
        end = start + section_seconds(section)
        scenes.append(
            _card_scene(
                setter,
                start,
                end,
                backdrop,
                [
                    (f"{number:02d}", 0.05, False),
                    (str(section["heading"]), 0.07, True),
                    (str(section["body"]), 0.038, False),
                ],
            )
        )
        start = end
    return scenes


def _split(
    duration: float, parts: list[list[tuple[str, float, bool]]]
) -> list[tuple[float, float, list[tuple[str, float, bool]]]]:
    slot = duration / len(parts)
    return [(index * slot, (index + 1) * slot, texts) for index, texts in enumerate(parts)]


def _twitter_ad(setter: Typesetter, props: dict[str, Any], assets: Assets, duration: float) -> list[Scene]:
    backdrop = _backdrop(setter.size, setter.look, None, "twitter")
    parts = [[(str(props["headline"]), 0.09, True)]]
    if props.get("body"):
        parts.append([(str(props["body"]), 0.06, False)])
    parts.append([(str(props.get("cta") or props["headline"]), 0.08, True)])
    scenes = [_card_scene(setter, start, end, backdrop, texts) for start, end, texts in _split(duration, parts)]
    logo = assets.images.get(props.get("logo_media_key") or "")
    if logo is not None:
        mark = logo.convert("RGBA")
        mark.thumbnail((round(setter.unit * 0.3), round(setter.unit * 0.18)))
        scenes[-1].layers.append(Layer(mark, setter.centered(mark, 0.2), scenes[-1].start, duration, "fade"))
    return scenes


def _product_ad(
    setter: Typesetter, props: dict[str, Any], assets: Assets, duration: float, *, gtm: bool
) -> list[Scene]:
    name, tagline = str(props["product_name"]), str(props.get("tagline") or "")
    features = [str(feature) for feature in props.get("features") or []]
    closing = [(props.get("price") or "", 0.09, True), (props.get("cta") or f"Get {name}", 0.06, False)]
    pictures = [assets.images[key] for key in props.get("image_media_keys") or [] if key in assets.images]
    if gtm:
        # Problem → solution → proof.
        parts = [
            [(tagline or f"Still without {name}?", 0.08, True)],
            [(name, 0.1, True), *[(feature, 0.045, False) for feature in features[:4]]],
            closing,
        ]
        backdrops = [None, pictures[0] if pictures else None, None]
    else:
        parts = [[(name, 0.11, True), (tagline, 0.05, False)]]
        backdrops = [None]
        for picture in pictures:
            parts.append([(name, 0.06, True)])
            backdrops.append(picture)
        for feature in features:
            parts.append([(feature, 0.075, True)])
            backdrops.append(None)
        parts.append(closing)
        backdrops.append(None)
    return [
        _card_scene(setter, start, end, _backdrop(setter.size, setter.look, backdrops[index], f"product{index}"), texts)
        for index, (start, end, texts) in enumerate(_split(duration, parts))
    ]


def _chart_layer(setter: Typesetter, kind: str, data: list[dict[str, Any]]) -> Image.Image:
    """A bar chart, donut or line graph of the data in the brand palette, on a transparent layer."""
    width, height = round(setter.size[0] * 0.84), round(setter.size[1] * 0.42)
    layer = Image.new("RGBA", (width, height), (0, 0, 0, 0))
    draw = ImageDraw.Draw(layer)
    font_size = max(14, round(setter.unit * 0.03))
    font = graphics.load_font(setter.look.body_font, font_size, bold=False)
    colors = [
        setter.look.accent,
        graphics.mix(setter.look.accent, (255, 255, 255), 0.45),
        (255, 255, 255),
        graphics.mix(setter.look.primary, (255, 255, 255), 0.6),
    ]
    values = [float(item.get("value", item.get("y", 0))) for item in data]
    top = max([*values, 1e-9])
    if kind == "bar":
        slot = width / len(data)
        for index, (item, value) in enumerate(zip(data, values, strict=True)):
            bar_height = (height - 60) * max(0.0, value) / top
            left = index * slot + slot * 0.15
            draw.rounded_rectangle(
                (left, height - 50 - bar_height, left + slot * 0.7, height - 50), radius=8, fill=(*colors[0], 255)
            )
            draw.text((left, height - 40), str(item["label"])[:12], font=font, fill=(255, 255, 255))
    elif kind == "donut":
        total = sum(max(0.0, value) for value in values) or 1.0
        diameter = min(width, height) - 20
        box = (10, 10, 10 + diameter, 10 + diameter)
        angle = -90.0
        for index, value in enumerate(values):
            sweep = 360 * max(0.0, value) / total
            draw.pieslice(box, angle, angle + sweep, fill=(*colors[index % len(colors)], 255))
            angle += sweep
        hole = diameter * 0.28
        center = 10 + diameter / 2
        draw.ellipse((center - hole, center - hole, center + hole, center + hole), fill=(*setter.look.secondary, 255))
        for index, item in enumerate(data):
            y = 20 + index * font_size * 1.6
            draw.rectangle(
                (diameter + 40, y, diameter + 40 + font_size, y + font_size), fill=(*colors[index % len(colors)], 255)
            )
            draw.text(
                (diameter + 50 + font_size, y),
                f"{str(item['label'])[:16]} {values[index]:g}",
                font=font,
                fill=(255, 255, 255),
            )
    else:
        low = min(values)
        span = (top - low) or 1.0
        points = [
            (20 + (width - 40) * index / max(1, len(values) - 1), height - 50 - (height - 80) * (value - low) / span)
            for index, value in enumerate(values)
        ]
        draw.line(points, fill=(*colors[0], 255), width=max(4, setter.unit // 150), joint="curve")
        for point, item in zip(points, data, strict=True):
            draw.ellipse((point[0] - 6, point[1] - 6, point[0] + 6, point[1] + 6), fill=(255, 255, 255, 255))
            if len(data) <= 12:
                draw.text((point[0] - 10, height - 40), str(item["x"])[:8], font=font, fill=(255, 255, 255))
    return layer


def _dataviz(setter: Typesetter, props: dict[str, Any], assets: Assets, duration: float) -> list[Scene]:
    backdrop = _backdrop(setter.size, setter.look, None, "dataviz")
    width = setter.size[0] * 0.84
    kpis = [
        f"{kpi['label']}: {kpi['value']}" + (f" ({kpi['delta']})" if kpi.get("delta") is not None else "")
        for kpi in props.get("kpis") or []
    ]
    parts: list[tuple[str, Any]] = [("kpis", kpis)]
    for kind, key in (("bar", "barData"), ("donut", "donutData"), ("line", "lineData")):
        if props.get(key):
            parts.append((kind, props[key]))
    slot = duration / len(parts)
    title = setter.text(str(props["title"]), scale=0.06, width=width, heading=True, max_lines=2)
    scenes = []
    for index, (kind, data) in enumerate(parts):
        start, end = index * slot, (index + 1) * slot
        scene = Scene(start, end, backdrop, [Layer(title, setter.centered(title, 0.12), start, end, "fade")])
        if kind == "kpis":
            blocks = [setter.band(setter.text(text, scale=0.045, width=width * 0.9, max_lines=2)) for text in data]
            for number, (block, position) in enumerate(zip(blocks, _stack(setter, blocks, center=0.55), strict=True)):
                scene.layers.append(Layer(block, position, start + 0.3 * number, end, "wipe_right"))
        else:
            chart = _chart_layer(setter, kind, data)
            scene.layers.append(
                Layer(chart, setter.centered(chart, 0.56), start, end, "wipe_up" if kind == "bar" else "wipe_right")
            )
        scenes.append(scene)
    return scenes


def _reviews(setter: Typesetter, props: dict[str, Any], assets: Assets, duration: float) -> list[Scene]:
    backdrop = _backdrop(setter.size, setter.look, None, "reviews")
    width = setter.size[0] * 0.84
    intro = _card_scene(
        setter,
        0,
        5,
        backdrop,
        [
            (str(props["businessName"]), 0.09, True),
            (f"{props['totalReviews']} reviews" if props.get("totalReviews") is not None else "", 0.04, False),
        ],
    )
    if props.get("overallRating") is not None:
        stars = setter.stars(float(props["overallRating"]), scale=0.04)
        intro.layers.append(Layer(stars, setter.centered(stars, 0.7), 0.6, 5, "wipe_right"))
    scenes = [intro]
    start = 5.0
    for review in props.get("reviews") or []:
        quote = setter.band(setter.text(f"“{review['text']}”", scale=0.05, width=width, max_lines=8))
        author = setter.text(f"— {review['author']}", scale=0.04, width=width, heading=True, max_lines=1)
        stars = setter.stars(float(review["rating"]), scale=0.035)
        blocks = [stars, quote, author]
        scene = Scene(start, start + 4, backdrop)
        for number, (block, position) in enumerate(zip(blocks, _stack(setter, blocks), strict=True)):
            scene.layers.append(
                Layer(block, position, start + 0.2 * number, start + 4, "wipe_right" if number == 0 else "rise")
            )
        scenes.append(scene)
        start += 4
    scenes.append(
        _card_scene(
            setter, start, duration, backdrop, [(str(props["businessName"]), 0.08, True), ("Thank you", 0.05, False)]
        )
    )
    return scenes


def build(
    composition: Composition,
    props: dict[str, Any],
    size: tuple[int, int],
    look: graphics.BrandLook,
    assets: Assets,
    duration: float,
) -> list[Scene]:
    """The composition's props laid out as scenes at `size` (layouts adapt to the aspect)."""
    setter = Typesetter(size, look)
    family = composition.family
    if family == "captioned":
        built = _captioned(setter, props, assets, duration)
    elif family == "storyboard":
        built = _storyboard(setter, props, assets, duration)
    elif family == "longform":
        built = _longform(setter, props, assets, duration)
    elif family == "twitter_ad":
        built = _twitter_ad(setter, props, assets, duration)
    elif family in ("product_ad", "product_ad_gtm"):
        built = _product_ad(setter, props, assets, duration, gtm=family == "product_ad_gtm")
    elif family == "dataviz":
        built = _dataviz(setter, props, assets, duration)
    else:
        built = _reviews(setter, props, assets, duration)
    mark = _wordmark(setter, 0, duration)
    if mark is not None and family != "twitter_ad":
        for scene in built:
            scene.layers.append(Layer(mark.image, mark.position, scene.start, scene.end, "fade"))
    return built
