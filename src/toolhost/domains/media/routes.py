"""`GET /media/<key>?exp=&sig=`: the media store behind signed, expiring URLs (CATALOG.md §1.13)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response
from starlette.routing import Route

from toolhost.domains.media import service
from toolhost.providers.media_store import valid_key


async def serve_media(request: Request) -> Response:
    """A stored file for a genuine, unexpired signature (Range supported); 403 otherwise, 404 when absent."""
    settings = request.app.state.platform.settings
    key = request.path_params["key"]
    expires = request.query_params.get("exp", "")
    given = request.query_params.get("sig", "")
    if not service.signature_valid(settings, key, expires, given):
        return PlainTextResponse("invalid or expired signature", status_code=403)
    store = service.store(settings)
    if not valid_key(key) or not store.exists(key):
        return PlainTextResponse("not found", status_code=404)
    content_type = service.type_from_name(key) or "application/octet-stream"
    headers = {"Cache-Control": "private, max-age=300", "X-Content-Type-Options": "nosniff"}
    if content_type == "text/html":
        # Compositions are served for download only, sandboxed, never as a page of toolhost's origin.
        headers["Content-Security-Policy"] = "sandbox"
        return FileResponse(
            store.path(key),
            media_type=content_type,
            headers=headers,
            filename=key.rsplit("/", 1)[-1],
            content_disposition_type="attachment",
        )
    return FileResponse(store.path(key), media_type=content_type, headers=headers)


routes = [Route("/media/{key:path}", serve_media, methods=["GET", "HEAD"])]
