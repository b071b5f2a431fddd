"""The frame renderer of the built-in compositions: the scenes `scenes` lays out, drawn frame by frame and encoded.

A frame is the scene's backdrop with each visible layer pasted under its entrance effect (fade, rise, or a
wipe that grows bars and lines). Frames go to content's PyAV H.264 encoder, or to an animated GIF.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Iterator
from typing import Any

from PIL import Image

from toolhost.domains.video import motion, scenes
from toolhost.domains.video.compositions import FPS, Composition
from toolhost.providers import graphics

ENTRANCE_SECONDS = 0.4
EXIT_SECONDS = 0.25
GIF_WIDTH, GIF_FPS, GIF_SECONDS = 540, 15, 15


def _entered(layer: scenes.Layer, time: float) -> Image.Image | None:
    """The layer as it looks at `time`: faded, risen or wiped in; None when hidden."""
    if time < layer.start or time >= layer.end:
        return None
    progress = min(1.0, (time - layer.start) / ENTRANCE_SECONDS)
    leaving = min(1.0, (layer.end - time) / EXIT_SECONDS)
    image = layer.image
    if layer.effect == "wipe_right" and progress < 1:
        shown = image.copy()
        shown.paste((0, 0, 0, 0), (max(1, round(image.width * progress)), 0, image.width, image.height))
        image = shown
    elif layer.effect == "wipe_up" and progress < 1:
        shown = image.copy()
        shown.paste((0, 0, 0, 0), (0, 0, image.width, image.height - max(1, round(image.height * progress))))
        image = shown
    opacity = min(progress if layer.effect in ("fade", "rise") else 1.0, leaving)
    if opacity < 1:
        image = image.copy()
        image.putalpha(image.getchannel("A").point(lambda alpha: round(alpha * opacity)))
    return image


def frame_at(built: list[scenes.Scene], time: float) -> Image.Image:
    """One frame: the scene at `time`, its layers pasted under their effects."""
    scene = next((item for item in built if item.start <= time < item.end), built[-1])
    frame = scene.backdrop(time).copy().convert("RGB")
    for layer in scene.layers:
        image = _entered(layer, time)
        if image is None:
            continue
        x, y = layer.position
        if layer.effect == "rise":
            y += round((1 - min(1.0, (time - layer.start) / ENTRANCE_SECONDS)) * min(frame.size) * 0.03)
        frame.paste(image, (x, y), image)
    return frame


def frames(
    built: list[scenes.Scene],
    count: int,
    *,
    fps: int,
    size: tuple[int, int] | None = None,
    checkpoint: Callable[[], None] = lambda: None,
    progress: Callable[[float], None] = lambda _: None,
) -> Iterator[Image.Image]:
    """The frames 0…count−1 at `fps`, checking for cancellation before each one."""
    for number in range(count):
        checkpoint()
        frame = frame_at(built, number / fps)
        if size is not None and frame.size != size:
            frame = frame.resize(size, Image.Resampling.BILINEAR)
        if number % fps == 0:
            progress(number / max(1, count))
        yield frame


def encode_gif(rendered: Iterator[Image.Image]) -> bytes:
    """An animated GIF (looping, 15 fps) of the frames, quantised to each frame's adaptive palette."""
    collected = [frame.quantize(colors=128, method=Image.Quantize.MEDIANCUT) for frame in rendered]
    # GIF delays are whole centiseconds: 1/15 s alternates 60 and 70 ms so the timeline does not drift.
    delays = [
        round((index + 1) * 100 / GIF_FPS) * 10 - round(index * 100 / GIF_FPS) * 10 for index in range(len(collected))
    ]
    buffer = io.BytesIO()
    collected[0].save(buffer, format="GIF", save_all=True, append_images=collected[1:], duration=delays, loop=0)
    return buffer.getvalue()


def gif_size(size: tuple[int, int]) -> tuple[int, int]:
    """A GIF's size: 540 px wide, the composition's aspect."""
    return GIF_WIDTH, round(size[1] * GIF_WIDTH / size[0] / 2) * 2


def render(
    composition: Composition,
    props: dict[str, Any],
    *,
    size: tuple[int, int],
    look: graphics.BrandLook,
    assets: scenes.Assets,
    output_format: str,
    checkpoint: Callable[[], None] = lambda: None,
    progress: Callable[[float], None] = lambda _: None,
) -> tuple[bytes, dict[str, Any]]:
    """Renders the composition frame by frame: an H.264 MP4 at 30 fps, or a GIF (540 px, 15 fps, first 15 s);
    with what it holds, kept in the job's output JSON for check_status."""
    total = composition.duration_in_frames(props)
    duration = total / FPS
    built = scenes.build(composition, props, size, look, assets, duration)
    if output_format == "gif":
        count = max(1, math.ceil(min(duration, GIF_SECONDS) * GIF_FPS))
        target = gif_size(size)
        data = encode_gif(frames(built, count, fps=GIF_FPS, size=target, checkpoint=checkpoint, progress=progress))
        return data, {
            "width": target[0],
            "height": target[1],
            "fps": GIF_FPS,
            "frames": count,
            "duration_seconds": round(count / GIF_FPS, 3),
        }
    data, codec = motion.encode_mp4(
        frames(built, total, fps=FPS, checkpoint=checkpoint, progress=progress),
        size=size,
        audio=assets.audio,
        audio_seconds=duration,
    )
    return data, {
        "width": size[0],
        "height": size[1],
        "fps": FPS,
        "frames": total,
        "duration_seconds": round(duration, 3),
        "codec": codec,
        "has_audio": assets.audio is not None,
    }


def decode_video_frames(data: bytes, *, max_frames: int, size: tuple[int, int]) -> list[Image.Image]:
    """A background clip's first frames (≤ max_frames), scaled down to fit `size`, for looping behind captions."""
    import av  # imported on first use: PyAV and its FFmpeg libraries hold ~22 MB that an idle server does not need

    decoded: list[Image.Image] = []
    with av.open(io.BytesIO(data), mode="r") as container:
        for frame in container.decode(video=0):
            image = frame.to_image()
            image.thumbnail(size)
            decoded.append(image)
            if len(decoded) >= max_frames:
                break
    if not decoded:
        raise ValueError("the background video has no frames")
    return decoded
