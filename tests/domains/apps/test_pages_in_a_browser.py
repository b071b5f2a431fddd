"""The approvals queue and the calendar driven in a real browser by a signed-in person, checked against the database.

Data is set up the way an agent would (tools over /v1 on the person's session); the person then works only
through the pages, and after each step the test reads the database to see the page told the truth.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from playwright.async_api import Page, expect
from sqlalchemy import select

from tests.browser import LiveServer
from tests.conftest import Person, PersonFactory, csrf_of, sign_in
from tests.domains.analytics.conftest import now, open_channel
from toolhost.domains.approvals.models import ApprovalItem
from toolhost.domains.distribution import accounts as accounts_service
from toolhost.domains.distribution.models import Post
from toolhost.platform.models import Project
from toolhost.platform.runtime import Platform


class Agent:
    """Tool calls on a signed-in person's session, as the pages make them."""

    def __init__(self, client: httpx.AsyncClient, token: str) -> None:
        self.client = client
        self.token = token

    async def data(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        response = await self.client.post(f"/v1/tools/{tool}", json=arguments, headers={"X-CSRF-Token": self.token})
        body = response.json()
        assert response.status_code == 200 and not body.get("isError"), body
        return body["structuredContent"]  # type: ignore[no-any-return]


# How wide a field is, and how wide it would be left to size itself (a date field then shows all of its value).
FIELD_WIDTHS = """(field) => {
  const probe = field.cloneNode();
  probe.style.cssText = "position:absolute;visibility:hidden;width:auto;min-width:0;max-width:none";
  field.parentElement.append(probe);
  const needed = probe.getBoundingClientRect().width;
  probe.remove();
  return [field.getBoundingClientRect().width, needed];
}"""


async def _agent(person: Person, client: httpx.AsyncClient) -> Agent:
    await sign_in(client, person.email, person.password)
    page = await client.get("/app/calendar")
    return Agent(client, csrf_of(page.text))


async def _browser_sign_in(page: Page, live_server: LiveServer, person: Person, path: str) -> None:
    await page.goto(f"{live_server.url}{path}")
    await page.get_by_label("Email address").fill(person.email)
    await page.get_by_label("Password").fill(person.password)
    await page.get_by_role("button", name="Sign in").click()
    await expect(page).to_have_url(f"{live_server.url}{path}")


async def _items(platform: Platform, plan_id: str) -> dict[str, ApprovalItem]:
    async with platform.session_factory() as session:
        found = await session.scalars(select(ApprovalItem).where(ApprovalItem.plan_id == uuid.UUID(plan_id)))
        return {item.post_id: item for item in found}


async def test_a_person_approves_rejects_and_edits_in_the_queue_and_the_database_agrees(
    live_server: LiveServer,
    browser_page: Page,
    browser_errors: list[str],
    make_person: PersonFactory,
    platform: Platform,
) -> None:
    person = await make_person()
    async with httpx.AsyncClient(base_url=live_server.url) as client:
        agent = await _agent(person, client)
        posts = [
            {"id": "a-launch", "platform": "linkedin", "caption": "We shipped approvals.\nReview what agents plan."},
            {"id": "b-teaser", "platform": "twitter", "caption": "Something is coming on Monday."},
            {
                "id": "c-recap",
                "platform": "bluesky",
                "caption": "A recap of the week.",
                "schedule_at": "2031-05-02T09:30:00Z",
            },
        ]
        saved = await agent.data("save_content_plan", {"plan": {"topic": "Approvals launch", "posts": posts}})
        plan_id = saved["plan_id"]
        await agent.data("submit_content_plan_for_approval", {"plan_id": plan_id})

        page = browser_page
        await _browser_sign_in(page, live_server, person, "/app/approvals")
        plan = page.locator("section.plan", has_text="Approvals launch")
        await expect(plan.locator("article.item")).to_have_count(3)
        launch = page.locator("article.item", has_text="We shipped approvals.")
        await expect(launch).to_contain_text("linkedin")
        await expect(launch.locator(".badge").first).to_contain_text("Quality ")
        await expect(launch).to_contain_text("Brand ")
        await expect(page.locator("article.item", has_text="A recap")).to_contain_text("2031-05-02 09:30 UTC")

        # The first item is selected; `a` approves it.
        await expect(launch).to_have_class("item selected")
        await page.keyboard.press("a")
        await expect(page.locator("#status")).to_have_text("Approved.")
        await expect(launch).to_have_count(0)
        decided = await _items(platform, plan_id)
        assert decided["a-launch"].status == "approved"
        assert decided["a-launch"].decided_by == person.email
        assert {decided["b-teaser"].status, decided["c-recap"].status} == {"pending"}

        # `r` on the next item asks why, and the reason is stored.
        teaser = page.locator("article.item", has_text="Something is coming")
        await expect(teaser).to_have_class("item selected")
        await page.keyboard.press("r")
        await page.get_by_label("Reason").fill("Too vague for a teaser")
        await page.get_by_role("button", name="Reject", exact=True).click()
        await expect(page.locator("#status")).to_have_text("Rejected.")
        await expect(teaser).to_have_count(0)
        decided = await _items(platform, plan_id)
        assert (decided["b-teaser"].status, decided["b-teaser"].reason) == ("rejected", "Too vague for a teaser")

        # `e` edits the caption and approves the edited post.
        await page.keyboard.press("e")
        await page.get_by_label("Caption").fill("A recap of the week, with the numbers.")
        await page.get_by_role("button", name="Save and approve").click()
        await expect(page.locator("#status")).to_have_text("Edited and approved.")
        await expect(page.get_by_text("Nothing waits for approval.")).to_be_visible()
        decided = await _items(platform, plan_id)
        assert decided["c-recap"].status == "edited"
        assert decided["c-recap"].edited_post is not None
        assert decided["c-recap"].edited_post["caption"] == "A recap of the week, with the numbers."
        assert decided["c-recap"].edited_post["schedule_at"] == "2031-05-02T09:30:00Z"

        # An item an agent puts up while the page is open appears without a reload.
        more = [{"id": "late", "platform": "threads", "caption": "One more idea from the agent."}]
        await agent.data("create_plan_approvals", {"plan_id": plan_id, "posts": more})
        late = page.locator("article.item", has_text="One more idea from the agent.")
        await expect(late).to_be_visible()

        # Someone else decides it first: approving it from the page is the tool's conflict, shown as such.
        late_id = (await _items(platform, plan_id))["late"].id
        await agent.data("respond_plan_approval", {"approval_id": str(late_id), "decision": "rejected"})
        await late.get_by_role("button", name="Approve").click()
        await expect(page.locator("#status")).to_contain_text("conflict")
        await expect(late).to_have_count(0)
        assert (await _items(platform, plan_id))["late"].status == "rejected"
    assert browser_errors == []


async def _person_with_a_scheduled_post(
    live_server: LiveServer, make_person: PersonFactory, platform: Platform, caption: str
) -> tuple[Person, datetime]:
    """A person whose project has a LinkedIn account and one post at 10:15 UTC on the Monday two weeks ahead."""
    person = await make_person()
    async with platform.session_factory() as session, session.begin():
        project_id = await session.scalar(select(Project.id).where(Project.account_id == person.account_id))
        assert project_id is not None
        await accounts_service.create(
            session=session,
            settings=platform.settings,
            project_id=project_id,
            platform="linkedin",
            connector_name="webhook",
            fields={"url": "http://127.0.0.1:9/hook"},
        )
    today = now().date()
    monday = today - timedelta(days=today.weekday()) + timedelta(days=14)
    first = datetime(monday.year, monday.month, monday.day, 10, 15, tzinfo=UTC)
    async with httpx.AsyncClient(base_url=live_server.url) as client:
        agent = await _agent(person, client)
        await agent.data(
            "schedule_post", {"platforms": ["linkedin"], "caption": caption, "schedule_at": first.isoformat()}
        )
    return person, first


async def test_a_person_drags_a_post_to_another_day_and_the_database_agrees(
    live_server: LiveServer,
    browser_page: Page,
    browser_errors: list[str],
    make_person: PersonFactory,
    platform: Platform,
) -> None:
    caption = "Drag me to Wednesday\nthe second line stays off the card"
    person, first = await _person_with_a_scheduled_post(live_server, make_person, platform, caption)
    page = browser_page
    await _browser_sign_in(page, live_server, person, f"/app/calendar?start_date={first.date().isoformat()}")
    card = page.locator("article.post", has_text="Drag me to Wednesday")
    await expect(card).to_contain_text("linkedin")
    await expect(card).not_to_contain_text("the second line")
    wednesday = (first + timedelta(days=2)).date().isoformat()
    await card.drag_to(page.locator(f'section.day[data-day="{wednesday}"]'))
    await expect(page.locator("#status")).to_have_text(f"Moved to {wednesday} 10:15 UTC.")
    await expect(page.locator(f'section.day[data-day="{wednesday}"] article.post')).to_contain_text("Drag me")
    async with platform.session_factory() as session:
        stored = await session.scalar(select(Post).where(Post.caption == caption))
    assert stored is not None and stored.scheduled_at is not None
    assert stored.scheduled_at.replace(tzinfo=UTC) == first + timedelta(days=2)
    assert browser_errors == []


async def test_the_calendar_fits_a_phone_and_a_laptop_without_clipping(
    live_server: LiveServer, browser_page: Page, make_person: PersonFactory, platform: Platform
) -> None:
    person, first = await _person_with_a_scheduled_post(live_server, make_person, platform, "Fits on a phone")
    page = browser_page
    await _browser_sign_in(page, live_server, person, f"/app/calendar?start_date={first.date().isoformat()}")
    card = page.locator("article.post", has_text="Fits on a phone")
    await card.get_by_text("Change time").click()
    for width in (390, 1280):
        await page.set_viewport_size({"width": width, "height": 900})
        await expect(page.locator("section.day")).to_have_count(7)
        overflow = await page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow == 0, f"the page scrolls sideways at {width} px"
        card_box = await card.bounding_box()
        assert card_box is not None
        for label in ("New day (UTC)", "New time (UTC)"):
            field = card.get_by_label(label)
            box = await field.bounding_box()
            assert box is not None and card_box["x"] <= box["x"]
            assert box["x"] + box["width"] <= card_box["x"] + card_box["width"], (
                f"{label} leaves its card at {width} px"
            )
            shown, needed = await field.evaluate(FIELD_WIDTHS)
            assert shown >= needed, f"{label} is too narrow to show its value at {width} px ({shown} < {needed})"
        for field in await page.locator("input").all():
            if not await field.is_visible():
                continue
            box = await field.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, (
                f"an input is cut at {width} px"
            )


async def test_the_analytics_page_draws_views_by_day_published(
    live_server: LiveServer,
    browser_page: Page,
    browser_errors: list[str],
    make_person: PersonFactory,
    platform: Platform,
) -> None:
    person = await make_person()
    async with platform.session_factory() as session:
        project_id = await session.scalar(select(Project.id).where(Project.account_id == person.account_id))
    assert project_id is not None
    async with httpx.AsyncClient(base_url=live_server.url) as client:
        channel = await open_channel(platform, client, project_id, person.account_id, "linkedin")
        today = now().replace(hour=9, minute=0, second=0, microsecond=0)
        for days_ago, views in ((3, 120), (1, 480)):
            post = await channel.published(
                at=today - timedelta(days=days_ago), caption=f"Post from {days_ago} days ago"
            )
            pushed = await channel.push(post, views=views, likes=1)
            assert pushed.status_code == 202, pushed.text
    page = browser_page
    await _browser_sign_in(page, live_server, person, "/app/analytics")
    chart = page.get_by_role("img", name="Views by day published")
    await expect(chart.locator("rect")).to_have_count(2)
    days = [(today - timedelta(days=days_ago)).date().isoformat() for days_ago in (3, 1)]
    await expect(chart.locator("rect title")).to_have_text([f"{days[0]}: 120 views", f"{days[1]}: 480 views"])
    heights = [float(await bar.get_attribute("height") or 0) for bar in await chart.locator("rect").all()]
    assert heights[1] == 4 * heights[0], "bars are drawn to scale"
    assert browser_errors == []
