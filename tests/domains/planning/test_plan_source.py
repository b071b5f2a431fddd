"""plan_content_week with source_url: the page is read like extract_url_content auto and feeds the angles."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route

from tests.conftest import Tenant, settings_for_test
from tests.domains.distribution.standins import serve
from toolhost.config import Settings

PRODUCT = """<!doctype html><html><head><title>Quorum Mic</title>
<meta property="og:type" content="product"><meta property="og:title" content="Quorum Mic"></head>
<body><main><h1>Quorum Mic</h1>
<p>The only meeting microphone that mutes itself when the room goes quiet.</p>
<p>It helps you hear every voice in a hybrid meeting without passing a handset around.</p>
<ul><li>Six beam-forming capsules</li><li>USB-C, no drivers needed</li></ul>
</main></body></html>"""


async def product(request: Request) -> Response:
    return HTMLResponse(PRODUCT)


async def broken(request: Request) -> Response:
    return PlainTextResponse("maintenance", status_code=503)


@pytest.fixture
async def site() -> AsyncIterator[str]:
    async with serve(Starlette(routes=[Route("/mic", product), Route("/down", broken)])) as base:
        yield base


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    return settings_for_test(
        database_url=database_url,
        media={"root": str(tmp_path / "media")},
        fetch={"allow": ["127.0.0.1"], "allow_http": True},
    )


def arguments(url: str) -> dict[str, object]:
    return {
        "topic": "Better hybrid meetings",
        "source_url": url,
        "platforms": ["linkedin", "twitter"],
        "days": 3,
        "start_date": "2030-01-07",
    }


async def test_a_product_pages_usp_benefits_and_features_lead_the_angles(tenant: Tenant, site: str) -> None:
    plan = await tenant.data("plan_content_week", arguments(site + "/mic"))
    source = plan["context_used"]["source"]
    assert source["read"] is True
    assert source["source_type"] == "product"
    assert source["angles"][:2] == [
        "The only meeting microphone that mutes itself when the room goes quiet",
        "It helps you hear every voice in a hybrid meeting without passing a handset around",
    ]
    assert {"Six beam-forming capsules", "USB-C, no drivers needed"} <= set(source["angles"])
    assert 0 < source["characters_used"] <= 2000
    angles = [post["angle"] for post in plan["posts"]]
    assert angles[: len(source["angles"])] == source["angles"]
    assert plan["estimated_credits"] == 13
    assert plan["source_url"] == site + "/mic"


async def test_a_source_that_fails_is_noted_and_the_plan_is_still_written(tenant: Tenant, site: str) -> None:
    plan = await tenant.data("plan_content_week", arguments(site + "/down"))
    source = plan["context_used"]["source"]
    assert source["read"] is False
    assert "503" in source["error"]
    assert len(plan["posts"]) == 6
    assert plan["estimated_credits"] == 13


async def test_a_private_source_url_is_refused_before_anything_is_written(tenant: Tenant) -> None:
    response = await tenant.call("plan_content_week", arguments("http://10.0.0.1/page"))
    error = response.json()["structuredContent"]["error"]
    assert error["error_type"] == "validation_error"
    assert error["message"] == "URL resolves to a private or internal address"
