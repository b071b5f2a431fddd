"""What a file is: the allowed media types, read from the bytes' signature, a declared type or a file name,
and the strict base64 an upload arrives in."""

from __future__ import annotations

import base64
import binascii
import re

from toolhost.platform.results import ValidationFailed

EXTENSIONS = {
    "image/jpeg": "jpg",
    "image/png": "png",
    "image/gif": "gif",
    "image/webp": "webp",
    "video/mp4": "mp4",
    "video/webm": "webm",
    "video/quicktime": "mov",
    "audio/mpeg": "mp3",
    "audio/wav": "wav",
    "text/html": "html",
}
TYPES_BY_EXTENSION = {
    "png": "image/png",
    "jpg": "image/jpeg",
    "jpeg": "image/jpeg",
    "gif": "image/gif",
    "webp": "image/webp",
    "mp4": "video/mp4",
    "mov": "video/quicktime",
    "webm": "video/webm",
    "mp3": "audio/mpeg",
    "wav": "audio/wav",
    "html": "text/html",
    "htm": "text/html",
}
TYPE_ALIASES = {
    "image/jpg": "image/jpeg",
    "audio/x-wav": "audio/wav",
    "audio/wave": "audio/wav",
    "audio/mp3": "audio/mpeg",
}
BASE64_ALPHABET = re.compile(r"^[A-Za-z0-9+/]*={0,2}$")
DATA_URL_PREFIX = re.compile(r"^data:([\w.+-]+/[\w.+-]+)?(;[\w-]+=[\w-]+)*;base64,", re.IGNORECASE)


def sniff(data: bytes) -> str | None:
    """The media type the bytes' signature shows (only the allowed types), or None."""
    head = data[:64]
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return "audio/wav"
    if head[4:8] == b"ftyp":
        return "video/quicktime" if head[8:12] == b"qt  " else "video/mp4"
    if head[:4] == b"\x1a\x45\xdf\xa3":
        return "video/webm"
    if head[:3] == b"ID3" or (len(head) > 1 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0):
        return "audio/mpeg"
    text = data[:1024].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if text.startswith((b"<!doctype html", b"<html", b"<!--", b"<head", b"<body")) or b"<html" in text:
        return "text/html"
    return None


def normalize_type(content_type: str | None) -> str | None:
    """A declared type lower-cased, without parameters, with common aliases mapped."""
    if not content_type:
        return None
    value = content_type.split(";", 1)[0].strip().lower()
    return TYPE_ALIASES.get(value, value)


def type_from_name(name: str | None) -> str | None:
    """The type a file name's extension means."""
    if not name or "." not in name:
        return None
    return TYPES_BY_EXTENSION.get(name.rsplit(".", 1)[1].lower())


def decode_file_data(file_data: str, *, max_bytes: int) -> tuple[bytes, str | None]:
    """Decodes strict base64 (optionally a data: URL); returns the bytes and the data URL's type."""
    declared = None
    match = DATA_URL_PREFIX.match(file_data)
    if match:
        declared = match.group(1)
        file_data = file_data[match.end() :]
    compact = "".join(file_data.split())
    if not compact or not BASE64_ALPHABET.match(compact) or len(compact) % 4:
        raise ValidationFailed(
            "file_data is not base64 (alphabet A-Z a-z 0-9 + / =)",
            field_errors=[{"path": "file_data", "message": "not standard base64"}],
        )
    if len(compact) // 4 * 3 - compact.count("=") > max_bytes:
        raise ValidationFailed(
            f"file_data is larger than {max_bytes // (1024 * 1024)} MB decoded",
            field_errors=[{"path": "file_data", "message": "too large"}],
        )
    try:
        return base64.b64decode(compact, validate=True), declared
    except binascii.Error as error:
        raise ValidationFailed(
            "file_data is not valid base64", field_errors=[{"path": "file_data", "message": "not base64"}]
        ) from error


def check_type(data: bytes, declared: str | None) -> str:
    """The declared type when allowed and matched by the bytes; otherwise validation_error."""
    actual = sniff(data)
    if declared is None:
        raise ValidationFailed(
            "the media type is unknown: give content_type or a file_name with a known extension",
            field_errors=[{"path": "content_type", "message": "required"}],
        )
    if declared not in EXTENSIONS:
        raise ValidationFailed(
            f"media type {declared} is not allowed",
            allowed=sorted(EXTENSIONS),
            field_errors=[{"path": "content_type", "message": "type not allowed"}],
        )
    if actual != declared:
        raise ValidationFailed(
            f"the bytes are {actual or 'not a recognised media type'}, not the declared {declared}",
            field_errors=[{"path": "content_type", "message": "does not match the file's signature"}],
        )
    return declared
