"""What a platform's media rules need to know of a file: its pixel size, its length and whether it moves.

Measured once, from the bytes, when the media is stored (upload, rehost, a job's output), so scheduling checks
a post's media against the platform table without reading the files again.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from PIL import Image, UnidentifiedImageError


@dataclass(frozen=True, slots=True)
class MediaFacts:
    """A file's measurements; a value the file does not reveal (a damaged video's length) is None."""

    width: int | None = None
    height: int | None = None
    duration_seconds: float | None = None
    # An animated GIF counts as a GIF on the platforms that tell it from a still image; a still GIF is an image.
    animated: bool = False


def measure(data: bytes, content_type: str) -> MediaFacts:
    """The facts of an image (Pillow reads the header only) or a video (PyAV reads the container)."""
    if content_type.startswith("image/"):
        return _image(data)
    if content_type.startswith("video/"):
        return _video(data)
    return MediaFacts()


def _image(data: bytes) -> MediaFacts:
    try:
        with Image.open(io.BytesIO(data)) as image:
            return MediaFacts(
                width=image.width, height=image.height, animated=bool(getattr(image, "is_animated", False))
            )
    except (UnidentifiedImageError, OSError, ValueError):
        return MediaFacts()


def _video(data: bytes) -> MediaFacts:
    import av  # imported on first use: PyAV and its FFmpeg libraries hold ~22 MB that an idle server does not need

    try:
        with av.open(io.BytesIO(data), mode="r") as container:
            streams = container.streams.video
            if not streams:
                return MediaFacts()
            stream = streams[0]
            duration = None
            if stream.duration is not None and stream.time_base is not None:
                duration = float(stream.duration * stream.time_base)
            elif container.duration is not None:
                duration = container.duration / av.time_base
            return MediaFacts(
                width=stream.codec_context.width or None,
                height=stream.codec_context.height or None,
                duration_seconds=duration,
                animated=True,
            )
    except (av.FFmpegError, OSError, ValueError):
        return MediaFacts()
