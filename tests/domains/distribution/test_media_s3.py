"""The S3-compatible media store against a local S3 stand-in: same keys, signed URLs served by toolhost."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from botocore.exceptions import ClientError
from pydantic import ValidationError

from tests.conftest import Tenant, worker_context
from tests.domains.distribution.conftest import bucket_client, drain, local_settings, s3_media
from tests.domains.distribution.standins import MastodonStandIn, serve
from tests.domains.distribution.test_connectors import connect, png_bytes, upload
from toolhost.config import MediaSettings, Settings
from toolhost.domains.media import retention
from toolhost.domains.media import service as media_service
from toolhost.domains.media import storage as media_storage
from toolhost.platform.jobs import WorkerContext
from toolhost.platform.runtime import Platform


@pytest.fixture
def media(s3_endpoint: str, tmp_path: Path) -> dict[str, Any]:
    return s3_media(s3_endpoint, tmp_path / "media")


@pytest.fixture
def settings(database_url: str, media: dict[str, Any]) -> Settings:
    return local_settings(database_url, Path(media["root"]), media=media)


def signed_path(settings: Settings, key: str) -> str:
    return media_service.signed_url(settings, key, ttl=60).removeprefix(settings.api_root)


async def test_an_upload_lands_in_the_bucket_under_its_key_and_toolhost_serves_it_signed(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform, media: dict[str, Any]
) -> None:
    data = png_bytes()
    key = await upload(tenant, data, "image/png")
    assert key.startswith(f"projects/{tenant.project_id}/uploads/")
    stored = bucket_client(media).get_object(Bucket=media["s3_bucket"], Key=key)
    assert stored["Body"].read() == data
    assert not Path(media["root"]).exists(), "nothing is written to the local root"

    fresh = await tenant.data("get_media_url", {"r2_key": key})
    path = fresh["signed_url"].removeprefix("http://testserver")
    served = await client.get(path)
    assert (served.status_code, served.content) == (200, data)
    assert served.headers["content-type"] == "image/png"
    assert served.headers["content-length"] == str(len(data))

    ranged = await client.get(path, headers={"Range": "bytes=0-7"})
    assert (ranged.status_code, ranged.content) == (206, data[:8])
    assert ranged.headers["content-range"] == f"bytes 0-7/{len(data)}"
    suffix = await client.get(path, headers={"Range": "bytes=-4"})
    assert (suffix.status_code, suffix.content) == (206, data[-4:])
    beyond = await client.get(path, headers={"Range": f"bytes={len(data) + 10}-"})
    assert beyond.status_code == 416
    head = await client.head(path)
    assert (head.status_code, head.headers["content-length"], head.content) == (200, str(len(data)), b"")

    assert (await client.get(path[:-1] + ("0" if path[-1] != "0" else "1"))).status_code == 403
    missing = key.replace(key.rsplit("/", 1)[1], f"{uuid.uuid4()}.png")
    assert (await client.get(signed_path(platform.settings, missing))).status_code == 404


async def test_the_s3_store_reads_and_deletes_by_key(platform: Platform, media: dict[str, Any]) -> None:
    store = media_service.store(platform.settings)
    key = f"accounts/{uuid.uuid4()}/uploads/2030/01/{uuid.uuid4()}.png"
    await store.put(key, b"\x89PNG-bytes")
    assert await store.exists(key)
    assert await store.read(key) == b"\x89PNG-bytes"
    await store.delete(key)
    assert not await store.exists(key)
    with pytest.raises(FileNotFoundError):
        await store.read(key)
    with pytest.raises(ClientError):
        bucket_client(media).head_object(Bucket=media["s3_bucket"], Key=key)
    with pytest.raises(KeyError):
        await store.put("../../etc/passwd", b"")


async def test_a_connector_uploads_media_it_reads_from_the_bucket(
    tenant: Tenant, platform: Platform, worker: WorkerContext
) -> None:
    stand_in = MastodonStandIn()
    async with serve(stand_in.app()) as base:
        await connect(
            platform,
            tenant.project_id,
            "mastodon",
            "mastodon",
            {"instance_url": base, "access_token": stand_in.token},
        )
        key = await upload(tenant, png_bytes(), "image/png")
        await tenant.data("schedule_post", {"caption": "From the bucket", "platforms": ["mastodon"], "r2_key": key})
        await drain(worker)
    [status] = stand_in.statuses.values()
    assert status["media_ids"] == ["1"]
    assert stand_in.media["1"]["head"].startswith(b"\x89PNG")


async def test_objects_no_row_names_are_swept_from_the_bucket_once_past_the_grace_period(
    tenant: Tenant, platform: Platform, media: dict[str, Any]
) -> None:
    named = await upload(tenant, png_bytes(), "image/png")
    # Its row went and the store's deletion failed: a file no row names.
    orphaned = media_storage.new_key(
        project_id=tenant.project_id, account_id=tenant.account_id, kind="image", content_type="image/png"
    )
    await media_service.store(platform.settings).put(orphaned, png_bytes())
    bucket = bucket_client(media)
    bucket.put_object(Bucket=media["s3_bucket"], Key="projects/backups/readme.txt", Body=b"not toolhost's")
    worker = worker_context(platform, f"w-{uuid.uuid4()}")
    store = media_service.store(platform.settings)

    assert await retention.sweep_orphans(worker) == 0  # written just now: inside the grace period
    platform.settings.media.orphan_grace_seconds = 0
    assert await retention.sweep_orphans(worker) == 1
    assert not await store.exists(orphaned)
    assert await store.exists(named)
    assert bucket.get_object(Bucket=media["s3_bucket"], Key="projects/backups/readme.txt")["Body"].read()


def test_an_s3_store_without_a_bucket_is_refused_at_start() -> None:
    with pytest.raises(ValidationError, match="s3_bucket"):
        MediaSettings(store="s3")
