"""toolhost's shipped documentation as a searchable corpus: the guides and one document per tool."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolhost.platform.registry import Registry
from toolhost.platform.results import NotFound

DOCS = Path(__file__).resolve().parents[2] / "docs"
GUIDES = ("overview", "quickstart", "authentication", "connectors", "self-hosting", "privacy-security")
RESULT_LIMIT = 10
TOKEN = re.compile(r"[a-z0-9_:\-]+")


@dataclass(frozen=True, slots=True)
class Document:
    """One searchable document."""

    id: str
    title: str
    text: str
    url: str
    metadata: dict[str, Any] = field(default_factory=dict)

    def score(self, tokens: list[str]) -> int:
        """The catalogue's ranking: exact id 12, id contains 8, title 5, text 2, metadata 1, per token."""
        identifier, title, text = self.id.lower(), self.title.lower(), self.text.lower()
        metadata = " ".join(str(value).lower() for value in self.metadata.values())
        total = 0
        for token in tokens:
            total += 12 if token == identifier else 8 if token in identifier else 0
            total += 5 if token in title else 0
            total += 2 if token in text else 0
            total += 1 if token in metadata else 0
        return total


@functools.cache
def catalogue_sections() -> dict[str, str]:
    """Each tool's section of the shipped catalogue, by tool name."""
    catalogue = (DOCS / "catalog.md").read_text()
    sections: dict[str, str] = {}
    for match in re.finditer(r"^#### ([a-z_]+) — .*?(?=^#### |^## |\Z)", catalogue, re.MULTILINE | re.DOTALL):
        sections[match.group(1)] = match.group(0).strip()
    for match in re.finditer(r"^- \*\*([a-z_]+)\*\* .*?(?=^- \*\*|^#|^\s*$)", catalogue, re.MULTILINE | re.DOTALL):
        sections.setdefault(match.group(1), match.group(0).strip())
    return sections


@functools.cache
def guide_text(name: str) -> str:
    """The markdown of one shipped guide (a name of GUIDES)."""
    return (DOCS / "guides" / f"{name}.md").read_text()


@functools.cache
def guide_titles() -> dict[str, str]:
    """Each guide's title (its first heading), by name, in GUIDES order."""
    return {name: guide_text(name).splitlines()[0].lstrip("# ").strip() for name in GUIDES}


def corpus(registry: Registry, root: str) -> list[Document]:
    """The guides, then one document per registered tool."""
    documents = []
    for name, title in guide_titles().items():
        text = guide_text(name)
        documents.append(
            Document(
                id=name,
                title=title,
                text=text,
                url=f"{root}/docs/guides/{name}",
                metadata={"source": "guide", "category": "guide"},
            )
        )
    sections = catalogue_sections()
    for spec in registry.all():
        documents.append(
            Document(
                id=f"tool:{spec.name}",
                title=spec.title,
                text=sections.get(spec.name, spec.description),
                url=f"{root}/docs/tools#{spec.name}",
                metadata={"source": "tool-catalog", "category": "tool", "module": spec.module, "scope": spec.scope},
            )
        )
    return documents


def search(documents: list[Document], query: str) -> list[Document]:
    """The best ten documents for a query; an empty query gives the first ten."""
    tokens = TOKEN.findall(query.lower())
    if not tokens:
        return documents[:RESULT_LIMIT]
    scored = [(document.score(tokens), document) for document in documents]
    ranked = sorted((item for item in scored if item[0] > 0), key=lambda item: (-item[0], item[1].title))
    return [document for _, document in ranked[:RESULT_LIMIT]]


def fetch(documents: list[Document], identifier: str) -> Document:
    """One document by id, or not_found."""
    for document in documents:
        if document.id == identifier:
            return document
    raise NotFound("Document not found", recover_with="call search to find document ids")
