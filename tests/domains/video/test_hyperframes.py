"""list_hyperframes_blocks and render_hyperframes through HTTP; the real renders drive Debian's headless Chromium."""

from __future__ import annotations

import base64
import io
import json
import shutil
import uuid
from pathlib import Path

import av
import httpx
import pytest
from PIL import Image
from sqlalchemy import select

from tests.conftest import Tenant, TenantFactory, settings_for_test, worker_context
from toolhost.config import Settings
from toolhost.domains.video import blocks
from toolhost.platform import jobs
from toolhost.platform.jobs import Job, WorkerContext
from toolhost.platform.models import Account
from toolhost.platform.runtime import Platform
from toolhost.platform.worker import run_jobs

HAS_CHROMIUM = shutil.which("/usr/bin/chromium") is not None
needs_chromium = pytest.mark.skipif(
    not HAS_CHROMIUM, reason="headless Chromium is not installed (apt-get install chromium)"
)
# Red before 0.5 s, blue after, and the caller's props decide the text colour of a corner box.
PAGE = """<!doctype html><html><body style="margin:0">
<div id="stage" style="position:absolute;inset:0;background:red"></div>
<div id="box" style="position:absolute;left:0;top:0;width:40px;height:40px"></div>
<script>
window.__hf = {
  duration: 1,
  seek(t) { document.getElementById('stage').style.background = t < 0.5 ? 'rgb(255,0,0)' : 'rgb(0,0,255)'; }
};
document.getElementById('box').style.background = window.__hf.props.corner;
</script></body></html>"""


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    return settings_for_test(
        database_url=database_url, media={"root": str(tmp_path / "media")}, video={"page_ready_seconds": 2}
    )


def worker(platform: Platform) -> WorkerContext:
    return worker_context(platform, "test")


async def balance(platform: Platform, tenant: Tenant) -> int:
    async with platform.session_factory() as session:
        return int(await session.scalar(select(Account.credit_balance).where(Account.id == tenant.account_id)) or 0)


async def test_the_sixteen_blocks_are_listed_as_bare_json_and_filter_by_category(tenant: Tenant) -> None:
    body = (await tenant.call("list_hyperframes_blocks", {})).json()
    payload = body["structuredContent"]
    assert json.loads(body["content"][0]["text"]) == payload
    assert payload["total"] == 16 and payload["categories"] == list(blocks.CATEGORIES)
    for block in payload["blocks"]:
        assert f'["{block["id"]}"] = (element, params) =>' in block["snippet"]
        assert "seek(t)" in block["snippet"] and "http" not in block["snippet"]
        assert all(set(spec) == {"type", "default"} for spec in block["params"].values())
    data_viz = await tenant.data("list_hyperframes_blocks", {"category": "data-viz"})
    assert [block["id"] for block in data_viz["blocks"]] == ["data-chart", "flowchart", "line-graph"]
    bad = await tenant.call("list_hyperframes_blocks", {"category": "nope"})
    assert bad.status_code == 400


async def test_without_chromium_the_render_is_a_validation_error_saying_how_to_install_it(
    tenant: Tenant, platform: Platform
) -> None:
    platform.settings.video.chromium_binary = "/nonexistent/chromium"
    before = await balance(platform, tenant)
    body = (await tenant.call("render_hyperframes", {"composition_html": PAGE, "duration_sec": 1})).json()
    assert body["isError"] and body["error"]["error_type"] == "validation_error"
    assert "/nonexistent/chromium" in body["error"]["message"]
    assert "apt-get install chromium" in body["error"]["recover_with"]
    assert await balance(platform, tenant) == before


async def test_exactly_one_page_source_is_required(tenant: Tenant, platform: Platform) -> None:
    platform.settings.video.chromium_binary = "/bin/sh"  # any executable: the source check comes next
    for arguments in ({"duration_sec": 1}, {"duration_sec": 1, "composition_html": PAGE, "composition_url": "x"}):
        body = (await tenant.call("render_hyperframes", arguments)).json()
        assert body["error"]["error_type"] == "validation_error"


async def test_another_tenants_html_media_key_is_not_found(
    tenant: Tenant, make_tenant: TenantFactory, platform: Platform
) -> None:
    platform.settings.video.chromium_binary = "/bin/sh"
    other = await make_tenant()
    page = base64.b64encode(PAGE.encode()).decode()
    theirs = await other.data("upload_media", {"file_data": page, "file_name": "page.html"})
    body = (await tenant.call("render_hyperframes", {"composition_url": theirs["r2_key"], "duration_sec": 1})).json()
    assert body["isError"] and body["error"]["error_type"] == "not_found"


async def test_the_cost_scales_with_duration_and_fps(tenant: Tenant, platform: Platform) -> None:
    platform.settings.video.chromium_binary = "/bin/sh"
    queued = await tenant.data("render_hyperframes", {"composition_html": PAGE, "duration_sec": 12, "fps": 60})
    assert queued["credits_cost"] == queued["credits"] == 5 + 5  # ceil(12 / 5 × 2)
    assert queued["status"] == "pending" and queued["job_id"] == queued["jobId"]


