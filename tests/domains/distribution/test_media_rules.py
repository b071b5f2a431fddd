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


def jpeg(width: int = 40, height: int = 40) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (30, 90, 200)).save(buffer, format="JPEG")
    return buffer.getvalue()


async def test_instagram_takes_only_jpeg_images_between_four_to_five_and_1_91_to_one(
    tenant: Tenant, platform: Platform
) -> None:
    await connect_webhook(platform, tenant.project_id, RECEIVER, platform_name="instagram")
    png_key = await stored(tenant, png(100, 100), "image/png")
    error = await refused(tenant, platform, {"caption": "Hi", "platforms": ["instagram"], "r2_key": png_key})
    assert error["rule"] == "instagram.formats" and error["allowed"] == ["image/jpeg", "video/mp4", "video/quicktime"]
    tall = await stored(tenant, jpeg(100, 200), "image/jpeg")
    error = await refused(tenant, platform, {"caption": "Tall", "platforms": ["instagram"], "r2_key": tall})
    assert error["rule"] == "instagram.image.aspect_ratio"
    assert "Instagram Platform IG User Media specifications" in error["message"]
    fits = await stored(tenant, jpeg(100, 125), "image/jpeg")
    data = await tenant.data("schedule_post", {"caption": "Four to five", "platforms": ["instagram"], "r2_key": fits})
    assert data["results"]["Instagram"]["postId"]


async def test_a_reel_shorter_than_three_seconds_is_refused_for_instagram(tenant: Tenant, platform: Platform) -> None:
    await connect_webhook(platform, tenant.project_id, RECEIVER, platform_name="instagram")
    key = await stored(tenant, mp4(36, 64, 2), "video/mp4")
    error = await refused(tenant, platform, {"caption": "Short", "platforms": ["instagram"], "r2_key": key})
    assert error["rule"] == "instagram.video.min_seconds" and "at least 3 s" in error["message"]


async def test_an_instagram_caption_with_thirty_one_hashtags_is_refused_naming_the_limit(
    tenant: Tenant, platform: Platform
) -> None:
    await connect_webhook(platform, tenant.project_id, RECEIVER, platform_name="instagram")
    key = await stored(tenant, jpeg(100, 100), "image/jpeg")
    tags = [f"tag{number}" for number in range(31)]
    error = await refused(
        tenant, platform, {"caption": "Tagged", "hashtags": tags, "platforms": ["instagram"], "r2_key": key}
    )
    assert error["rule"] == "instagram.hashtags" and "at most 30 hashtags" in error["message"]
    mentions = " ".join(f"@friend{number}" for number in range(21))
    error = await refused(tenant, platform, {"caption": mentions, "platforms": ["instagram"], "r2_key": key})
    assert error["rule"] == "instagram.mentions"
    data = await tenant.data(
        "schedule_post", {"caption": "Thirty", "hashtags": tags[:30], "platforms": ["instagram"], "r2_key": key}
    )
    assert data["results"]["Instagram"]["postId"]


async def test_threads_counts_each_emoji_as_its_utf8_bytes_against_500(tenant: Tenant, platform: Platform) -> None:
    await connect_webhook(platform, tenant.project_id, RECEIVER, platform_name="threads")
    # 497 characters and one emoji of 4 UTF-8 bytes: 498 characters, but 501 by Threads' count.
    error = await refused(tenant, platform, {"caption": "a" * 497 + "😀", "platforms": ["threads"]})
    assert error["rule"] == "caption_limit" and "this one is 501" in error["message"]
    assert "each emoji counting its UTF-8 bytes" in error["message"]
    data = await tenant.data("schedule_post", {"caption": "a" * 496 + "😀", "platforms": ["threads"]})
    assert data["results"]["Threads"]["postId"]
    chain = await refused(
        tenant,
        platform,
        {"caption": "1/", "platforms": ["threads"], "platform_metadata": {"threads": {"thread": ["2/", "b" * 501]}}},
    )
    assert chain["field_errors"][0]["path"] == "platform_metadata.threads.thread.1"


async def test_a_video_longer_than_five_minutes_is_refused_for_threads(tenant: Tenant, platform: Platform) -> None:
    await connect_webhook(platform, tenant.project_id, RECEIVER, platform_name="threads")
    key = await stored(tenant, mp4(36, 64, 301), "video/mp4")
    error = await refused(tenant, platform, {"caption": "Long", "platforms": ["threads"], "r2_key": key})
    assert error["rule"] == "threads.video.max_seconds" and "at most 300 s" in error["message"]


async def test_a_facebook_video_must_be_the_post_s_only_media(tenant: Tenant, platform: Platform) -> None:
    await connect_webhook(platform, tenant.project_id, RECEIVER, platform_name="facebook")
    video = await stored(tenant, mp4(64, 36, 2), "video/mp4")
    image = await stored(tenant, jpeg(), "image/jpeg")
    error = await refused(tenant, platform, {"caption": "Mix", "platforms": ["facebook"], "r2_keys": [image, video]})
    assert error["rule"] == "facebook.video.alone"


def test_instagram_carousels_hold_ten_items_threads_twenty_and_facebook_photos_four_megabytes() -> None:
    def media(count: int, size: int = 1000) -> ResolvedMedia:
        return ResolvedMedia(
            entries=[{"r2_key": f"k{index}.jpg", "content_type": "image/jpeg"} for index in range(count)],
            names=[f"k{index}.jpg" for index in range(count)],
            known=[
                MediaObject(key=f"k{index}.jpg", content_type="image/jpeg", size=size, width=100, height=100)
                for index in range(count)
            ],
        )

    with pytest.raises(ValidationFailed) as instagram:
        rules.check_media_rules(["instagram"], media(11))
    assert instagram.value.details["rule"] == "instagram.max_items"
    rules.check_media_rules(["threads"], media(20))
    with pytest.raises(ValidationFailed) as threads:
        rules.check_media_rules(["threads"], media(21))
    assert threads.value.details["rule"] == "threads.max_items"
    with pytest.raises(ValidationFailed) as facebook:
        rules.check_media_rules(["facebook"], media(1, 5 * 1024 * 1024))
    assert facebook.value.details["rule"] == "facebook.image.max_bytes" and "at most 4 MB" in facebook.value.message
