"""The documentation pages: the API reference (/docs), the tool catalogue (/docs/tools) and the guides.

The API reference is Swagger UI 5 (it reads OpenAPI 3.1) from the swagger-ui-py package, served from this
process, so it works offline. The catalogue and the guides are the shipped markdown rendered to HTML with raw
HTML turned off: whatever a document holds is shown as text, never run. Every page shares one stylesheet and
a content security policy that allows scripts from this origin only.
"""

from __future__ import annotations

import functools
import html
import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from toolhost.config import Settings
from toolhost.domains.discovery import documents
from toolhost.platform.websession import platform_of

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

ASSETS = Path(__file__).resolve().parent / "static"
# Swagger UI's files are served from the installed package; locating it does not import it (~15 MB of RSS that an
# idle server would carry for a page few open), and the markdown renderer is built on the first page that needs it.
_SWAGGER_PACKAGE = importlib.util.find_spec("swagger_ui")
assert _SWAGGER_PACKAGE is not None and _SWAGGER_PACKAGE.submodule_search_locations is not None
SWAGGER_UI = Path(next(iter(_SWAGGER_PACKAGE.submodule_search_locations))) / "static"


@functools.cache
def _markdown() -> MarkdownIt:
    from markdown_it import MarkdownIt

    # CommonMark with tables (the catalogue's error table); "html": False shows raw HTML in a document as text.
    return MarkdownIt("commonmark", {"html": False}).enable("table")


PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title><link rel="icon" href="data:,">{head}<link rel="stylesheet" href="/docs/assets/docs.css"></head>
<body><nav class="docs" aria-label="Documentation">{navigation}</nav>{body}</body></html>"""

API_REFERENCE_HEAD = """
<link rel="stylesheet" href="/docs/swagger-ui/swagger-ui.css">
<script src="/docs/swagger-ui/swagger-ui-bundle.js" defer></script>
<script src="/docs/assets/api-reference.js" defer></script>"""


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _security_headers(settings: Settings) -> dict[str, str]:
    # Swagger UI's "Try it out" calls the servers of the OpenAPI document, which may be another origin.
    servers = {_origin(settings.api_root)}
    if settings.public_api_url:
        servers.add(_origin(settings.public_api_url))
    return {
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Content-Security-Policy": (
            "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
            f"connect-src 'self' {' '.join(sorted(servers))}; base-uri 'none'; form-action 'none'; "
            "frame-ancestors 'none'"
        ),
    }


def _navigation(current: str) -> str:
    links = [("/docs", "API reference"), ("/docs/tools", "Tools")]
    links += [(f"/docs/guides/{name}", title) for name, title in documents.guide_titles().items()]
    current_marker = ' aria-current="page"'
    return "".join(
        f'<a href="{path}"{current_marker if path == current else ""}>{html.escape(label)}</a>' for path, label in links
    )


def _page(request: Request, title: str, body: str, *, head: str = "", status_code: int = 200) -> HTMLResponse:
    page = PAGE.format(title=html.escape(title), head=head, navigation=_navigation(request.url.path), body=body)
    return HTMLResponse(page, status_code, headers=_security_headers(request.app.state.platform.settings))


async def api_reference(request: Request) -> Response:
    """The OpenAPI document in Swagger UI."""
    return _page(request, "toolhost API reference", '<div id="swagger-ui"></div>', head=API_REFERENCE_HEAD)


async def tools_page(request: Request) -> Response:
    """Every registered tool's catalogue section, by module, each anchored at its name."""
    sections = documents.catalogue_sections()
    parts = ['<main class="docs"><h1>Tools</h1>']
    module = None
    for spec in sorted(platform_of(request).registry.all(), key=lambda item: (item.module, item.name)):
        if spec.module != module:
            module = spec.module
            parts.append(f"<h2>{html.escape(module)}</h2>")
        text = sections.get(spec.name)
        # A catalogue heading (`#### name — scope · credits · ...`) reads as the line under the tool's title.
        body = _markdown().render(text.removeprefix("#### ")) if text else f"<p>{html.escape(spec.description)}</p>"
        parts.append(
            f'<section class="tool" id="{html.escape(spec.name)}"><h3>{html.escape(spec.title)}</h3>{body}</section>'
        )
    parts.append("</main>")
    return _page(request, "toolhost tools", "".join(parts))


async def guide_page(request: Request) -> Response:
    """One shipped guide."""
    name = request.path_params["name"]
    if name not in documents.GUIDES:
        return _page(request, "Not found", '<main class="docs"><h1>Document not found</h1></main>', status_code=404)
    text = documents.guide_text(name)
    return _page(request, documents.guide_titles()[name], f'<main class="docs">{_markdown().render(text)}</main>')


routes: list[BaseRoute] = [
    Route("/docs", api_reference, methods=["GET"]),
    Route("/docs/tools", tools_page, methods=["GET"]),
    Route("/docs/guides/{name}", guide_page, methods=["GET"]),
    Mount("/docs/assets", StaticFiles(directory=ASSETS), name="docs-assets"),
    Mount("/docs/swagger-ui", StaticFiles(directory=SWAGGER_UI), name="docs-swagger-ui"),
]
