"""What an operator sees: one JSON line per call from execute(), /metrics behind its token, redacted access lines."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import Tenant, settings_for_test
from tests.platform.test_mcp_fast_path import LEGACY, post, rpc
from toolhost.app import create_app
from toolhost.catalog import build_registry
from toolhost.config import Settings
from toolhost.platform import accounts
from toolhost.platform.observability import AccessLogRedaction, CallObserver, FinishedCall
from toolhost.platform.runtime import build_platform

METRICS_TOKEN = "metrics-token-for-tests-0123456789"
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    return settings_for_test(
        database_url=database_url, media={"root": str(tmp_path / "media")}, metrics={"token": METRICS_TOKEN}
    )


def call_lines(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    """The JSON lines written so far (the lines of calls that ended in one turn of the event loop share a record)."""
    return [
        json.loads(line)
        for record in caplog.records
        if record.name == "toolhost.calls"
        for line in record.getMessage().splitlines()
    ]


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a Prometheus text page by name and sorted labels."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


async def scrape(client: httpx.AsyncClient) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = await client.get("/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain; version=")
    return samples(response.text)


async def test_every_call_writes_one_json_line_whatever_its_transport(
    tenant: Tenant, client: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="toolhost.calls")
    ok = await tenant.call("get_credit_balance", headers={"X-Toolhost-Run": "run-7"})
    paid = await tenant.call("adapt_content", {"content": "Ship early, learn fast.", "target_platform": "linkedin"})
    refused = await tenant.call("adapt_content", {"target_platform": "linkedin"})
    over_mcp = await post(client, tenant, *rpc("tools/call", {"name": "get_credit_balance", "arguments": {}}, LEGACY))
    assert ok.status_code == 200 and paid.json()["isError"] is False and refused.status_code == 400
    assert over_mcp.status_code == 200

    await asyncio.sleep(0)  # the last call's line is written when the event loop's turn ends
    lines = call_lines(caplog)
    assert [(line["tool"], line["transport"], line["outcome"]) for line in lines] == [
        ("get_credit_balance", "rest", "ok"),
        ("adapt_content", "rest", "ok"),
        ("adapt_content", "rest", "error"),
        ("get_credit_balance", "mcp", "ok"),
    ]
    # Ids sort as the calls were made, in logs and in the usage table's index alike.
    assert [line["request_id"] for line in lines] == sorted(line["request_id"] for line in lines)
    first, second, third, _ = lines
    assert first["event"] == "tool_call" and first["run_id"] == "run-7"
    assert first["account_id"] == str(tenant.account_id) and first["project_id"] is None
    assert first["credential_id"] == str(tenant.key_id) and first["error_type"] is None
    assert first["credits"] == 0 and first["status"] == 200 and first["ms"] >= 0
    assert re.fullmatch(r"req_[0-9a-f]{32}", first["request_id"]) and first["time"].endswith("Z")
    assert second["credits"] == 1 and second["project_id"] == str(tenant.project_id)
    assert third["error_type"] == "validation_error" and third["status"] == 400 and third["credits"] == 0
    assert third["request_id"] == refused.json()["error"]["request_id"]
    assert tenant.key not in caplog.text


async def test_calls_made_at_once_each_get_their_own_line(tenant: Tenant, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="toolhost.calls")
    answers = await asyncio.gather(*(tenant.call("get_credit_balance") for _ in range(12)))
    await asyncio.sleep(0)

    assert all(answer.status_code == 200 for answer in answers)
    lines = call_lines(caplog)
    assert len(lines) == 12 and len({line["request_id"] for line in lines}) == 12
    assert all(line["tool"] == "get_credit_balance" and line["outcome"] == "ok" for line in lines)


def finished_call(request_id: str) -> FinishedCall:
    return FinishedCall(
        request_id=request_id,
        tool="get_credit_balance",
        known_tool=True,
        transport="rest",
        account_id=uuid.uuid4(),
        credential_id=None,
        project_id=None,
        run_id=None,
        outcome="ok",
        error_type=None,
        status=200,
        seconds=0.001,
        credits=0,
    )


async def test_the_lines_of_one_event_loop_turn_are_written_together_when_it_ends(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="toolhost.calls")
    observer = CallObserver()
    observer.finished(finished_call("req_first"))
    observer.finished(finished_call("req_second"))
    assert call_lines(caplog) == []

    await asyncio.sleep(0)
    assert len([record for record in caplog.records if record.name == "toolhost.calls"]) == 1
    assert [line["request_id"] for line in call_lines(caplog)] == ["req_first", "req_second"]

    observer.finished(finished_call("req_third"))
    await asyncio.sleep(0)
    assert [line["request_id"] for line in call_lines(caplog)] == ["req_first", "req_second", "req_third"]


async def test_a_platform_closing_writes_the_lines_still_waiting(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="toolhost.calls")
    platform = build_platform(settings, build_registry())
    platform.observer.finished(finished_call("req_last"))
    await platform.close()
    assert [line["request_id"] for line in call_lines(caplog)] == ["req_last"]


async def test_metrics_count_calls_by_tool_and_errors_by_type_and_time_each_tool(
    tenant: Tenant, client: httpx.AsyncClient
) -> None:
    await tenant.call("get_credit_balance")
    await tenant.call("get_credit_balance")
    await tenant.call("adapt_content", {"target_platform": "linkedin"})
    await tenant.call("no_such_tool_" + "x" * 50)

    found = await scrape(client)
    assert found[("toolhost_tool_calls_total", (("outcome", "ok"), ("tool", "get_credit_balance")))] == 2
    assert found[("toolhost_tool_calls_total", (("outcome", "error"), ("tool", "adapt_content")))] == 1
    assert found[("toolhost_tool_errors_total", (("error_type", "validation_error"), ("tool", "adapt_content")))] == 1
    # A made-up tool name is counted, under one label: callers cannot grow the series.
    assert found[("toolhost_tool_errors_total", (("error_type", "not_found"), ("tool", "unknown")))] == 1
    histogram = ("toolhost_tool_call_duration_seconds_count", (("tool", "get_credit_balance"),))
    assert found[histogram] == 2
    assert found[("toolhost_tool_call_duration_seconds_bucket", (("le", "+Inf"), ("tool", "get_credit_balance")))] == 2
    assert not any("no_such_tool" in str(labels) for _, labels in found)


async def test_metrics_need_the_token_and_an_install_without_one_refuses_everyone(
    client: httpx.AsyncClient, tenant: Tenant, database_url: str, tmp_path: Path
) -> None:
    assert (await client.get("/metrics")).status_code == 401
    wrong = await client.get("/metrics", headers={"Authorization": "Bearer not-the-token"})
    assert wrong.status_code == 401 and wrong.json()["error"]["error_type"] == "unauthenticated"
    as_a_tenant = await client.get("/metrics", headers=tenant.headers)
    assert as_a_tenant.status_code == 401

    default = create_app(settings_for_test(database_url=database_url, media={"root": str(tmp_path / "other")}))
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=default), base_url="http://testserver") as other:
            refused = await other.get("/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
    finally:
        await default.state.platform.close()
    assert refused.status_code == 403
    assert "TOOLHOST_METRICS__TOKEN" in refused.json()["error"]["message"]


def uvicorn_access_record(target: str) -> logging.LogRecord:
    """An access record as uvicorn's protocols make it: client, method, path with query, HTTP version, status."""
    return logging.LogRecord(
        "uvicorn.access",
        logging.INFO,
        __file__,
        1,
        '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5000", "GET", target, "1.1", 401),
        None,
    )


