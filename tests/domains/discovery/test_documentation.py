"""search and fetch over toolhost's shipped documentation, and the pages their URLs point at."""

from __future__ import annotations

import json
import re

import httpx
import pytest

from tests.conftest import Tenant
from toolhost.domains.discovery import documents


async def test_search_ranks_the_tool_named_by_the_query_first(tenant: Tenant) -> None:
    found = await tenant.data("search", {"query": "schedule post idempotency"})
    results = found["results"]
    assert 1 <= len(results) <= 10
    assert results[0] == {
        "id": "tool:schedule_post",
        "title": "Schedule Post",
        "url": "http://testserver/docs/tools#schedule_post",
    }
    text = (await tenant.call("search", {"query": "schedule post idempotency"})).json()["content"][0]["text"]
    assert json.loads(text) == found


async def test_an_empty_query_lists_the_guides_first(tenant: Tenant) -> None:
    found = await tenant.data("search", {"query": ""})
    assert [result["id"] for result in found["results"]][:6] == [
        "overview",
        "quickstart",
        "authentication",
        "connectors",
        "self-hosting",
        "privacy-security",
    ]


async def test_fetch_returns_a_tools_catalogue_section_with_its_metadata(tenant: Tenant) -> None:
    document = await tenant.data("fetch", {"id": "tool:respond_plan_approval"})
    assert document["text"].startswith("#### respond_plan_approval")
    assert "edited_post" in document["text"]
    assert document["metadata"] == {
        "source": "tool-catalog",
        "category": "tool",
        "module": "approvals",
        "scope": "mcp:write",
    }
    guide = await tenant.data("fetch", {"id": "connectors"})
    assert "X-Toolhost-Signature" in guide["text"]


async def test_fetching_an_unknown_document_is_not_found(tenant: Tenant) -> None:
    response = await tenant.call("fetch", {"id": "tool:make_me_famous"})
    assert response.status_code == 200
    assert response.json()["error"]["error_type"] == "not_found"
    assert response.json()["error"]["message"] == "Document not found"


async def test_search_never_returns_account_data(tenant: Tenant) -> None:
    await tenant.data("save_content_plan", {"plan": {"topic": "zanzibarquokka", "posts": [{"caption": "x"}]}})
    assert (await tenant.data("search", {"query": "zanzibarquokka"}))["results"] == []


async def test_result_urls_are_served_pages(client: httpx.AsyncClient) -> None:
    tools = await client.get("/docs/tools")
    assert tools.status_code == 200 and 'id="schedule_post"' in tools.text
    guide = await client.get("/docs/guides/quickstart")
    assert guide.status_code == 200 and "make serve" in guide.text
    assert (await client.get("/docs/guides/nothing")).status_code == 404


async def test_the_tool_catalogue_is_rendered_html_not_markdown(client: httpx.AsyncClient) -> None:
    page = (await client.get("/docs/tools")).text
    section = re.search(r'<section class="tool" id="list_plan_approvals">(.*?)</section>', page, re.DOTALL)
    assert section is not None
    assert section.group(1).startswith("<h3>List Plan Approvals</h3>")
    assert "<li>In: <code>plan_id</code> uuid req;" in section.group(1)
    assert "####" not in page and "`" not in page


async def test_a_guide_is_rendered_html_with_the_shared_stylesheet(client: httpx.AsyncClient) -> None:
    response = await client.get("/docs/guides/connectors")
    page = response.text
    assert "<h1>Connectors</h1>" in page and "# Connectors" not in page
    assert "<code>Idempotency-Key: &lt;the post's key&gt;</code>" in page
    assert '<link rel="stylesheet" href="/docs/assets/docs.css">' in page
    assert (await client.get("/docs/assets/docs.css")).headers["content-type"].startswith("text/css")
    assert "script-src 'self';" in response.headers["content-security-policy"]


async def test_html_inside_a_document_is_shown_as_text_never_run(
    client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    hostile = "# Overview\n\n<script>alert(1)</script> <img src=x onerror=alert(2)> [click](javascript:alert(3))\n"
    monkeypatch.setattr(documents, "guide_text", lambda name: hostile)
    page = (await client.get("/docs/guides/overview")).text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert" not in page
    assert "<img" not in page and 'href="javascript:' not in page
