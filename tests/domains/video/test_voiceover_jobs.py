"""generate_voiceover through HTTP: enqueue and wait, resume_task_id, the poller run directly, the WAV served."""

from __future__ import annotations

import asyncio
import io
import shutil
import uuid
import wave
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select

from tests.conftest import Tenant, TenantFactory, settings_for_test, worker_context
from toolhost.config import Settings
from toolhost.domains.video import voice
from toolhost.platform import jobs
from toolhost.platform.jobs import Job, WorkerContext
from toolhost.platform.models import Account
from toolhost.platform.runtime import Platform

needs_espeak = pytest.mark.skipif(
    shutil.which("espeak-ng") is None, reason="espeak-ng is not installed (apt-get install espeak-ng)"
)
TEXT = "Plan the week in ten minutes, then ship every day without a single status meeting."


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    """The tool answers pending at once (wait 0): the test runs the poller itself, then resumes."""
    return settings_for_test(
        database_url=database_url, media={"root": str(tmp_path / "media")}, voice={"wait_seconds": 0}
    )


def worker(platform: Platform) -> WorkerContext:
    return worker_context(platform, "test")


async def balance(platform: Platform, tenant: Tenant) -> int:
    async with platform.session_factory() as session:
        return int(await session.scalar(select(Account.credit_balance).where(Account.id == tenant.account_id)) or 0)


async def job_count(platform: Platform) -> int:
    async with platform.session_factory() as session:
        return int(await session.scalar(select(func.count()).select_from(Job)) or 0)


async def served_wav(client: httpx.AsyncClient, url: str) -> float:
    response = await client.get(url.removeprefix("http://testserver"))
    assert response.status_code == 200
    with wave.open(io.BytesIO(response.content), "rb") as audio:
        return audio.getnframes() / audio.getframerate()


@needs_espeak
async def test_a_pending_voiceover_is_resumed_to_a_signed_wav_and_charged_once(
    tenant: Tenant, platform: Platform, client: httpx.AsyncClient
) -> None:
    before = await balance(platform, tenant)
    pending = await tenant.data("generate_voiceover", {"text": TEXT, "voice": "daniel"})
    assert pending["status"] == "pending" and pending["taskId"] == pending["resumeTaskId"]
    assert "resume_task_id" in pending["message"]
    assert await balance(platform, tenant) == before - 3

    assert await jobs.run_jobs(worker(platform)) == 1
    done = await tenant.data("generate_voiceover", {"resume_task_id": pending["taskId"]})
    assert done["status"] == "completed" and done["voice"] == "daniel" and done["jobId"] == pending["taskId"]
    assert done["projectId"] == str(tenant.project_id)
    assert done["r2_key"].startswith(f"projects/{tenant.project_id}/voiceover/") and done["r2_key"].endswith(".wav")
    seconds = await served_wav(client, done["audioUrl"])
    assert seconds == pytest.approx(done["durationSeconds"], abs=0.01) and seconds > 2
    status = await tenant.data("check_status", {"job_id": pending["taskId"]})
    assert status["job_type"] == "voiceover" and status["billing_status"] == "charged"
    # Resuming again answers the same result without a new job or debit.
    again = await tenant.data("generate_voiceover", {"resume_task_id": pending["taskId"]})
    assert again["r2_key"] == done["r2_key"]
    assert await balance(platform, tenant) == before - 3 and await job_count(platform) == 1