@pytest.mark.parametrize(
    ("target", "shown"),
    [
        ("/v1/tools?api_key=thk_live_abcdefghijklmnopqrstuvwx", "/v1/tools?api_key=[REDACTED]"),
        ("/v1/tools?scope=mcp:read&token=opaque-value", "/v1/tools?scope=mcp:read&token=[REDACTED]"),
        ("/media/a/b.png?exp=1900000000&sig=0f3a9c", "/media/a/b.png?exp=1900000000&sig=[REDACTED]"),
        ("/v1/tools?q=thk_live_abcdefghijklmnopqrstuvwx", "/v1/tools?q=[REDACTED:toolhost_key]"),
        ("/v1/tools/thk_live_abcdefghijklmnopqrstuvwx", "/v1/tools/[REDACTED:toolhost_key]"),
        ("/docs/guides/quickstart", "/docs/guides/quickstart"),
    ],
)
def test_access_lines_never_show_a_credential_sent_in_the_url(target: str, shown: str) -> None:
    record = uvicorn_access_record(target)
    assert AccessLogRedaction().filter(record)
    assert record.getMessage() == f'127.0.0.1:5000 - "GET {shown} HTTP/1.1" 401'


@pytest.mark.postgres
async def test_a_call_on_postgresql_writes_its_line_and_answers(
    postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    # asyncpg returns ids as its own UUID type: a line that could not be written failed every call with a 500.
    caplog.set_level(logging.INFO, logger="toolhost.calls")
    settings = settings_for_test(database_url=postgres_url)
    platform = build_platform(settings, build_registry())
    try:
        async with platform.session_factory() as session, session.begin():
            account = await accounts.create_account(session, name="lines", tier="agency", settings=settings)
            issued = await accounts.create_key(
                session, account_id=account.id, name="k", granted_scopes=["mcp:read"], settings=settings
            )
        app = create_app(settings, platform)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver") as http:
            answer = await http.post(
                "/v1/tools/get_credit_balance", headers={"Authorization": f"Bearer {issued.plaintext}"}
            )
        assert answer.status_code == 200, answer.text
    finally:
        await platform.close()
    [line] = call_lines(caplog)
    assert line["account_id"] == str(account.id) and line["credential_id"] == str(issued.key.id)