@needs_chromium
async def test_a_page_is_captured_at_each_seek_with_its_props_into_an_h264_mp4(
    tenant: Tenant, platform: Platform, client: httpx.AsyncClient
) -> None:
    before = await balance(platform, tenant)
    queued = await tenant.data(
        "render_hyperframes",
        {
            "composition_html": PAGE,
            "input_props": json.dumps({"corner": "rgb(0,255,0)"}),
            "duration_sec": 1,
            "fps": 24,
            "quality": "draft",
        },
    )
    assert queued["credits_cost"] == 6
    assert await run_jobs(worker(platform)) == 1
    status = await tenant.data("check_status", {"job_id": queued["job_id"]})
    assert status["status"] == "completed", status
    assert status["job_type"] == "hyperframes_render" and status["billing_status"] == "charged"
    response = await client.get(status["result_url"].removeprefix("http://testserver"))
    with av.open(io.BytesIO(response.content), mode="r") as container:
        stream = container.streams.video[0]
        assert stream.codec_context.name == "h264" and (stream.width, stream.height) == (540, 960)
        frames = [frame.to_image() for frame in container.decode(video=0)]
    assert len(frames) == 24
    first, last = frames[0].getpixel((270, 480)), frames[-1].getpixel((270, 480))
    assert first[0] > 200 and first[2] < 60  # red before 0.5 s
    assert last[2] > 200 and last[0] < 60  # blue after
    corner = frames[0].getpixel((10, 10))
    assert corner[1] > 200 and corner[0] < 60  # window.__hf.props reached the page
    assert await balance(platform, tenant) == before - 6


@needs_chromium
async def test_a_page_without_window_hf_fails_and_is_refunded_once(tenant: Tenant, platform: Platform) -> None:
    before = await balance(platform, tenant)
    queued = await tenant.data(
        "render_hyperframes", {"composition_html": "<html><body>no contract</body></html>", "duration_sec": 1}
    )
    await run_jobs(worker(platform))
    async with platform.session_factory() as session, session.begin():
        job = await session.get(Job, uuid.UUID(queued["job_id"]))
        assert job is not None
        assert job.status == "failed" and job.billing_status == "refunded"
        assert job.error == "page does not expose window.__hf"
        assert await jobs.refund(session, job) == 0
    assert await balance(platform, tenant) == before


@needs_chromium
async def test_the_page_may_load_its_own_media_but_not_navigate_away(
    tenant: Tenant, platform: Platform, client: httpx.AsyncClient
) -> None:
    buffer = io.BytesIO()
    Image.new("RGB", (64, 64), (0, 200, 0)).save(buffer, format="PNG")
    picture = await tenant.data(
        "upload_media", {"file_data": base64.b64encode(buffer.getvalue()).decode(), "content_type": "image/png"}
    )
    page = f"""<!doctype html><html><body style="margin:0;background:#000">
<img id="pic" src="media/{picture["r2_key"]}" style="position:absolute;inset:0;width:100%;height:100%">
<script>
window.__hf = {{ duration: 0.1, seek(t) {{ return document.getElementById('pic').decode(); }} }};
setTimeout(() => {{ location.href = 'https://example.com/'; }}, 0);
</script></body></html>"""
    queued = await tenant.data(
        "render_hyperframes", {"composition_html": page, "duration_sec": 0.1, "quality": "draft", "fps": 30}
    )
    await run_jobs(worker(platform))
    status = await tenant.data("check_status", {"job_id": queued["job_id"]})
    assert status["status"] == "completed", status
    response = await client.get(status["result_url"].removeprefix("http://testserver"))
    with av.open(io.BytesIO(response.content), mode="r") as container:
        frames = [frame.to_image() for frame in container.decode(video=0)]
    assert len(frames) == 3
    pixel = frames[-1].getpixel((270, 480))
    assert pixel[1] > 150 and pixel[0] < 60  # the caller's own image, still on the composition page


@needs_chromium
async def test_every_block_mounts_and_seeks_in_chromium_and_the_chart_grows(
    tenant: Tenant, platform: Platform, client: httpx.AsyncClient
) -> None:
    listed = await tenant.data("list_hyperframes_blocks", {})
    snippets = "\n".join(block["snippet"] for block in listed["blocks"])
    others = [block["id"] for block in listed["blocks"] if block["id"] != "data-chart"]
    page = f"""<!doctype html><html><body style="margin:0;background:#000">
<div id="chart" style="position:absolute;left:0;bottom:0;width:100%;height:50%"></div>
<div id="others" style="position:absolute;left:0;top:0;width:10px;height:10px;overflow:hidden"></div>
{snippets}
<script>
const mounted = [window.hfBlocks["data-chart"](document.getElementById('chart'),
                                               {{values: [1, 10], color: 'rgb(0,255,0)'}})];
for (const id of {json.dumps(others)}) {{
  const element = document.createElement('div');
  document.getElementById('others').appendChild(element);
  mounted.push(window.hfBlocks[id](element, {{}}));
}}
window.__hf = {{ duration: 1, seek(t) {{ mounted.forEach((block) => block.seek(t)); }} }};
</script></body></html>"""
    queued = await tenant.data(
        "render_hyperframes", {"composition_html": page, "duration_sec": 1, "fps": 24, "quality": "draft"}
    )
    await run_jobs(worker(platform))
    status = await tenant.data("check_status", {"job_id": queued["job_id"]})
    assert status["status"] == "completed", status
    response = await client.get(status["result_url"].removeprefix("http://testserver"))
    with av.open(io.BytesIO(response.content), mode="r") as container:
        frames = [frame.to_image() for frame in container.decode(video=0)]
    # The second bar (right half) grows from nothing at t=0 to the full chart height by the end.
    assert frames[0].getpixel((400, 700))[1] < 60
    assert frames[-1].getpixel((400, 700))[1] > 200
