"""How fast the built-in compositions render: frames per second of Pillow drawing + H.264 encoding.

Run: `.venv/bin/python bench/video_render.py [--seconds 4]`. Renders each composition family's sample
props at its catalogue size, cut to the first N seconds (the per-frame cost does not depend on length),
and prints frames/s and the real-time factor (output seconds per wall-clock second) for MP4 and GIF.
"""

from __future__ import annotations

import argparse
import time

from toolhost.domains.video import motion, render, scenes
from toolhost.domains.video.compositions import COMPOSITIONS, FPS
from toolhost.providers import graphics

CASES = ("CaptionedClip", "StoryboardVideo-Horizontal", "TwitterAd", "DataVizDashboard", "ReviewsTestimonial")


def main() -> None:
    """Prints one line per composition and format."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=4.0)
    arguments = parser.parse_args()
    look = graphics.brand_look(None)
    for composition_id in CASES:
        composition = COMPOSITIONS[composition_id]
        size = (composition.width, composition.height)
        duration = composition.duration_in_frames(composition.sample) / FPS
        built = scenes.build(composition, composition.sample, size, look, scenes.Assets(), duration)
        count = round(arguments.seconds * FPS)
        started = time.perf_counter()
        motion.encode_mp4(render.frames(built, count, fps=FPS), size=size)
        elapsed = time.perf_counter() - started
        speed = f"{count / elapsed:6.1f} frames/s  {arguments.seconds / elapsed:5.2f}x real time"
        print(f"{composition_id:28} mp4 {size[0]}x{size[1]}  {speed}")
        gif_count = round(arguments.seconds * render.GIF_FPS)
        started = time.perf_counter()
        render.encode_gif(render.frames(built, gif_count, fps=render.GIF_FPS, size=render.gif_size(size)))
        elapsed = time.perf_counter() - started
        speed = f"{gif_count / elapsed:6.1f} frames/s  {arguments.seconds / elapsed:5.2f}x real time"
        print(f"{composition_id:28} gif {render.GIF_WIDTH}px wide    {speed}")


if __name__ == "__main__":
    main()
