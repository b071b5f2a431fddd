"""The documentation pages as a person sees them: headless Chromium on the real server."""

from __future__ import annotations

from playwright.async_api import Page, expect

from tests.browser import LiveServer
from toolhost.catalog import build_registry


async def test_the_api_reference_shows_every_operation_of_the_openapi_document(
    live_server: LiveServer, browser_page: Page, browser_errors: list[str]
) -> None:
    await browser_page.goto(f"{live_server.url}/docs")
    operation = browser_page.locator("#operations-approvals-list_plan_approvals")
    await expect(operation).to_contain_text("/tools/list_plan_approvals")
    await expect(operation).to_contain_text("List Plan Approvals")
    await expect(browser_page.locator(".opblock")).to_have_count(len(build_registry().all()) + 1)  # and GET /tools
    await expect(browser_page.get_by_text("Unable to render this definition")).to_have_count(0)
    assert browser_errors == []


async def test_the_tool_catalogue_and_a_guide_show_headings_and_links_not_markdown(
    live_server: LiveServer, browser_page: Page, browser_errors: list[str]
) -> None:
    await browser_page.goto(f"{live_server.url}/docs/tools#schedule_post")
    await expect(browser_page.get_by_role("heading", name="Schedule Post", exact=True)).to_be_visible()
    await expect(browser_page.locator("#schedule_post li code").first).to_have_text("media_url")
    assert "####" not in await browser_page.inner_text("main")

    await browser_page.get_by_role("link", name="Quickstart").click()
    await expect(browser_page).to_have_url(f"{live_server.url}/docs/guides/quickstart")
    await expect(browser_page.get_by_role("heading", level=1)).to_have_text("Quickstart")
    await expect(browser_page.locator("main ol > li")).to_have_count(7)
    assert "# Quickstart" not in await browser_page.inner_text("main")
    assert browser_errors == []
