"""`GET /media/<key>?exp=&kid=&sig=`: the media store behind signed, expiring URLs (CATALOG.md §1.13)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from toolhost.domains.media import files, storage
from toolhost.providers.media_store import RangeNotSatisfiable, S3MediaStore, valid_key


async def serve_media(request: Request) -> Response:
    """A stored file for a genuine, unexpired signature (Range supported); 403 otherwise, 404 when absent."""
    settings = request.app.state.platform.settings
    key = request.path_params["key"]
    expires = request.query_params.get("exp", "")
    given = request.query_params.get("sig", "")
    kid = request.query_params.get("kid", "")
    if not storage.signature_valid(settings, key, expires, kid, given):
        return PlainTextResponse("invalid or expired signature", status_code=403)
    store = storage.store(settings)
    if not valid_key(key):
        return PlainTextResponse("not found", status_code=404)
    content_type = files.type_from_name(key) or "application/octet-stream"
    headers = {"Cache-Control": "private, max-age=300", "X-Content-Type-Options": "nosniff"}
    attachment = content_type == "text/html"
    if attachment:
        # Compositions are served for download only, sandboxed, never as a page of toolhost's origin.
        headers["Content-Security-Policy"] = "sandbox"
        headers["Content-Disposition"] = f'attachment; filename="{key.rsplit("/", 1)[-1]}"'
    if isinstance(store, S3MediaStore):
        return await _from_bucket(request, store, key, content_type, headers)
    if not await store.exists(key):
        return PlainTextResponse("not found", status_code=404)
    return FileResponse(store.path(key), media_type=content_type, headers=headers)


async def _from_bucket(
    request: Request, store: S3MediaStore, key: str, content_type: str, headers: dict[str, str]
) -> Response:
    """Relays the object (or the one byte range asked) from the bucket, streamed."""
    try:
        stored = await store.open(key, request.headers.get("range"))
    except RangeNotSatisfiable:
        return PlainTextResponse("range not satisfiable", status_code=416)
    if stored is None:
        return PlainTextResponse("not found", status_code=404)
    headers = {**headers, "Accept-Ranges": "bytes", "Content-Length": str(stored.length)}
    status = 200
    if stored.content_range:
        headers["Content-Range"] = stored.content_range
        status = 206
    if request.method == "HEAD":
        await stored.chunks.aclose()
        return Response(status_code=status, media_type=content_type, headers=headers)
    return StreamingResponse(stored.chunks, status_code=status, media_type=content_type, headers=headers)


routes = [Route("/media/{key:path}", serve_media, methods=["GET", "HEAD"])]
