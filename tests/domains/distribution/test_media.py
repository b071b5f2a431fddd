"""upload_media and get_media_url through HTTP, and the signed media route."""

from __future__ import annotations

import base64
import io
import uuid

import httpx
import pytest
from PIL import Image
from sqlalchemy import select
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tests.conftest import Tenant, TenantFactory
from tests.domains.distribution.standins import serve
from toolhost.domains.media import service as media_service
from toolhost.domains.media.models import MediaObject
from toolhost.platform.jobs import Job
from toolhost.platform.runtime import Platform
from toolhost.providers.media_store import LocalMediaStore


def png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (4, 4), (0, 120, 200)).save(buffer, format="PNG")
    return buffer.getvalue()


def encoded(data: bytes) -> str:
    return base64.b64encode(data).decode()


async def test_an_uploaded_png_is_served_behind_a_signed_expiring_url(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform
) -> None:
    data = png()
    uploaded = await tenant.data("upload_media", {"file_data": "data:image/png;base64," + encoded(data)})
    key = uploaded["r2_key"]
    assert key.startswith(f"projects/{tenant.project_id}/uploads/")
    assert key.endswith(".png")
    assert (uploaded["size"], uploaded["content_type"], uploaded["expires_in"]) == (
        len(data),
        "image/png",
        3600,
    )
    path = uploaded["signed_url"].removeprefix("http://testserver")
    served = await client.get(path)
    assert served.status_code == 200
    assert served.content == data
    assert served.headers["content-type"] == "image/png"
    ranged = await client.get(path, headers={"Range": "bytes=0-7"})
    assert ranged.status_code == 206
    assert ranged.content == data[:8]

    tampered = path[:-1] + ("0" if path[-1] != "0" else "1")
    assert (await client.get(tampered)).status_code == 403
    expired = media_service.signed_url(platform.settings, key, ttl=-1).removeprefix("http://testserver")
    assert (await client.get(expired)).status_code == 403
    missing = key.replace(key.rsplit("/", 1)[1], f"{uuid.uuid4()}.png")
    response = await client.get(media_service.signed_url(platform.settings, missing).removeprefix("http://testserver"))
    assert response.status_code == 404

    fresh = await tenant.data("get_media_url", {"r2_key": "r2://" + key})
    assert fresh["r2_key"] == key
    assert (await client.get(fresh["signed_url"].removeprefix("http://testserver"))).content == data


async def test_bad_uploads_get_validation_errors_and_store_nothing(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform
) -> None:
    async def error(arguments: dict[str, object]) -> tuple[int, dict[str, object]]:
        response = await tenant.call("upload_media", arguments)
        body = response.json()
        assert body["isError"], body
        return response.status_code, body["structuredContent"]["error"]

    _, problem = await error({"file_data": encoded(png()), "content_type": "video/mp4"})
    assert problem["error_type"] == "validation_error"
    assert "not the declared video/mp4" in str(problem["message"])
    _, problem = await error({"file_data": encoded(png()).replace("+", "-") + "-_", "file_name": "a.png"})
    assert problem["error_type"] == "validation_error"
    _, problem = await error(
        {"file_data": encoded(b"\x00" * (10 * 1024 * 1024 + 300_000)), "content_type": "image/png"}
    )
    assert problem["error_type"] == "validation_error"
    status, problem = await error({"file_data": "A" * (20 * 1024 * 1024), "content_type": "image/png"})
    assert status in (400, 413)
    assert problem["error_type"] == "validation_error"
    _, problem = await error({"source": "/etc/passwd"})
    assert problem["error_type"] == "validation_error"
    _, problem = await error({"source": "https://10.0.0.5/image.png"})
    assert "private" in str(problem["message"])
    _, problem = await error({"file_data": encoded(png()), "source": "https://example.com/a.png"})
    assert problem["error_type"] == "validation_error"
    assert not (platform.settings.media.root / "projects").exists()


async def test_an_uploads_row_commits_before_its_file_is_written_and_a_failed_write_leaves_neither(
    tenant: Tenant, platform: Platform, monkeypatch: pytest.MonkeyPatch
) -> None:
    write = LocalMediaStore.put
    committed_at_write: list[bool] = []

    async def observed_write(store: LocalMediaStore, key: str, data: bytes) -> None:
        async with platform.session_factory() as other:  # a connection of its own sees committed rows only
            committed_at_write.append(await other.scalar(select(MediaObject).where(MediaObject.key == key)) is not None)
        await write(store, key, data)

    monkeypatch.setattr(LocalMediaStore, "put", observed_write)
    kept = (await tenant.data("upload_media", {"file_data": encoded(png()), "content_type": "image/png"}))["r2_key"]
    assert committed_at_write == [True]

    async def failed_write(store: LocalMediaStore, key: str, data: bytes) -> None:
        raise OSError("no space left on device")

    monkeypatch.setattr(LocalMediaStore, "put", failed_write)
    response = await tenant.call("upload_media", {"file_data": encoded(png()), "content_type": "image/png"})
    assert response.status_code == 500 and response.json()["error"]["error_type"] == "server_error"
    async with platform.session_factory() as session:
        assert list(await session.scalars(select(MediaObject.key))) == [kept]
    root = media_service.store(platform.settings)
    assert isinstance(root, LocalMediaStore)
    assert [path.relative_to(root.root).as_posix() for path in root.root.rglob("*") if path.is_file()] == [kept]


async def test_an_upload_by_url_is_fetched_checked_and_stored(tenant: Tenant) -> None:
    data = png()

    async def image(request: Request) -> Response:
        return Response(data, media_type="image/png")

    async with serve(Starlette(routes=[Route("/pic.png", image)])) as base:
        uploaded = await tenant.data("upload_media", {"source": f"{base}/pic.png"})
    assert uploaded["size"] == len(data)
    assert uploaded["content_type"] == "image/png"


async def test_media_of_another_tenant_and_unfinished_jobs_are_refused(
    tenant: Tenant, make_tenant: TenantFactory, platform: Platform
) -> None:
    uploaded = await tenant.data("upload_media", {"file_data": encoded(png()), "file_name": "logo.png"})
    other = await make_tenant()
    response = await other.call("get_media_url", {"r2_key": uploaded["r2_key"]})
    assert response.json()["structuredContent"]["error"]["error_type"] == "not_found"
    async with platform.session_factory() as session, session.begin():
        job = Job(account_id=tenant.account_id, project_id=tenant.project_id, job_type="image", status="processing")
        session.add(job)
    response = await tenant.call("get_media_url", {"job_id": str(job.id)})
    problem = response.json()["structuredContent"]["error"]
    assert (problem["error_type"], problem["current_status"]) == ("conflict", "processing")
    response = await other.call("get_media_url", {"r2_key": str(job.id)})
    assert response.json()["structuredContent"]["error"]["error_type"] == "not_found"
