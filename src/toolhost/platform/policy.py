"""The input policy (CATALOG.md §1.8): invisible characters, instruction phrases and excessive nesting."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolhost.platform.results import ValidationFailed

if TYPE_CHECKING:
    from toolhost.platform.registry import ToolSpec

EXEMPT_FIELDS = frozenset({"file_data", "composition_html", "input_props", "props"})
MAX_DEPTH = 64

INVISIBLE = re.compile("[\u200b\u200c\u200d\u2060\ufeff\U000e0020-\U000e007f]")
JOINERS = frozenset("\u200c\u200d")
TAG_CHARACTERS = re.compile("[\U000e0020-\U000e007f]")
BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")
HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
UNSTORABLE = re.compile("[\x00\ud800-\udfff]")

INSTRUCTION_PATTERNS = (
    re.compile(
        r"\b(ignore|disregard|forget)\b[^.\n]{0,60}?\b(previous|prior|above|earlier|preceding)\b[^.\n]{0,40}?"
        r"\b(instructions?|prompts?|context|rules|directions)\b",
        re.IGNORECASE,
    ),
    re.compile(r"\byou\s+are\s+now\s+(a|an)\b", re.IGNORECASE),
    re.compile(r"(^|\n|\s)system:\s", re.IGNORECASE),
    re.compile(r"<\|(im_start|im_end|system|user|assistant|endoftext)\|>|\[/?INST\]|<<\/?SYS>>", re.IGNORECASE),
)
FORGET_IDIOM = re.compile(r"\bforget everything you know about((?:\s+\S+){1,4})\s*[.!?]?\s*$", re.IGNORECASE)
FORGET_IDIOM_FORBIDDEN = re.compile(r"instruction|system|secret|token|password", re.IGNORECASE)

# Cyrillic and Greek letters that look like Latin ones, so "іgnore рrevious" reads as what it spells.
LOOKALIKES = str.maketrans(
    {
        "а": "a",
        "е": "e",
        "о": "o",
        "р": "p",
        "с": "c",
        "у": "y",
        "х": "x",
        "і": "i",
        "ј": "j",
        "ѕ": "s",
        "ԁ": "d",
        "һ": "h",
        "ӏ": "l",
        "ɡ": "g",
        "А": "A",
        "В": "B",
        "Е": "E",
        "К": "K",
        "М": "M",
        "Н": "H",
        "О": "O",
        "Р": "P",
        "С": "C",
        "Т": "T",
        "Х": "X",
        "У": "Y",
        "І": "I",
        "Ј": "J",
        "Ѕ": "S",
        "α": "a",
        "ο": "o",
        "ρ": "p",
        "ν": "v",
        "τ": "t",
        "ι": "i",
        "κ": "k",
        "υ": "u",
        "ε": "e",
        "Α": "A",
        "Β": "B",
        "Ε": "E",
        "Ζ": "Z",
        "Η": "H",
        "Ι": "I",
        "Κ": "K",
        "Μ": "M",
        "Ν": "N",
        "Ο": "O",
        "Ρ": "P",
        "Τ": "T",
        "Υ": "Y",
        "Χ": "X",
    }
)


@dataclass(frozen=True, slots=True)
class Finding:
    """One blocked pattern at one argument path."""

    path: str
    pattern: str

    def as_dict(self) -> dict[str, str]:
        return {"path": self.path, "pattern": self.pattern}


def _is_letter_or_emoji(character: str) -> bool:
    category = unicodedata.category(character)
    return category.startswith("L") or category in {"So", "Sk", "Mn", "Mc"} or ord(character) >= 0x1F000


def _has_blocked_invisible(text: str) -> bool:
    for match in INVISIBLE.finditer(text):
        position = match.start()
        character = match.group()
        if character in JOINERS:
            before = text[position - 1] if position > 0 else ""
            after = text[position + 1] if position + 1 < len(text) else ""
            # A joiner between two letters or emoji shapes a script or an emoji sequence.
            if before and after and _is_letter_or_emoji(before) and _is_letter_or_emoji(after) and after not in JOINERS:
                continue
            return True
        if TAG_CHARACTERS.match(character) and _inside_flag_tag_sequence(text, position):
            continue
        return True
    return False


def _inside_flag_tag_sequence(text: str, position: int) -> bool:
    start = position
    while start > 0 and TAG_CHARACTERS.match(text[start - 1]):
        start -= 1
    return start > 0 and text[start - 1] == "\U0001f3f4"


def _readings(text: str) -> list[str]:
    normalized = BIDI_CONTROLS.sub("", unicodedata.normalize("NFKC", text))
    normalized = HTML_COMMENT.sub("", normalized)
    return [text, normalized, normalized.translate(LOOKALIKES)]


def _has_instruction(text: str) -> bool:
    for reading in _readings(text):
        for pattern in INSTRUCTION_PATTERNS:
            for match in pattern.finditer(reading):
                if pattern is INSTRUCTION_PATTERNS[0] and _is_forget_idiom(reading, match.start()):
                    continue
                return True
    return False


def _is_forget_idiom(text: str, start: int) -> bool:
    idiom = FORGET_IDIOM.search(text, start)
    return idiom is not None and idiom.start() == start and not FORGET_IDIOM_FORBIDDEN.search(idiom.group(1))


def _check_string(text: str, path: str, findings: list[Finding]) -> None:
    if _has_blocked_invisible(text):
        findings.append(Finding(path, "zero_width_char"))
    if _has_instruction(text):
        findings.append(Finding(path, "instruction_phrase"))


def argument_strings(
    value: Any, path: str = "", *, depth: int = 1, max_depth: int | None = None
) -> Iterator[tuple[str, str | None]]:
    """Every string in JSON arguments, object keys included, with its path (`caption`, `items[0].text`); past
    `max_depth` levels, one `(path, None)` instead of what lies below."""
    if max_depth is not None and depth > max_depth:
        yield path or "$", None
        return
    if isinstance(value, str):
        yield path or "$", value
    elif isinstance(value, dict):
        for key, item in value.items():
            child = f"{path}.{key}" if path else str(key)
            yield child, str(key)
            yield from argument_strings(item, child, depth=depth + 1, max_depth=max_depth)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from argument_strings(item, f"{path}[{index}]", depth=depth + 1, max_depth=max_depth)


def refuse_unstorable_text(value: Any) -> None:
    """Raises validation_error naming the first string (object keys included) that no database can store.

    PostgreSQL text cannot hold U+0000, and no encoder writes a lone surrogate (U+D800-U+DFFF, which a JSON
    `\\u` escape can spell though it is no character); both are refused on every database, so a body means
    the same on each, before anything is written.
    """
    for path, text in argument_strings(value):
        found = UNSTORABLE.search(text) if text is not None else None
        if found is None:
            continue
        if found.group(0) == "\x00":
            raise ValidationFailed(
                f"{path} contains the NUL character (U+0000), which text cannot hold",
                field_errors=[{"path": path, "message": "remove the NUL character (U+0000)"}],
            )
        code = f"U+{ord(found.group(0)):04X}"
        raise ValidationFailed(
            f"{path} contains an unpaired surrogate ({code}), which is not a character",
            field_errors=[{"path": path, "message": f"remove the unpaired surrogate ({code}); send valid UTF-8"}],
        )


def scan(spec: ToolSpec, arguments: dict[str, Any]) -> list[Finding]:
    """Every blocked pattern in a tool's arguments; exempt fields (everyone's and the tool's own) are passed over."""
    exempt = EXEMPT_FIELDS | spec.policy_exempt_fields
    findings: list[Finding] = []
    for key, value in arguments.items():
        if key in exempt:
            continue
        _check_string(str(key), key, findings)
        for path, text in argument_strings(value, key, max_depth=MAX_DEPTH):
            if text is None:
                findings.append(Finding(path, "excessive_depth"))
            else:
                _check_string(text, path, findings)
    return findings
