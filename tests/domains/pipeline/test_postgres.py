"""The pipeline on PostgreSQL, where a status poll runs beside the pipeline (SQLite has one connection)."""

from __future__ import annotations

import asyncio

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from tests.conftest import Tenant
from tests.domains.distribution.standins import serve
from tests.domains.pipeline.test_pipeline import run

pytestmark = pytest.mark.postgres


@pytest.fixture
def database_url(postgres_url: str) -> str:
    """A fresh migrated PostgreSQL database (the tests skip, with the reason, when it is unreachable)."""
    return postgres_url


async def test_get_pipeline_status_sees_the_run_while_it_is_planning(tenant: Tenant) -> None:
    reached, release = asyncio.Event(), asyncio.Event()

    async def page(request: Request) -> HTMLResponse:
        reached.set()  # the planning stage is reading the source page: hold it there
        await asyncio.wait_for(release.wait(), 10)
        return HTMLResponse(
            "<html><head><title>Async standups</title></head>"
            "<body><p>Async updates give every person four hours of focus back each week.</p></body></html>"
        )

    async with serve(Starlette(routes=[Route("/launch", page)])) as base:
        running = asyncio.create_task(
            run(tenant, platforms=["twitter"], days=1, dry_run=True, source_url=f"{base}/launch")
        )
        try:
            await asyncio.wait_for(reached.wait(), 10)
            meanwhile = await tenant.data("get_pipeline_status", {})
        finally:
            release.set()
            result = await asyncio.wait_for(running, 30)
    assert meanwhile["status"] == "running" and meanwhile["current_stage"] == "planning"
    assert meanwhile["stages_completed"] == ["budget_check", "research"] and meanwhile["completed_at"] is None
    assert meanwhile["id"] == result["pipeline_id"] and result["status"] in {"completed", "awaiting_approval"}
    plan = await tenant.data("get_content_plan", {"plan_id": result["plan_id"]})
    assert plan["plan"]["context_used"]["source"]["read"] is True
