"""The ASGI app factory: the composition root that mounts REST, MCP, OAuth, sign-in and the docs over one platform."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from toolhost.catalog import JOB_TYPES, POLLERS, build_registry
from toolhost.config import Settings, load_settings
from toolhost.domains.apps.routes import routes as apps_routes
from toolhost.domains.discovery.routes import routes as discovery_routes
from toolhost.domains.distribution import dispatcher as distribution_dispatcher
from toolhost.domains.distribution.routes import routes as distribution_routes
from toolhost.domains.media.routes import routes as media_routes
from toolhost.domains.skills.routes import routes as skills_routes
from toolhost.platform import jobs
from toolhost.platform.mcp import McpEndpoint
from toolhost.platform.metrics import metrics_routes
from toolhost.platform.oauth import oauth_routes
from toolhost.platform.observability import GaugeReading, redact_access_log
from toolhost.platform.rest import client_went_away, rest_routes
from toolhost.platform.runtime import Platform, build_platform, tune_garbage_collection
from toolhost.platform.signin import signin_routes
from toolhost.platform.worker import load_job_types, run_worker

logger = logging.getLogger("toolhost")


def create_app(settings: Settings | None = None, platform: Platform | None = None) -> Starlette:
    """The whole service for one process."""
    settings = settings or load_settings()
    platform = platform or build_platform(settings, build_registry())
    mcp_endpoint = McpEndpoint(platform)
    # However the app is served (toolhost serve, uvicorn, gunicorn's uvicorn workers), URLs are logged redacted.
    redact_access_log()
    job_types = sorted(load_job_types(JOB_TYPES))

    async def job_queue(session: AsyncSession, now: datetime) -> list[GaugeReading]:
        return await jobs.queue_gauges(session, now, job_types)

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        stopping = asyncio.Event()
        worker = None
        if settings.jobs.run_in_process:
            # The embedded default: due posts and jobs are worked by this process; scaled out, by `toolhost worker`.
            worker = asyncio.create_task(
                run_worker(platform, pollers=POLLERS, job_types=JOB_TYPES, stop_event=stopping)
            )
        try:
            async with mcp_endpoint.running():
                tune_garbage_collection()
                yield
        finally:
            stopping.set()
            if worker is not None:
                await worker
            await platform.close()

    app = Starlette(
        routes=[
            *rest_routes(platform),
            *oauth_routes(platform),
            *metrics_routes(platform, gauges=[job_queue, distribution_dispatcher.publish_gauges]),
            *signin_routes(platform),
            Route("/mcp", mcp_endpoint, methods=["GET", "POST", "DELETE"]),
            *media_routes,
            *distribution_routes,
            *discovery_routes,
            *apps_routes,
            *skills_routes,
            Route("/healthz", healthz, methods=["GET"]),
        ],
        lifespan=lifespan,
        exception_handlers={ClientDisconnect: client_went_away},
    )
    app.state.platform = platform
    return app
