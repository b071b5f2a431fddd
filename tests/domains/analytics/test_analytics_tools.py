"""The analytics tools over HTTP: figures from the latest snapshots only, honest emptiness, bad input, tenancy."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx

from tests.conftest import Tenant, TenantFactory
from tests.domains.analytics.conftest import now, open_channel
from toolhost.platform.runtime import Platform


async def test_fetch_analytics_without_posts_says_there_is_no_data(tenant: Tenant) -> None:
    response = await tenant.call("fetch_analytics", {})
    body = response.json()
    assert response.status_code == 200 and not body["isError"]
    assert body["structuredContent"]["totalViews"] == 0
    assert body["structuredContent"]["posts"] == []
    assert "no analytics yet" in body["content"][0]["text"]


async def test_fetch_analytics_uses_the_latest_snapshot_per_post_never_a_sum(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform
) -> None:
    channel = await open_channel(platform, client, tenant.project_id, tenant.account_id)
    first = await channel.published(at=now() - timedelta(days=2), caption="Why hooks matter? More text.")
    second = await channel.published(at=now() - timedelta(days=1), caption="Second")
    unmeasured = await channel.published(at=now() - timedelta(hours=5), caption="Third")
    await channel.push(first, views=100, likes=5, comments=1, shares=0)
    await channel.push(first, views=250, likes=10, comments=2, shares=3)
    await channel.push(second, views=400, likes=1, comments=0, shares=0)

    data = await tenant.data("fetch_analytics", {"response_format": "json"})
    assert data["totalViews"] == 650
    assert data["totalEngagement"] == 15 + 1
    assert (data["postCount"], data["postsWithMetrics"]) == (3, 2)
    assert [post["id"] for post in data["posts"]] == [str(second.id), str(first.id), str(unmeasured.id)]
    assert data["posts"][1]["title"] == "Why hooks matter?"
    assert data["posts"][2]["captured_at"] is None

    one = await tenant.data("fetch_analytics", {"content_id": str(first.id)})
    assert (one["postCount"], one["totalViews"]) == (1, 250)
    other_platform = await tenant.data("fetch_analytics", {"platform": "linkedin"})
    assert other_platform["postCount"] == 0


async def test_analytics_tools_refuse_bad_arguments(tenant: Tenant) -> None:
    cases = [
        ("fetch_analytics", {"days": 0}),
        ("fetch_analytics", {"days": 366}),
        ("fetch_analytics", {"platform": "myspace"}),
        ("fetch_analytics", {"content_id": "not-a-uuid"}),
        ("fetch_analytics", {"limit": 101}),
        ("get_best_posting_times", {"days": 91}),
        ("get_performance_insights", {"insight_type": "vibes"}),
        ("generate_performance_digest", {"period": "3d"}),
        ("detect_anomalies", {"days": 6}),
        ("detect_anomalies", {"sensitivity": "extreme"}),
        ("detect_anomalies", {"platforms": ["twitter", "orkut"]}),
        ("fetch_youtube_analytics", {"action": "channel", "start_date": "2026-13-01", "end_date": "2026-01-02"}),
        ("fetch_youtube_analytics", {"action": "weekly", "start_date": "2026-01-01", "end_date": "2026-01-02"}),
    ]
    for name, arguments in cases:
        response = await tenant.call(name, arguments)
        assert response.status_code == 400, (name, arguments, response.text)
        assert response.json()["error"]["error_type"] == "validation_error"


async def test_another_tenants_project_is_not_found_and_its_metrics_never_leak(
    tenant: Tenant, make_tenant: TenantFactory, client: httpx.AsyncClient, platform: Platform
) -> None:
    channel = await open_channel(platform, client, tenant.project_id, tenant.account_id)
    post = await channel.published(at=now() - timedelta(days=1))
    await channel.push(post, views=999, likes=9, comments=9, shares=9)
    stranger = await make_tenant()
    for name in ("fetch_analytics", "get_best_posting_times", "get_loop_summary", "generate_performance_digest"):
        response = await stranger.call(name, {"project_id": str(tenant.project_id)})
        assert response.status_code == 404, (name, response.text)
        assert response.json()["error"]["error_type"] == "not_found"
    assert (await stranger.data("fetch_analytics", {}))["totalViews"] == 0
    digest = await stranger.data("generate_performance_digest", {})
    assert digest["metrics"]["total_views"] == 0 and digest["has_data"] is False
    leaked = await stranger.data("fetch_analytics", {"content_id": str(post.id)})
    assert leaked["postCount"] == 0


async def test_best_posting_times_rank_utc_slots_by_average_engagement(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform
) -> None:
    channel = await open_channel(platform, client, tenant.project_id, tenant.account_id)
    base = (now() - timedelta(days=3)).replace(hour=9, minute=0, second=0, microsecond=0)
    morning = [await channel.published(at=base), await channel.published(at=base + timedelta(minutes=20))]
    evening = await channel.published(at=base.replace(hour=18))
    await channel.published(at=base.replace(hour=20))  # no snapshot: not analysed
    await channel.push(morning[0], views=10, likes=10, comments=0, shares=0)
    await channel.push(morning[1], views=10, likes=30, comments=0, shares=0)
    await channel.push(evening, views=10, likes=5, comments=0, shares=0)

    data = await tenant.data("get_best_posting_times", {"platform": "twitter"})
    day = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")[base.weekday()]
    assert data["recordsAnalyzed"] == 3
    assert data["slots"] == [
        {"platform": "twitter", "day_of_week": day, "hour": 9, "avg_engagement": 20.0, "sample_size": 2},
        {"platform": "twitter", "day_of_week": day, "hour": 18, "avg_engagement": 5.0, "sample_size": 1},
    ]


async def test_digest_compares_with_the_previous_period_and_recommends(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform
) -> None:
    channel = await open_channel(platform, client, tenant.project_id, tenant.account_id)
    before = await channel.published(at=now() - timedelta(days=10), caption="Old post")
    recent = await channel.published(at=now() - timedelta(days=2), caption="How to win? A guide")
    quiet = await channel.published(at=now() - timedelta(days=1), caption="Quiet post")
    await channel.push(before, views=100, likes=10, comments=0, shares=0)
    await channel.push(recent, views=300, likes=3, comments=0, shares=0)
    await channel.push(quiet, views=50, likes=0, comments=0, shares=0)

    data = await tenant.data("generate_performance_digest", {"period": "7d"})
    metrics = data["metrics"]
    assert (metrics["total_posts"], metrics["total_views"], metrics["total_engagement"]) == (2, 350, 3)
    assert metrics["avg_engagement_rate"] == 0.86
    assert metrics["best_performing"]["id"] == str(recent.id)
    assert metrics["worst_performing"]["id"] == str(quiet.id)
    assert data["trends"]["views"] == {"direction": "up", "change_pct": 250.0}
    assert data["trends"]["engagement"] == {"direction": "down", "change_pct": -70.0}
    text = " ".join(data["recommendations"])
    assert "interactive" in text and "post more" in text and "diversify" in text and "replicate" in text
    assert data["winning_patterns"]["hook_types"] == ["question"]


async def test_digest_without_metrics_says_so_instead_of_inventing_numbers(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform
) -> None:
    channel = await open_channel(platform, client, tenant.project_id, tenant.account_id)
    await channel.published(at=now() - timedelta(days=1))
    data = await tenant.data("generate_performance_digest", {})
    assert data["has_data"] is False
    assert data["metrics"]["best_performing"] is None
    assert any("No metrics" in line for line in data["recommendations"])


async def test_detect_anomalies_reports_a_spike_and_a_viral_post(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform
) -> None:
    channel = await open_channel(platform, client, tenant.project_id, tenant.account_id)
    old = await channel.published(at=now() - timedelta(days=20))
    new = await channel.published(at=now() - timedelta(days=2))
    await channel.push(old, views=100, likes=10, comments=0, shares=0)
    await channel.push(new, views=5000, likes=12, comments=0, shares=0)

    data = await tenant.data("detect_anomalies", {"days": 14, "sensitivity": "medium"})
    found = {(anomaly["type"], anomaly["metric"]): anomaly for anomaly in data["anomalies"]}
    assert found[("spike", "views")]["magnitude"] == 4900.0
    assert found[("spike", "views")]["confidence"] == 1.0
    assert found[("viral", "views")]["magnitude"] == 50.0
    assert found[("spike", "views")]["affected_posts"][0]["id"] == str(new.id)
    assert ("spike", "engagement") not in found  # +20 % is under the medium threshold
    low = await tenant.data("detect_anomalies", {"days": 14, "sensitivity": "high"})
    assert any(item["metric"] == "engagement" for item in low["anomalies"])


async def test_insights_need_three_measured_posts(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform
) -> None:
    channel = await open_channel(platform, client, tenant.project_id, tenant.account_id)
    posts = [
        await channel.published(at=now() - timedelta(days=day), caption=caption)
        for day, caption in ((1, "Why now? Read on"), (2, "5 tips for reach"), (3, "A plain statement."))
    ]
    await channel.push(posts[0], views=100, likes=40, comments=0, shares=0)
    await channel.push(posts[1], views=100, likes=20, comments=0, shares=0)
    empty = await tenant.call("get_performance_insights", {})
    assert empty.json()["structuredContent"]["insights"] == []
    assert "No insights yet" in empty.json()["content"][0]["text"]

    await channel.push(posts[2], views=100, likes=1, comments=0, shares=0)
    data = await tenant.data("get_performance_insights", {"insight_type": "top_hooks"})
    assert [row["insight_type"] for row in data["insights"]] == ["top_hooks"]
    hooks = data["insights"][0]["insight_data"]["hooks"]
    assert [hook["hook"] for hook in hooks] == ["Why now?", "5 tips for reach", "A plain statement."]
    assert [hook["hook_type"] for hook in hooks] == ["question", "number", "statement"]
    every = await tenant.data("get_performance_insights", {})
    assert {row["insight_type"] for row in every["insights"]} == {"top_hooks", "optimal_timing"}


async def test_loop_summary_recommends_the_first_missing_step(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform
) -> None:
    data = await tenant.data("get_loop_summary", {})
    assert data["brandStatus"] == {"hasProfile": False, "brandName": None, "version": None, "updatedAt": None}
    assert "extract_brand" in data["recommendedNextAction"]
    channel = await open_channel(platform, client, tenant.project_id, tenant.account_id)
    post = await channel.published(at=datetime(2026, 1, 5, 12, tzinfo=UTC))
    await channel.push(post, views=7, likes=1, comments=0, shares=0)
    data = await tenant.data("get_loop_summary", {})
    assert data["recentContent"][0]["metrics"]["views"] == 7


async def test_refresh_counts_webhook_posts_as_pushed_and_queues_nothing(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform
) -> None:
    channel = await open_channel(platform, client, tenant.project_id, tenant.account_id)
    await channel.published(at=now() - timedelta(days=1))
    await channel.published(at=now() - timedelta(days=9))  # older than 7 days: not refreshed
    data = await tenant.data("refresh_platform_analytics", {})
    assert data == {
        "success": True,
        "postsProcessed": 1,
        "queued": 0,
        "errored": 0,
        "pushed": 1,
        "projectId": str(tenant.project_id),
    }


async def test_analytics_scope_is_required_for_refresh_digest_and_anomalies(make_tenant: TenantFactory) -> None:
    reader = await make_tenant(scopes=["mcp:read"])
    for name in ("refresh_platform_analytics", "generate_performance_digest", "detect_anomalies"):
        response = await reader.call(name, {})
        assert response.status_code == 403, name
    assert (await reader.call("fetch_analytics", {})).status_code == 200


async def test_youtube_analytics_without_a_youtube_connector_is_a_validation_error(tenant: Tenant) -> None:
    response = await tenant.call(
        "fetch_youtube_analytics", {"action": "channel", "start_date": "2026-01-01", "end_date": "2026-01-31"}
    )
    body = response.json()
    assert body["isError"] and body["error"]["error_type"] == "validation_error"
    assert "youtube connector" in body["error"]["message"]
    reversed_dates = await tenant.call(
        "fetch_youtube_analytics", {"action": "channel", "start_date": "2026-02-01", "end_date": "2026-01-31"}
    )
    assert reversed_dates.json()["error"]["error_type"] == "validation_error"
