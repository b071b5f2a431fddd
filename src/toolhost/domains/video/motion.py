"""The builtin video model: the brand-graphic renderer in motion, encoded to H.264 MP4 at 30 fps with PyAV.

The start frame (the reference image darkened, or the brand gradient with accents) moves in a slow zoom and
pan; when an end frame is given the last second cross-fades to it. The prompt's key phrases (the image
renderer's headline and supporting lines, then its remaining sentences) appear one after another as timed
captions in the brand fonts, emphasis words in the accent colour. An optional narration WAV becomes an AAC
track. Rendering calls `checkpoint` before every frame, so a cancelled or timed-out job stops within a frame.
"""

from __future__ import annotations

import hashlib
import io
import math
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING

from PIL import Image, ImageDraw

from toolhost.providers import frame_text, graphics

if TYPE_CHECKING:
    import av

FPS = 30
SIZES: dict[str, tuple[int, int]] = {"16:9": (1920, 1080), "9:16": (1080, 1920), "1:1": (1080, 1080)}
# The start frame is rendered this much larger than the output, so the zoom never upsamples.
ZOOM = 1.12
FADE_SECONDS = 0.3
CROSSFADE_SECONDS = 1.0
SECONDS_PER_CAPTION = 2.5
MAX_CAPTIONS = 8
# Preferred encoders in order: H.264 first; mpeg4 only for an FFmpeg build without any H.264 encoder.
VIDEO_ENCODERS = ("libx264", "h264", "libopenh264", "mpeg4")
AUDIO_RATE = 44_100


@dataclass(frozen=True, slots=True)
class Caption:
    """One timed phrase, pre-rendered on a transparent layer the size of its text block."""

    text: str
    start: float
    end: float
    layer: Image.Image
    position: tuple[int, int]


def encoder_name() -> str:
    """The best video encoder PyAV's FFmpeg offers (libx264 in the PyPI wheels)."""
    import av  # imported on first use: PyAV and its FFmpeg libraries hold ~22 MB that an idle server does not need

    for name in VIDEO_ENCODERS:
        if name in av.codecs_available:
            return name
    raise RuntimeError("PyAV's FFmpeg has no usable video encoder")


def phrases(prompt: str, duration: float) -> list[str]:
    """The key phrases shown as captions: the renderer's headline and lines, then the prompt's sentences."""
    composition = frame_text.compose(prompt)
    chosen = [composition.headline, *composition.supporting]
    for sentence in frame_text.body_sentences(prompt):
        if not any(sentence in phrase or phrase in sentence for phrase in chosen):
            chosen.append(" ".join(sentence.split()[:14]))
    limit = max(1, min(MAX_CAPTIONS, math.floor(duration / SECONDS_PER_CAPTION)))
    return [phrase for phrase in chosen if phrase][:limit] or ["Untitled"]


def narration_text(prompt: str, duration: float) -> str:
    """What the narration says: the captions, one sentence each."""
    return ". ".join(phrase.rstrip(".!?") for phrase in phrases(prompt, duration)) + "."


def _wrap(draw: ImageDraw.ImageDraw, text: str, font: graphics.FontType, width: float) -> list[list[str]]:
    lines: list[list[str]] = []
    for word in text.split():
        if lines and draw.textlength(" ".join([*lines[-1], word]), font=font) <= width:
            lines[-1].append(word)
        else:
            lines.append([word])
    return lines


