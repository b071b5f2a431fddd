"""The builtin voice model: espeak-ng run as a subprocess, writing WAV (CATALOG.md §1.11, generate_voiceover).

The model is configured only when the binary is installed; without it, the tools that need a voice answer
`validation_error` naming the binary and how to install it, before any job or debit.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import shutil
import wave
from typing import TYPE_CHECKING

from toolhost.platform.results import ValidationFailed

if TYPE_CHECKING:
    from toolhost.config import Settings

BUILTIN = "builtin"
BASE_WORDS_PER_MINUTE = 175
# espeak-ng's own bounds on the speaking rate.
MIN_RATE, MAX_RATE = 80, 450
INSTALL_HINT = "install espeak-ng (Debian/Ubuntu: `apt-get install espeak-ng`; macOS: `brew install espeak-ng`)"


class SynthesisFailed(Exception):
    """espeak-ng ran but produced no usable audio (the job fails as generation_failed and is refunded)."""


def binary(settings: Settings) -> str | None:
    """The espeak-ng executable's path, or None when it is not installed."""
    return shutil.which(settings.voice.espeak_binary)


def require_voice(settings: Settings, *, path: str) -> str:
    """The builtin voice's executable, or the catalogue's validation_error naming the missing binary."""
    found = binary(settings)
    if found is None:
        raise ValidationFailed(
            f"no voice model is configured: the builtin voice needs the espeak-ng binary "
            f"({settings.voice.espeak_binary!r} was not found); {INSTALL_HINT}",
            recover_with=f"{INSTALL_HINT}, or ask the operator to configure a TTS provider",
            field_errors=[{"path": path, "message": "espeak-ng is not installed"}],
            missing_binary="espeak-ng",
        )
    return found


def espeak_voice(settings: Settings, voice: str) -> str:
    """The espeak-ng voice a catalogue voice name maps to (settings `voice.voices`)."""
    return settings.voice.voices.get(voice) or settings.voice.voices["rachel"]


def rate(speed: float) -> int:
    """espeak-ng's `-s` words per minute: 175 × speed, within what espeak-ng accepts."""
    return max(MIN_RATE, min(MAX_RATE, round(BASE_WORDS_PER_MINUTE * speed)))


async def synthesize(settings: Settings, text: str, *, voice: str, speed: float) -> bytes:
    """WAV bytes of `text` spoken by espeak-ng; the text goes through stdin, never the command line."""
    executable = require_voice(settings, path="voice")
    process = await asyncio.create_subprocess_exec(
        executable,
        "-v",
        espeak_voice(settings, voice),
        "-s",
        str(rate(speed)),
        "--stdin",
        "--stdout",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        async with asyncio.timeout(settings.voice.synthesis_timeout):
            audio, errors = await process.communicate(text.encode())
    except BaseException:
        # Timed out or cancelled: the subprocess must not outlive its job.
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
        raise
    if process.returncode != 0 or not audio.startswith(b"RIFF"):
        detail = errors.decode(errors="replace").strip()[:300]
        raise SynthesisFailed(f"espeak-ng exited with {process.returncode}: {detail or 'no audio'}")
    return fix_header(audio)


def fix_header(audio: bytes) -> bytes:
    """espeak-ng writing to a pipe cannot seek back, so its RIFF sizes are placeholders; rewrite them."""
    with wave.open(io.BytesIO(audio)) as source:
        parameters = source.getparams()
        # The frame count in the header is bogus: read the data chunk to the end.
        frames = source.readframes(2**31)
    output = io.BytesIO()
    with wave.open(output, "wb") as target:
        target.setnchannels(parameters.nchannels)
        target.setsampwidth(parameters.sampwidth)
        target.setframerate(parameters.framerate)
        target.writeframes(frames)
    return output.getvalue()


def duration_seconds(audio: bytes) -> float:
    """The length of a WAV file."""
    with wave.open(io.BytesIO(audio)) as source:
        return float(source.getnframes()) / float(source.getframerate())
