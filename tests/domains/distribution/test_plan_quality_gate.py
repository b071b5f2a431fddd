"""schedule_content_plan's quality gate reads the brand: its avoid patterns and banned terms block."""

from __future__ import annotations

import copy

from tests.conftest import Tenant
from tests.domains.distribution.conftest import connect_webhook
from tests.providers.text.brands import BRANDS
from toolhost.platform.runtime import Platform

# Not the post this was before ("Status meetings eat 4 hours of focus time per person every week. Try one week of
# async updates with your remote team and reply with what changed."), which the gate's reading model blocks: its
# first sentence is nearly the pain point the old built-in writer pasted into the failed posts it learned from
# (bench/README.md lists it among the gate's known errors).
CLEAN = (
    "A weekly status meeting costs each person about 4 hours of focus time. "
    "Try written async updates for one week and tell us what changed."
)


def relay_with_twitter_avoid_pattern() -> dict[str, object]:
    profile = copy.deepcopy(BRANDS["relay"])
    profile["voiceProfile"]["platformOverrides"]["twitter"] = {"avoidPatterns": ["hot take"]}
    return profile


async def test_the_brands_avoid_patterns_and_banned_terms_fail_plan_posts_as_safety(
    tenant: Tenant, platform: Platform, receiver: tuple[object, str]
) -> None:
    await tenant.data("save_brand_profile", {"brand_context": relay_with_twitter_avoid_pattern()})
    await connect_webhook(platform, tenant.project_id, receiver[1])
    checked = await tenant.data("quality_check", {"caption": CLEAN, "platforms": ["twitter"]})
    assert checked["passed"], checked  # the clean post passes with the brand: only the terms differ below
    plan = {
        "posts": [
            {"id": "clean", "platform": "twitter", "caption": CLEAN},
            {"id": "banned", "platform": "twitter", "caption": CLEAN + " Revolutionary."},
            {"id": "avoided", "platform": "twitter", "caption": "Synergy check: " + CLEAN},
            {"id": "platform-avoided", "platform": "twitter", "caption": "Hot take: " + CLEAN},
        ]
    }

    dry = await tenant.data("schedule_content_plan", {"plan": plan, "dry_run": True})
    blockers = {post["id"]: post["quality"]["blockers"] for post in dry["posts"]}
    assert blockers["clean"] == []
    assert 'Contains blocked term: "revolutionary"' in blockers["banned"]
    assert 'Contains blocked term: "synergy"' in blockers["avoided"]
    assert 'Contains blocked term: "hot take"' in blockers["platform-avoided"]

    live = await tenant.data("schedule_content_plan", {"plan": plan})
    outcome = {post["id"]: (post["success"], post.get("failure_kind")) for post in live["posts"]}
    assert outcome == {
        "clean": (True, None),
        "banned": (False, "safety"),
        "avoided": (False, "safety"),
        "platform-avoided": (False, "safety"),
    }
    assert live["summary"] == {"total_posts": 4, "scheduled": 1, "failed": 3}