def _caption_layer(
    text: str, *, size: tuple[int, int], look: graphics.BrandLook, headline: bool, emphasis: frozenset[str], dark: bool
) -> tuple[Image.Image, tuple[int, int]]:
    """The phrase typeset centred in the lower half, on a translucent band for legibility over any frame."""
    width, height = size
    unit = min(width, height)
    box_width = width * 0.84
    measure = ImageDraw.Draw(Image.new("RGBA", (1, 1)))
    font_size = unit // 11 if headline else unit // 15
    family = look.heading_font if headline else look.body_font
    while True:
        font = graphics.load_font(family, font_size, bold=headline)
        lines = _wrap(measure, text, font, box_width)
        if len(lines) <= 4 or font_size <= 20:
            break
        font_size = int(font_size * 0.9)
    lines = lines[:4]
    line_height = int(font_size * 1.2)
    padding = font_size // 2
    block_width = int(max(measure.textlength(" ".join(line), font=font) for line in lines)) + 2 * padding
    block_height = line_height * len(lines) + 2 * padding
    layer = Image.new("RGBA", (block_width, block_height), (0, 0, 0, 0))
    draw = ImageDraw.Draw(layer)
    band = (0, 0, 0, 110) if dark else (255, 255, 255, 130)
    draw.rounded_rectangle((0, 0, block_width - 1, block_height - 1), radius=padding, fill=band)
    text_color = (255, 255, 255) if dark else (17, 17, 17)
    emphasis_color = (
        look.accent
        if graphics.contrast(look.accent, (0, 0, 0) if dark else (255, 255, 255)) >= 2.5
        else (graphics.mix(look.accent, text_color, 0.5))
    )
    space = measure.textlength(" ", font=font)
    y = padding
    for line in lines:
        x = (block_width - measure.textlength(" ".join(line), font=font)) / 2
        for word in line:
            fill = emphasis_color if word.strip(".,!?:;\"'“”").lower() in emphasis else text_color
            draw.text((x, y), word, font=font, fill=fill)
            x += measure.textlength(word, font=font) + space
        y += line_height
    position = ((width - block_width) // 2, int(height * 0.62 - block_height / 2))
    return layer, position


def _wordmark(
    size: tuple[int, int], look: graphics.BrandLook, dark: bool
) -> tuple[Image.Image, tuple[int, int]] | None:
    """The brand name bottom-right, as on the still graphics."""
    if not look.name:
        return None
    unit = min(size)
    font = graphics.load_font(look.heading_font, unit // 32, bold=True)
    measure = ImageDraw.Draw(Image.new("RGBA", (1, 1)))
    _, _, right, bottom = measure.textbbox((0, 0), look.name[:60], font=font)
    layer = Image.new("RGBA", (int(right) + 2, int(bottom) + 2), (0, 0, 0, 0))
    ImageDraw.Draw(layer).text((0, 0), look.name[:60], font=font, fill=(255, 255, 255) if dark else (17, 17, 17))
    margin = round(unit * 0.08)
    return layer, (size[0] - margin - layer.width, size[1] - margin - layer.height)


def _faded(layer: Image.Image, opacity: float) -> Image.Image:
    if opacity >= 1:
        return layer
    faded = layer.copy()
    faded.putalpha(layer.getchannel("A").point(lambda alpha: round(alpha * opacity)))
    return faded


def _opacity(caption: Caption, time: float) -> float:
    if time < caption.start or time >= caption.end:
        return 0.0
    return max(0.0, min(1.0, (time - caption.start) / FADE_SECONDS, (caption.end - time) / FADE_SECONDS))


def render(
    prompt: str,
    *,
    aspect_ratio: str,
    duration: float,
    look: graphics.BrandLook,
    start_frame: Image.Image | None = None,
    end_frame: Image.Image | None = None,
    narration: bytes | None = None,
    checkpoint: Callable[[], None] = lambda: None,
    progress: Callable[[float], None] = lambda fraction: None,
) -> tuple[bytes, dict[str, object]]:
    """The MP4 and what it holds (size, fps, frames, codec), for the job's details."""
    width, height = SIZES[aspect_ratio]
    seed = hashlib.sha256(prompt.encode()).digest()
    canvas_size = (round(width * ZOOM), round(height * ZOOM))
    canvas = graphics.background(canvas_size, look, start_frame, seed)
    dark = start_frame is not None or graphics.luminance(graphics.mix(look.primary, look.secondary, 0.5)) < 0.4
    end = graphics.background((width, height), look, end_frame, seed) if end_frame is not None else None
    composition = frame_text.compose(prompt)
    texts = phrases(prompt, duration)
    slot = duration / len(texts)
    captions = []
    for index, text in enumerate(texts):
        layer, position = _caption_layer(
            text, size=(width, height), look=look, headline=index == 0, emphasis=composition.emphasis, dark=dark
        )
        captions.append(Caption(text=text, start=index * slot, end=(index + 1) * slot, layer=layer, position=position))
    wordmark = _wordmark((width, height), look, dark)
    # The pan drifts towards a corner picked from the prompt's hash (same prompt, same motion).
    pan_x, pan_y = (seed[0] / 255), (seed[1] / 255)
    total_frames = max(1, round(duration * FPS))

    def frames() -> Iterator[Image.Image]:
        for number in range(total_frames):
            checkpoint()
            time = number / FPS
            progress_fraction = number / max(1, total_frames - 1)
            # Zoom in from the whole canvas to the output's own size, drifting towards the pan corner.
            box_width = canvas_size[0] - (canvas_size[0] - width) * progress_fraction
            box_height = canvas_size[1] - (canvas_size[1] - height) * progress_fraction
            left = (canvas_size[0] - box_width) * pan_x
            top = (canvas_size[1] - box_height) * pan_y
            frame = canvas.resize(
                (width, height),
                Image.Resampling.BILINEAR,
                box=(left, top, left + box_width, top + box_height),
            )
            if end is not None:
                fade = min(CROSSFADE_SECONDS, duration / 3)
                amount = (time - (duration - fade)) / fade
                if amount > 0:
                    frame = Image.blend(frame, end, min(1.0, amount))
            for caption in captions:
                opacity = _opacity(caption, time)
                if opacity > 0:
                    frame.paste(_faded(caption.layer, opacity), caption.position, _faded(caption.layer, opacity))
            if wordmark is not None:
                frame.paste(wordmark[0], wordmark[1], wordmark[0])
            if number % FPS == 0:
                progress(progress_fraction)
            yield frame

    data, codec = encode_mp4(frames(), size=(width, height), audio=narration, audio_seconds=duration)
    details: dict[str, object] = {
        "width": width,
        "height": height,
        "fps": FPS,
        "frames": total_frames,
        "duration_seconds": round(total_frames / FPS, 3),
        "codec": codec,
        "has_audio": narration is not None,
        "captions": texts,
    }
    return data, details


def encode_mp4(
    frames: Iterable[Image.Image],
    *,
    size: tuple[int, int],
    fps: int = FPS,
    crf: int = 23,
    audio: bytes | None = None,
    audio_seconds: float = 0.0,
) -> tuple[bytes, str]:
    """Encodes RGB frames of `size` to an MP4 (yuv420p, +faststart) and the codec used ("h264" when available).

    `audio` (WAV, MP3 or any file FFmpeg reads) becomes an AAC track cut at `audio_seconds`. The frames are
    consumed one at a time, so a generator that checks for cancellation stops the encoding between frames.
    """
    import av  # on first use, as in encoder_name

    codec = encoder_name()
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "video.mp4"
        with av.open(str(path), mode="w", format="mp4", options={"movflags": "+faststart"}) as container:
            stream = container.add_stream(codec, rate=fps)
            assert isinstance(stream, av.video.stream.VideoStream)
            stream.width, stream.height, stream.pix_fmt = size[0], size[1], "yuv420p"
            if codec == "libx264":
                stream.options = {"preset": "veryfast", "crf": str(crf)}
            audio_stream = container.add_stream("aac", rate=AUDIO_RATE) if audio else None
            assert audio_stream is None or isinstance(audio_stream, av.audio.stream.AudioStream)
            for number, frame in enumerate(frames):
                video_frame = av.VideoFrame.from_image(frame)
                video_frame.pts = number
                for packet in stream.encode(video_frame):
                    container.mux(packet)
            for packet in stream.encode():
                container.mux(packet)
            if audio_stream is not None and audio is not None:
                _mux_narration(container, audio_stream, audio, audio_seconds)
        data = path.read_bytes()
    return data, "h264" if codec in ("libx264", "h264", "libopenh264") else codec


def _mux_narration(
    container: av.container.OutputContainer, stream: av.audio.stream.AudioStream, narration: bytes, duration: float
) -> None:
    """Re-encodes the narration (WAV, or any audio FFmpeg reads) as AAC, cut at the video's end."""
    import av  # on first use, as in encoder_name

    resampler = av.AudioResampler(format="fltp", layout="mono", rate=AUDIO_RATE)
    limit = int(duration * AUDIO_RATE)
    written = 0
    with av.open(io.BytesIO(narration), mode="r") as source:
        for decoded in source.decode(audio=0):
            for frame in resampler.resample(decoded):
                if written >= limit:
                    break
                frame.pts = written
                frame.time_base = Fraction(1, AUDIO_RATE)
                written += frame.samples
                for packet in stream.encode(frame):
                    container.mux(packet)
    for packet in stream.encode():
        container.mux(packet)
