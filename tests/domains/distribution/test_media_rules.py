"""The platforms' media and caption rules, checked by schedule_post before any credit is spent."""

from __future__ import annotations

import base64
import io
from typing import Any

import av
import pytest
from PIL import Image

from tests.conftest import Tenant
from tests.domains.distribution.conftest import connect_webhook
from tests.domains.distribution.test_schedule_post import balance, error_of
from toolhost.domains.distribution import rules
from toolhost.domains.media.models import MediaObject
from toolhost.domains.media.service import ResolvedMedia
from toolhost.platform.results import ValidationFailed
from toolhost.platform.runtime import Platform

RECEIVER = "http://127.0.0.1:9/hook"


def mp4(width: int, height: int, seconds: int) -> bytes:
    """A small H.264 MP4 at one frame a second."""
    buffer = io.BytesIO()
    with av.open(buffer, mode="w", format="mp4") as container:
        stream = container.add_stream("libx264", rate=1)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        for number in range(seconds):
            frame = av.VideoFrame.from_image(Image.new("RGB", (width, height), (20, 40, 60)))
            frame.pts = number
            container.mux(stream.encode(frame))
        container.mux(stream.encode())
    return buffer.getvalue()


def png(width: int = 40, height: int = 40) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(buffer, format="PNG")
    return buffer.getvalue()


async def stored(tenant: Tenant, data: bytes, content_type: str) -> str:
    uploaded = await tenant.data(
        "upload_media", {"file_data": base64.b64encode(data).decode(), "content_type": content_type}
    )
    return str(uploaded["r2_key"])


async def refused(tenant: Tenant, platform: Platform, arguments: dict[str, Any]) -> dict[str, Any]:
    """schedule_post's validation_error, after checking that the call cost nothing."""
    before = await balance(platform, tenant.account_id)
    status, error = await error_of(tenant, "schedule_post", arguments)
    assert (status, error["error_type"]) == (200, "validation_error"), error
    assert await balance(platform, tenant.account_id) == before
    return error


async def test_a_video_longer_than_x_allows_is_refused_naming_the_rule_and_costs_nothing(
    tenant: Tenant, platform: Platform
) -> None:
    await connect_webhook(platform, tenant.project_id, RECEIVER)
    key = await stored(tenant, mp4(64, 36, 142), "video/mp4")
    error = await refused(tenant, platform, {"caption": "Watch", "platforms": ["twitter"], "r2_key": key})
    assert error["rule"] == "twitter.video.max_seconds"
    assert "at most 140 s" in error["message"] and "X API media best practices" in error["message"]


async def test_a_video_wider_than_three_to_one_is_refused_for_x(tenant: Tenant, platform: Platform) -> None:
    await connect_webhook(platform, tenant.project_id, RECEIVER)
    key = await stored(tenant, mp4(128, 32, 2), "video/mp4")
    error = await refused(tenant, platform, {"caption": "Wide", "platforms": ["twitter"], "r2_key": key})
    assert error["rule"] == "twitter.video.aspect_ratio"
    assert "128x32" in error["message"]


async def test_a_video_beside_an_image_and_five_images_are_refused_for_x(tenant: Tenant, platform: Platform) -> None:
    await connect_webhook(platform, tenant.project_id, RECEIVER)
    video = await stored(tenant, mp4(64, 36, 2), "video/mp4")
    image = await stored(tenant, png(), "image/png")
    mixed = await refused(tenant, platform, {"caption": "Mix", "platforms": ["twitter"], "r2_keys": [image, video]})
    assert mixed["rule"] == "twitter.video.alone"
    images = [await stored(tenant, png(40 + index), "image/png") for index in range(5)]
    many = await refused(tenant, platform, {"caption": "Five", "platforms": ["twitter"], "r2_keys": images})
    assert many["rule"] == "twitter.max_items"
    assert "at most 4" in many["message"]


async def test_a_webm_video_is_not_a_format_x_takes(tenant: Tenant, platform: Platform) -> None:
    await connect_webhook(platform, tenant.project_id, RECEIVER)
    webm = b"\x1a\x45\xdf\xa3" + bytes(200)
    key = await stored(tenant, webm, "video/webm")
    error = await refused(tenant, platform, {"caption": "Clip", "platforms": ["twitter"], "r2_key": key})
    assert error["rule"] == "twitter.formats"
    assert "video/mp4" in error["allowed"]


async def test_x_counts_the_caption_in_weighted_characters_and_names_the_limit(
    tenant: Tenant, platform: Platform
) -> None:
    await connect_webhook(platform, tenant.project_id, RECEIVER)
    # 150 CJK characters are 150 characters but 300 weighted ones: over X's 280.
    error = await refused(tenant, platform, {"caption": "日" * 150, "platforms": ["twitter"]})
    assert error["rule"] == "caption_limit"
    assert "twitter (280 weighted characters" in error["message"] and "this one is 300" in error["message"]
    # A long link counts 23, so this caption fits although it has more than 280 characters.
    fits = "Read more " + "https://example.com/" + "a" * 300
    data = await tenant.data("schedule_post", {"caption": fits, "platforms": ["twitter"]})
    assert data["results"]["Twitter"]["postId"]


async def test_a_thread_post_over_the_limit_is_refused_with_its_position(tenant: Tenant, platform: Platform) -> None:
    await connect_webhook(platform, tenant.project_id, RECEIVER)
    error = await refused(
        tenant,
        platform,
        {
            "caption": "1/ A thread",
            "platforms": ["twitter"],
            "platform_metadata": {"twitter": {"thread": ["2/ fine", "x" * 281]}},
        },
    )
    assert "thread post 2" in error["message"]
    assert error["field_errors"][0]["path"] == "platform_metadata.twitter.thread.1"


def test_an_image_over_five_megabytes_breaks_x_s_size_rule_and_bluesky_s_one_megabyte() -> None:
    media = ResolvedMedia(
        entries=[{"r2_key": "k.png", "content_type": "image/png"}],
        names=["k.png"],
        known=[MediaObject(key="k.png", content_type="image/png", size=6 * 1024 * 1024, width=100, height=100)],
    )
    with pytest.raises(ValidationFailed) as x_error:
        rules.check_media_rules(["twitter"], media)
    assert x_error.value.details["rule"] == "twitter.image.max_bytes"
    assert "at most 5 MB" in x_error.value.message
    with pytest.raises(ValidationFailed) as bluesky_error:
        rules.check_media_rules(["bluesky"], media)
    assert bluesky_error.value.details["rule"] == "bluesky.image.max_bytes"
