"""The documentation pages search results link to: /docs/tools and /docs/guides/<id>."""

from __future__ import annotations

import html

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from toolhost.domains.discovery import documents
from toolhost.platform.registry import registry

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>body{{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}}
pre{{white-space:pre-wrap;background:#f5f5f5;padding:1rem}}</style></head>
<body><p><a href="/docs">API reference</a></p>{body}</body></html>"""


def _page(title: str, body: str) -> HTMLResponse:
    return HTMLResponse(PAGE.format(title=html.escape(title), body=body))


async def tools_page(request: Request) -> Response:
    sections = documents.catalogue_sections()
    parts = ["<h1>Tools</h1>"]
    for spec in sorted(registry.all(), key=lambda item: (item.module, item.name)):
        text = sections.get(spec.name, spec.description)
        parts.append(f'<h2 id="{spec.name}">{html.escape(spec.title)}</h2><pre>{html.escape(text)}</pre>')
    return _page("toolhost tools", "".join(parts))


async def guide_page(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in documents.GUIDES:
        return HTMLResponse("Document not found", status_code=404)
    text = (documents.DOCS / "guides" / f"{name}.md").read_text()
    return _page(text.splitlines()[0].lstrip("# "), f"<pre>{html.escape(text)}</pre>")


routes = [
    Route("/docs/tools", tools_page, methods=["GET"]),
    Route("/docs/guides/{name}", guide_page, methods=["GET"]),
]
