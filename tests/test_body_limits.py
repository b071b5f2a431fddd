"""Every route of the app that takes a body refuses an oversized one while it streams in, before it is read whole.

Each request sends a 64 MB chunked body (no Content-Length, so only counting what arrives can stop it) and
counts how much of it the app pulled: a route reads at most its limit and a chunk or two, or nothing at all.
The table names every method that carries a body (anything but GET and HEAD; /mcp reads one on GET too) of
every route the app serves, so a new route fails here until its limit is set. (A GET answered by a file or a
stream has Starlette read the request to its end, to notice a disconnect; it discards what it reads.)
"""

from __future__ import annotations

import asyncio
import select
import socket
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import pytest
from starlette.applications import Starlette
from starlette.routing import Mount, Route

from tests.browser import LiveServer
from tests.conftest import EndlessBody, Tenant

KB = 1024
MB = 1024 * KB
SLACK = 2 * len(EndlessBody.CHUNK)  # the chunk that crossed the limit, and one the transport had in hand


@dataclass(frozen=True)
class Case:
    """One request: its route and method, whether it carries the tenant's key, and what it may read."""

    method: str
    route: str
    path: str
    limit: int
    status: int
    authenticated: bool = False
    headers: dict[str, str] = field(default_factory=dict)


MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
CASES = [
    Case("POST", "/v1/tools/{name}", "/v1/tools/save_content_plan", 16 * MB, 413, authenticated=True),
    Case("POST", "/v1/tools/{name}", "/v1/tools/save_content_plan", 0, 401),
    Case("POST", "/mcp", "/mcp", 16 * MB, 413, authenticated=True, headers=MCP_HEADERS),
    Case("GET", "/mcp", "/mcp", 16 * MB, 413, authenticated=True, headers=MCP_HEADERS),
    Case("DELETE", "/mcp", "/mcp", 16 * MB, 413, authenticated=True, headers=MCP_HEADERS),
    Case("POST", "/mcp", "/mcp", 0, 401, headers=MCP_HEADERS),
    Case("POST", "/oauth/token", "/oauth/token", 100 * KB, 413),
    Case("POST", "/v1/connectors/webhook/events", "/v1/connectors/webhook/events", 1 * MB, 413),
    Case("POST", "/app/connect/{token}", "/app/connect/{token}", 16 * KB, 413),
    Case("POST", "/app/connect/{token}", "/app/connect/not-a-link", 0, 404),
    Case("POST", "/signin", "/signin", 16 * KB, 413),
    Case("POST", "/signout", "/signout", 0, 303),  # to the sign-in page, unread: nobody is signed in
    Case("POST", "/oauth/authorize", "/oauth/authorize", 0, 303),
    Case("POST", "/oauth/register", "/oauth/register", 100 * KB, 413),
    Case("POST", "/oauth/revoke", "/oauth/revoke", 100 * KB, 413),
    *(
        Case("OPTIONS", route, route, 0, 200)
        for route in (
            "/.well-known/oauth-authorization-server",
            "/.well-known/oauth-protected-resource",
            "/.well-known/oauth-protected-resource/mcp",
        )
    ),
    # Not a CORS preflight (no Origin): the endpoint itself answers, and reads no more than its limit.
    *(Case("OPTIONS", route, route, 100 * KB, 413) for route in ("/oauth/register", "/oauth/revoke", "/oauth/token")),
]


def methods_with_a_body(app: Starlette) -> set[tuple[str, str]]:
    """Every (method, route) of the app that carries a body, and /mcp's GET, which reads one."""
    served: set[tuple[str, str]] = set()
    for route in app.routes:
        assert isinstance(route, Route | Mount)
        if isinstance(route, Route):
            served.update((method, route.path) for method in route.methods or () if method not in ("GET", "HEAD"))
    return served | {("GET", "/mcp")}


def test_every_route_and_method_that_takes_a_body_has_a_case(app: Starlette) -> None:
    covered = {(case.method, case.route) for case in CASES}
    assert methods_with_a_body(app) - covered == set(), "add a Case with the route's body limit"


@pytest.mark.parametrize("case", CASES, ids=lambda case: f"{case.method} {case.path} {case.status}")
async def test_an_oversized_chunked_body_is_refused_before_it_is_read_whole(tenant: Tenant, case: Case) -> None:
    path = case.path
    if "{token}" in path:
        started = await tenant.data("start_platform_connection", {"platform": "threads"})
        path = str(started["deep_link"]).removeprefix("http://testserver")
        assert (await tenant.client.get(path)).status_code == 200  # the page is opened, so its form is read
    headers = {**case.headers, **(tenant.headers if case.authenticated else {})}
    body = EndlessBody(megabytes=64)
    response = await tenant.client.request(case.method, path, content=body, headers=headers)
    assert response.status_code == case.status, response.text[:300]
    assert body.sent <= case.limit + SLACK, f"read {body.sent} bytes of a body limited to {case.limit}"
    if case.status == 413 and case.route != "/mcp":
        assert response.headers["connection"] == "close"


def post_chunked_until_answered(port: int, path: str, headers: dict[str, str], megabytes: int) -> tuple[bytes, int]:
    """POSTs a chunked body of `megabytes` MB in 64 KB chunks, looking for an answer before each chunk.

    Returns the answer's first bytes and how much of the body had been sent when it came.
    """
    chunk = b"x" * 65536
    frame = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
    head = "".join(f"{name}: {value}\r\n" for name, value in {"Host": f"127.0.0.1:{port}", **headers}.items())
    sent = 0
    # The timeout is a liveness bound only: a server that neither reads nor answers fails the test here.
    with socket.create_connection(("127.0.0.1", port), timeout=60) as connection:
        connection.sendall(f"POST {path} HTTP/1.1\r\n{head}Transfer-Encoding: chunked\r\n\r\n".encode())
        while sent < megabytes * 1024 * 1024:
            readable, writable, _ = select.select([connection], [connection], [], 60)
            if readable or not writable:
                break
            try:
                connection.sendall(frame)
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += len(chunk)
        return connection.recv(65536), sent


async def test_a_real_server_answers_413_to_an_endless_chunked_body_before_it_is_sent_whole(
    live_server: LiveServer, tenant: Tenant
) -> None:
    # uvicorn on a socket, as `toolhost serve` runs the app: the answer must reach a client still sending.
    port = urlsplit(live_server.url).port
    assert port is not None
    for path, headers, limit in (
        ("/v1/tools/save_content_plan", tenant.headers, 16 * MB),
        ("/oauth/token", {"Content-Type": "application/x-www-form-urlencoded"}, 100 * KB),
        ("/v1/connectors/webhook/events", {"Content-Type": "application/json"}, 1 * MB),
    ):
        answer, sent = await asyncio.to_thread(post_chunked_until_answered, port, path, headers, 256)
        assert answer.startswith(b"HTTP/1.1 413 "), (path, answer[:200])
        assert b"connection: close" in answer.lower()
        # What the client got out before the answer: the limit, plus what the socket buffers on both sides held.
        assert limit <= sent < limit + 32 * MB, (path, sent)
