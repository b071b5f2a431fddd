"""Server-rendered pages (sign-in, consent, connect): autoescaped Jinja2 templates in one small layout.

Each response gets its own nonce for the layout's inline stylesheet, and a policy that allows nothing else:
no script, no outside origin, forms posting only to this site (and, for the consent page, to the client it
redirects to).
"""

from __future__ import annotations

import functools
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

from starlette.datastructures import FormData, UploadFile
from starlette.requests import Request
from starlette.responses import HTMLResponse

from toolhost.platform.rest import read_body
from toolhost.platform.websession import Person

if TYPE_CHECKING:
    from jinja2 import Environment

TEMPLATES_DIRECTORY = Path(__file__).parent / "templates"
STYLESHEET = (TEMPLATES_DIRECTORY / "toolhost.css").read_text(encoding="utf-8")
FORM_BODY_LIMIT = 16 * 1024


@functools.cache
def _templates() -> Environment:
    # Jinja2 is imported by the first page rendered: ~10 MB of RSS an API-only server never needs.
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    return Environment(
        loader=FileSystemLoader(TEMPLATES_DIRECTORY), autoescape=select_autoescape(["html"]), auto_reload=False
    )


def render(
    template: str,
    *,
    title: str,
    person: Person | None = None,
    status: int = 200,
    message: str | None = None,
    message_is_error: bool = False,
    form_targets: tuple[str, ...] = (),
    **context: Any,
) -> HTMLResponse:
    """A page of `template` (extending layout.html); `form_targets` are origins its forms may end up at."""
    nonce = secrets.token_urlsafe(16)
    body = (
        _templates()
        .get_template(template)
        .render(
            title=title,
            person=person,
            message=message,
            message_is_error=message_is_error,
            nonce=nonce,
            stylesheet=STYLESHEET,
            **context,
        )
    )
    form_action = " ".join(("'self'", *form_targets))
    return HTMLResponse(
        body,
        status_code=status,
        headers={
            "Cache-Control": "no-store",
            "X-Frame-Options": "DENY",
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer",
            "Content-Security-Policy": (
                f"default-src 'none'; style-src 'nonce-{nonce}'; img-src 'self'; base-uri 'none'; "
                f"form-action {form_action}; frame-ancestors 'none'"
            ),
        },
    )


async def read_form(request: Request) -> FormData:
    """An urlencoded form body of at most 16 KB (`ValidationFailed` past that, before the rest is read)."""
    body = await read_body(request, FORM_BODY_LIMIT)
    fields: list[tuple[str, str | UploadFile]] = [*parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)]
    return FormData(fields)


def field(form: FormData, name: str) -> str:
    """A form field's text ('' when absent)."""
    value = form.get(name)
    return value if isinstance(value, str) else ""