@needs_espeak
async def test_the_call_waits_for_a_worker_that_finishes_within_the_wait(
    tenant: Tenant, platform: Platform, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(platform.settings.voice, "wait_seconds", 30)
    monkeypatch.setattr(platform.settings.voice, "poll_seconds", 0.02)

    async def work_when_queued() -> None:
        async with asyncio.timeout(20):
            while await jobs.run_jobs(worker(platform)) == 0:
                await asyncio.sleep(0.02)

    response, _ = await asyncio.gather(tenant.call("generate_voiceover", {"text": "Hello there."}), work_when_queued())
    body = response.json()
    assert response.status_code == 200 and body["structuredContent"]["status"] == "completed", body
    assert "Voiceover ready" in body["content"][0]["text"]


@needs_espeak
async def test_speed_scales_the_speaking_rate(tenant: Tenant, platform: Platform) -> None:
    slow = await tenant.data("generate_voiceover", {"text": TEXT, "speed": 0.5})
    fast = await tenant.data("generate_voiceover", {"text": TEXT, "speed": 2.0})
    for _ in range(2):
        await jobs.run_jobs(worker(platform))
    slow_done = await tenant.data("generate_voiceover", {"resume_task_id": slow["taskId"]})
    fast_done = await tenant.data("generate_voiceover", {"resume_task_id": fast["taskId"]})
    assert slow_done["durationSeconds"] > 2.5 * fast_done["durationSeconds"]


def test_voices_and_speed_map_to_espeak_arguments(settings: Settings) -> None:
    assert voice.espeak_voice(settings, "charlotte") == "en-gb+f2"
    assert voice.espeak_voice(settings, "adam") == "en-us+m1"
    assert (voice.rate(1.0), voice.rate(0.5), voice.rate(2.0)) == (175, 88, 350)


async def test_without_espeak_ng_the_tool_names_the_binary_and_charges_nothing(
    tenant: Tenant, platform: Platform, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(platform.settings.voice, "espeak_binary", "/nonexistent/espeak-ng")
    before = await balance(platform, tenant)
    response = await tenant.call("generate_voiceover", {"text": TEXT})
    error = response.json()["error"]
    assert error["error_type"] == "validation_error"
    assert "espeak-ng" in error["message"] and "apt-get install espeak-ng" in error["message"]
    assert await balance(platform, tenant) == before and await job_count(platform) == 0


async def test_a_failed_synthesis_is_an_upstream_error_refunded_once(
    tenant: Tenant, platform: Platform, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(platform.settings.voice, "espeak_binary", shutil.which("false") or "/bin/false")
    before = await balance(platform, tenant)
    pending = await tenant.data("generate_voiceover", {"text": TEXT})
    await jobs.run_jobs(worker(platform))
    failed = (await tenant.call("generate_voiceover", {"resume_task_id": pending["taskId"]})).json()
    assert failed["error"]["error_type"] == "upstream_error" and "refunded" in failed["error"]["message"]
    status = await tenant.data("check_status", {"job_id": pending["taskId"]})
    assert status["failure_reason"] == "generation_failed" and status["billing_status"] == "refunded"
    async with platform.session_factory() as session, session.begin():
        job = await session.get(Job, uuid.UUID(pending["taskId"]))
        assert job is not None
        assert await jobs.refund(session, job) == 0
    assert await balance(platform, tenant) == before


async def test_resume_task_id_of_another_tenant_or_another_job_type_is_not_found(
    tenant: Tenant, make_tenant: TenantFactory, platform: Platform, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Any executable will do: the job is never run, so this holds on machines without espeak-ng too.
    monkeypatch.setattr(platform.settings.voice, "espeak_binary", shutil.which("true") or "/bin/true")
    mine = await tenant.data("generate_voiceover", {"text": TEXT})
    image = await tenant.data("generate_image", {"prompt": "Hello"})
    other = await make_tenant()
    foreign = await other.call("generate_voiceover", {"resume_task_id": mine["taskId"]})
    assert foreign.status_code == 404
    wrong_type = await tenant.call("generate_voiceover", {"resume_task_id": image["jobId"]})
    assert wrong_type.status_code == 404
    garbage = await tenant.call("generate_voiceover", {"resume_task_id": "task_123"})
    assert garbage.status_code == 404


@pytest.mark.parametrize(
    ("arguments", "path"),
    [
        ({}, "text"),
        ({"text": "x" * 5001}, "text"),
        ({"text": "Hi", "voice": "alice"}, "voice"),
        ({"text": "Hi", "speed": 2.5}, "speed"),
        ({"text": "Hi", "speed": 0.4}, "speed"),
    ],
)
async def test_bad_input_is_refused_before_any_spend(
    tenant: Tenant, platform: Platform, arguments: dict[str, object], path: str
) -> None:
    before = await balance(platform, tenant)
    body = (await tenant.call("generate_voiceover", arguments)).json()
    assert body["error"]["error_type"] == "validation_error", body
    assert path in [error["path"] for error in body["error"]["field_errors"]]
    assert await balance(platform, tenant) == before and await job_count(platform) == 0


async def test_several_projects_without_project_id_ask_for_one(make_tenant: TenantFactory, platform: Platform) -> None:
    tenant = await make_tenant(projects=2)
    body = (await tenant.call("generate_voiceover", {"text": TEXT})).json()
    assert body["error"]["error_type"] == "validation_error" and len(body["error"]["projects"]) == 2
    assert await job_count(platform) == 0


@needs_espeak
async def test_resuming_takes_no_rate_limit_token(tenant: Tenant, platform: Platform) -> None:
    pending = await tenant.data("generate_voiceover", {"text": TEXT})
    await jobs.run_jobs(worker(platform))
    platform.settings.ratelimit.enabled = True
    platform.settings.ratelimit.tool_per_minute["generate_voiceover"] = 1
    resumed = [await tenant.call("generate_voiceover", {"resume_task_id": pending["taskId"]}) for _ in range(3)]
    assert [response.status_code for response in resumed] == [200, 200, 200]
    assert all(response.json()["structuredContent"]["status"] == "completed" for response in resumed)
    assert (await tenant.call("generate_voiceover", {"text": TEXT})).status_code == 200
    limited = await tenant.call("generate_voiceover", {"text": TEXT})
    assert limited.status_code == 429
