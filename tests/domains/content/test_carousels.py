"""create_carousel and delete_carousel through HTTP, with the media-job poller run directly."""

from __future__ import annotations

import io
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from PIL import Image
from sqlalchemy import select

from tests.conftest import Tenant, TenantFactory, settings_for_test, worker_context
from tests.local_http import serving
from toolhost.config import Settings
from toolhost.domains.content import layouts
from toolhost.domains.content.models import ContentRecord
from toolhost.platform.jobs import Job, WorkerContext
from toolhost.platform.models import Account
from toolhost.platform.runtime import Platform
from toolhost.platform.worker import claim, run_claimed, run_jobs

LOGO_COLOR = (255, 0, 255)
PROFILE = {
    "brandName": "Ledgerly",
    "colorPalette": {"primary": "#1f4e79", "secondary": "#0b1f33", "accent": "#f2a900"},
    "typography": {"headingFont": "Fraunces", "bodyFont": "Inter"},
}


@pytest.fixture
def logo_server() -> Iterator[str]:
    """A local site serving the brand's logo (a magenta PNG)."""
    buffer = io.BytesIO()
    Image.new("RGB", (200, 100), LOGO_COLOR).save(buffer, format="PNG")
    body = buffer.getvalue()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "image/png")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with serving(server):
        yield f"http://127.0.0.1:{server.server_address[1]}/logo.png"


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    """Settings with the local logo server allowlisted for the fetcher."""
    return settings_for_test(
        database_url=database_url,
        media={"root": str(tmp_path / "media")},
        fetch={"allow": ["127.0.0.1"], "allow_http": True},
    )


def worker(platform: Platform) -> WorkerContext:
    return worker_context(platform, "test")


async def run_all(platform: Platform, bound: int = 30) -> int:
    """Runs the poller until no job is due (bounded, no sleeps); returns how many jobs it ran."""
    ran = 0
    for _ in range(bound):
        handled = await run_jobs(worker(platform))
        if handled == 0:
            return ran
        ran += handled
    raise AssertionError("the poller never ran dry")


async def balance(platform: Platform, tenant: Tenant) -> int:
    async with platform.session_factory() as session:
        return int(await session.scalar(select(Account.credit_balance).where(Account.id == tenant.account_id)) or 0)


async def job_row(platform: Platform, job_id: str) -> Job:
    async with platform.session_factory() as session:
        job = await session.get(Job, uuid.UUID(job_id))
        assert job is not None
        return job


async def served_png(client: httpx.AsyncClient, status: dict[str, Any]) -> Image.Image:
    response = await client.get(status["result_url"].removeprefix("http://testserver"))
    assert response.status_code == 200
    image = Image.open(io.BytesIO(response.content))
    assert image.format == "PNG"
    return image


async def test_each_slide_job_completes_with_a_branded_png_of_the_aspect_ratios_size(
    tenant: Tenant, platform: Platform, client: httpx.AsyncClient, logo_server: str
) -> None:
    await tenant.data("save_brand_profile", {"brand_context": {**PROFILE, "logoUrl": logo_server}})
    before = await balance(platform, tenant)
    response = await tenant.call("create_carousel", {"topic": "async standups for remote teams", "slide_count": 4})
    body = response.json()
    assert response.status_code == 200 and not body["isError"], body
    data = body["structuredContent"]
    assert data["slideCount"] == 4 and len(data["jobIds"]) == 4 and data["failedSlides"] == []
    assert data["templateId"] == "hormozi-authority" and data["style"] == "hormozi" and data["imageModel"] == "builtin"
    assert data["credits"] == {
        "textGeneration": 5,
        "imagesEstimated": 16,
        "imagesCharged": 16,
        "imagesRefunded": 0,
        "billingUnknownSlides": 0,
        "totalEstimated": 21,
    }
    assert data["brandApplied"]["brandName"] == "Ledgerly" and data["brandApplied"]["hasLogo"] is True
    assert "#1f4e79" in data["brandApplied"]["stylePrefix"]
    assert [slide["imageJobId"] for slide in data["slides"]] == data["jobIds"]
    assert all(slide["imageBillingStatus"] == "reserved" and slide["imageError"] is None for slide in data["slides"])
    assert "check_status" in body["content"][0]["text"]
    assert await balance(platform, tenant) == before - 21

    assert await run_all(platform) == 4
    for job_id in data["jobIds"]:
        status = await tenant.data("check_status", {"job_id": job_id})
        assert status["status"] == "completed" and status["billing_status"] == "charged"
        assert status["credits_charged"] == 4 and status["job_type"] == "image"
        image = (await served_png(client, status)).convert("RGB")
        assert image.size == (1080, 1080)
        colours = {colour for _, colour in image.getcolors(maxcolors=2_000_000) or []}
        assert LOGO_COLOR in colours and (0xF2, 0xA9, 0x00) in colours  # the logo and the accent colour
        assert image.getpixel((1079 - 80, 1079 - 80)) == LOGO_COLOR  # bottom-right
    assert await balance(platform, tenant) == before - 21
    async with platform.session_factory() as session:
        kinds = list(
            await session.scalars(select(ContentRecord.kind).where(ContentRecord.project_id == tenant.project_id))
        )
    assert kinds == ["carousel"]  # one record: slide images are the carousel's, not records of their own


