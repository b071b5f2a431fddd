"""Output redaction (CATALOG.md §1.2): secrets in string values become [REDACTED:<kind>] before a result leaves."""

from __future__ import annotations

import functools
import re
from typing import Any

SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "private_key",
        re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.DOTALL),
    ),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("bearer_token", re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{16,}")),
    ("toolhost_key", re.compile(r"\bthk_(?:live|test)_[A-Za-z0-9_-]{16,}")),
    ("api_key", re.compile(r"\b(?:sk|pk)_(?:live_|test_)?[A-Za-z0-9]{16,}|\bsk-[A-Za-z0-9_-]{20,}")),
    ("github_token", re.compile(r"\bghp_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}")),
    ("slack_token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("aws_key", re.compile(r"\bAKIA[0-9A-Z]{16}\b")),
    ("google_key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
)
# One scan finds whether any secret pattern occurs at all; most strings hold none, and skip the nine subs.
ANY_SECRET = re.compile(
    "|".join(
        f"(?i:{pattern.pattern.removeprefix('(?i)')})" if pattern.flags & re.IGNORECASE else f"(?:{pattern.pattern})"
        for _, pattern in SECRET_PATTERNS
    ),
    re.DOTALL,
)
UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
# A standalone run only: digits inside a word, a UUID, a path or a URL (media keys, ids) are never a card.
CARD_CANDIDATE = re.compile(r"(?<![\w\-/.])(?:\d[ -]?){12,18}\d(?![\w\-/]|\.\w)")
# Every card candidate holds this run (13 digits, single spaces or dashes between): strings without it skip the scan.
CARD_DIGITS = re.compile(r"(?:\d[ -]?){12}\d")
ISSUER_PREFIXES = (
    "4",
    "51",
    "52",
    "53",
    "54",
    "55",
    "2221",
    "2720",
    "34",
    "37",
    "6011",
    "65",
    "35",
    "36",
    "30",
)


def _luhn(digits: str) -> bool:
    total = 0
    for index, character in enumerate(reversed(digits)):
        value = int(character)
        if index % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def _card_replacement(match: re.Match[str]) -> str:
    text = match.group()
    digits = re.sub(r"\D", "", text)
    grouped = bool(re.search(r"[ -]", text))
    if 13 <= len(digits) <= 19 and (grouped or digits.startswith(ISSUER_PREFIXES)) and _luhn(digits):
        return "[REDACTED:card_number]"
    return text


# Short strings repeat from call to call (schema descriptions, names, enum values): their answer is kept.
CACHED_TEXT_LENGTH = 256


def redact_text(text: str, *, cards: bool = True) -> str:
    """A string with every secret replaced; UUIDs and URLs' own structure are left alone."""
    if len(text) <= CACHED_TEXT_LENGTH:
        return _redact_short_text(text, cards)
    return _redact(text, cards)


@functools.lru_cache(maxsize=8192)
def _redact_short_text(text: str, cards: bool) -> str:
    return _redact(text, cards)


def _redact(text: str, cards: bool) -> str:
    if not text:
        return text
    if ANY_SECRET.search(text):
        for kind, pattern in SECRET_PATTERNS:
            text = pattern.sub(f"[REDACTED:{kind}]", text)
    if cards and CARD_DIGITS.search(text) and not UUID.fullmatch(text):
        text = CARD_CANDIDATE.sub(_card_replacement, text)
    return text


def _is_id_key(key: str) -> bool:
    return key == "id" or key.endswith("_id") or key.endswith("Id")


def redact(value: Any, *, key: str = "") -> Any:
    """A JSON value with every string redacted (card numbers never in `id`/`*_id` values)."""
    if isinstance(value, str):
        return redact_text(value, cards=not _is_id_key(key))
    if isinstance(value, dict):
        return {name: redact(item, key=str(name)) for name, item in value.items()}
    if isinstance(value, list):
        return [redact(item, key=key) for item in value]
    return value
