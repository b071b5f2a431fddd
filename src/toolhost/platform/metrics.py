"""GET /metrics: this process's call metrics and the gauges read from the database, in Prometheus text format.

Only a scraper holding `metrics.token` (TOOLHOST_METRICS__TOKEN) reads it, as `Authorization: Bearer <token>`;
with no token set it is refused to everyone. The counts say which tools are used and how they fail, which is
nobody's business but the operator's, and a loopback rule would open it to every caller behind a reverse proxy
on the same host.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime

from prometheus_client import CONTENT_TYPE_LATEST
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from toolhost.platform.auth import presented_credential
from toolhost.platform.observability import GaugeReading
from toolhost.platform.rest import error_response
from toolhost.platform.results import PermissionDenied, Unauthenticated
from toolhost.platform.runtime import Platform

# Reads gauges at scrape time from one short read-only session; `now` is the scrape's time.
GaugeSource = Callable[[AsyncSession, datetime], Awaitable[list[GaugeReading]]]


def metrics_routes(platform: Platform, gauges: Sequence[GaugeSource]) -> list[BaseRoute]:
    """GET /metrics over the platform's call observer and the composition root's gauge sources."""
    token = platform.settings.metrics.token

    async def metrics(request: Request) -> Response:
        if token is None:
            return error_response(
                PermissionDenied(
                    "/metrics is off: set TOOLHOST_METRICS__TOKEN and scrape with Authorization: Bearer <token>"
                )
            )
        presented = presented_credential(request.headers.get("authorization"), None) or ""
        if not hmac.compare_digest(presented.encode(), token.get_secret_value().encode()):
            return error_response(Unauthenticated("send the metrics token as Authorization: Bearer <token>"))
        now = datetime.now(UTC)
        readings: list[GaugeReading] = []
        async with platform.session_factory() as session:
            for source in gauges:
                readings += await source(session, now)
        return Response(platform.observer.exposition(readings), media_type=CONTENT_TYPE_LATEST)

    return [Route("/metrics", metrics, methods=["GET"])]