@pytest.mark.parametrize(
    ("style", "aspect_ratio", "size"),
    [("minimal", "4:5", (1080, 1350)), ("bold", "9:16", (1080, 1920)), ("playful", "1:1", (1080, 1080))],
)
async def test_the_rendered_slides_show_the_lines_the_visual_gate_predicts(
    tenant: Tenant, platform: Platform, client: httpx.AsyncClient, style: str, aspect_ratio: str, size: tuple[int, int]
) -> None:
    data = await tenant.data(
        "create_carousel",
        {
            "topic": "pricing experiments that doubled trial conversions",
            "template_id": "step-by-step",
            "style": style,
            "aspect_ratio": aspect_ratio,
            "slide_count": 6,
            "cta_text": "Get the pricing checklist",
            "cta_url": "https://example.com/checklist",
        },
    )
    visual_style = layouts.VISUAL_STYLE_OF_CAROUSEL_STYLE[style]
    slides = [{key: value for key, value in slide.items() if not key.startswith("image")} for slide in data["slides"]]
    gate = await tenant.data("visual_quality_check", {"slides": slides, "visual_style": visual_style})
    assert gate["passed"] and gate["preRender"]["overflowIssues"] == []
    await run_all(platform)
    for position, slide in enumerate(slides):
        status = await tenant.data("check_status", {"job_id": data["jobIds"][position]})
        assert status["status"] == "completed"
        assert (await served_png(client, status)).size == size
        output = (await job_row(platform, data["jobIds"][position])).output
        layout = layouts.layout_for(slide, position=position, count=len(slides), visual_style=visual_style)
        assert output["layout"] == layout
        drawn = [(field["field"], field["lines"]) for field in output["fields"]]
        predicted = layouts.slide_fields(slide, layout)
        # Every gate field is drawn whole, in the line count the gate measured and within its maximum.
        assert [name for name, _ in drawn[: len(predicted)]] == [name for name, _ in predicted]
        for (name, lines), (_, text) in zip(drawn, predicted, strict=False):
            spec = layouts.LAYOUTS[layout][name]
            shown = text.upper() if spec.uppercase else text
            assert " ".join(lines) == " ".join(shown.split())
            assert len(lines) == layouts.line_count(text, spec) <= spec.max_lines
    last = (await job_row(platform, data["jobIds"][-1])).output
    assert any(field["lines"] == ["Get the pricing checklist"] for field in last["fields"])  # the CTA button


async def test_a_template_pack_sets_the_template_and_slide_count_and_the_cost(
    tenant: Tenant, platform: Platform
) -> None:
    before = await balance(platform, tenant)
    data = await tenant.data(
        "create_carousel",
        {"topic": "q3 results: 38% more demos", "template_pack_id": "sn_performance_recap_v1", "slide_count": 9},
    )
    assert data["templatePackId"] == "sn_performance_recap_v1" and data["templateId"] == "data-stats"
    assert data["slideCount"] == 5 and len(data["jobIds"]) == 5
    assert data["credits"]["totalEstimated"] == 25 and await balance(platform, tenant) == before - 25
    showcase = await tenant.data(
        "create_carousel", {"topic": "our new planner", "template_pack_id": "sn_showcase_ad_v1"}
    )
    assert showcase["slideCount"] == 6 and showcase["templateId"] == "product-showcase"
    assert showcase["brandApplied"] is None  # no brand profile


async def test_a_slide_that_cannot_fit_its_layout_is_listed_failed_and_refunded(
    tenant: Tenant, platform: Platform
) -> None:
    before = await balance(platform, tenant)
    hook = " ".join(["Everything we learned shipping weekly for three years"] * 5)[:300]
    data = await tenant.data("create_carousel", {"topic": "shipping weekly", "hook": hook, "slide_count": 3})
    assert [failed["slideNumber"] for failed in data["failedSlides"]] == [1]
    failed = data["failedSlides"][0]
    assert failed["billing_status"] == "refunded" and failed["failure_reason"] == "generation_failed"
    assert failed["credits_reserved"] == failed["credits_refunded"] == 4 and failed["credits_charged"] == 0
    assert "does not fit" in data["slides"][0]["imageError"]
    assert data["credits"]["imagesRefunded"] == 4 and data["credits"]["imagesCharged"] == 8
    assert await balance(platform, tenant) == before - 5 - 12 + 4
    assert await run_all(platform) == 2  # the failed slide's job is never run
    status = await tenant.data("check_status", {"job_id": data["jobIds"][0]})
    assert status["status"] == "failed" and status["credits_refunded"] == 4
    assert await balance(platform, tenant) == before - 5 - 12 + 4


async def test_deleting_a_carousel_cancels_and_refunds_its_unfinished_slides_exactly_once(
    tenant: Tenant, platform: Platform
) -> None:
    before = await balance(platform, tenant)
    data = await tenant.data("create_carousel", {"topic": "hiring your first designer", "slide_count": 3})
    context = worker(platform)
    first_slide = await claim(context, "image", limit=1)
    await run_claimed(context, first_slide)  # the first slide renders; two stay pending
    deleted = await tenant.call("delete_carousel", {"content_id": data["carouselId"], "confirm": True})
    body = deleted.json()
    assert deleted.status_code == 200 and not body["isError"], body
    result = body["structuredContent"]
    assert result["success"] and result["deleted"] and result["content_id"] == data["carouselId"]
    assert result["jobs_cancelled"] == 2 and result["refunded_credits"] == 8
    assert await balance(platform, tenant) == before - 5 - 12 + 8
    first = await tenant.data("check_status", {"job_id": data["jobIds"][0]})
    assert first["status"] == "completed" and first["r2_key"]  # rendered images stay
    for job_id in data["jobIds"][1:]:
        status = await tenant.data("check_status", {"job_id": job_id})
        assert status["status"] == "cancelled" and status["billing_status"] == "refunded"
    assert await run_all(platform) == 0
    again = await tenant.call("delete_carousel", {"content_id": data["carouselId"], "confirm": True})
    assert again.status_code == 404 and again.json()["error"]["error_type"] == "not_found"
    assert await balance(platform, tenant) == before - 5 - 12 + 8


async def test_another_tenants_carousel_or_a_record_that_is_no_carousel_is_not_found(
    tenant: Tenant, make_tenant: TenantFactory
) -> None:
    data = await tenant.data("create_carousel", {"topic": "remote onboarding", "slide_count": 3})
    other = await make_tenant()
    response = await other.call("delete_carousel", {"content_id": data["carouselId"], "confirm": True})
    assert response.status_code == 404 and response.json()["error"]["error_type"] == "not_found"
    text = await tenant.data("generate_content", {"prompt": "remote onboarding", "content_type": "hook"})
    not_carousel = await tenant.call("delete_carousel", {"content_id": text["content_id"], "confirm": True})
    assert not_carousel.status_code == 404
    still = await tenant.data("check_status", {"job_id": data["jobIds"][0]})
    assert still["status"] == "pending"


async def test_bad_input_is_refused_before_any_spend(
    tenant: Tenant, make_tenant: TenantFactory, platform: Platform
) -> None:
    before = await balance(platform, tenant)
    for arguments in (
        {"topic": "x" * 201},
        {"topic": "ok", "slide_count": 11},
        {"topic": "ok", "template_pack_id": "sn_unknown_v1"},
        {"topic": "ok", "aspect_ratio": "16:9"},
        {"topic": "ok", "image_style_suffix": "y" * 501},
    ):
        response = await tenant.call("create_carousel", arguments)
        assert response.status_code == 400, arguments
        assert response.json()["error"]["error_type"] == "validation_error"
    model = await tenant.call("create_carousel", {"topic": "ok", "image_model": "dall-e-9"})
    assert model.json()["error"]["error_type"] == "validation_error"
    assert model.json()["error"]["available_models"] == ["builtin"]
    other = await make_tenant()
    foreign = await tenant.call("create_carousel", {"topic": "ok", "brand_id": str(other.project_id)})
    assert foreign.json()["error"]["error_type"] == "not_found"
    unconfirmed = await tenant.call("delete_carousel", {"content_id": str(uuid.uuid4()), "confirm": "true"})
    assert unconfirmed.status_code == 400
    assert await balance(platform, tenant) == before


async def test_brand_id_takes_the_visuals_from_another_accessible_project(
    make_tenant: TenantFactory, platform: Platform
) -> None:
    tenant = await make_tenant(projects=2)
    brand_project = str(tenant.project_ids[1])
    await tenant.data("save_brand_profile", {"brand_context": PROFILE, "project_id": brand_project})
    data = await tenant.data(
        "create_carousel",
        {
            "topic": "quarterly planning",
            "slide_count": 3,
            "project_id": str(tenant.project_id),
            "brand_id": brand_project,
        },
    )
    assert data["brandApplied"]["brandName"] == "Ledgerly" and data["brandApplied"]["hasLogo"] is False
    assert await run_all(platform) == 3
    job = await job_row(platform, data["jobIds"][0])
    assert job.project_id == tenant.project_id and job.status == "completed"
