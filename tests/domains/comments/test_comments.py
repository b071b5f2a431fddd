"""The comments tools over HTTP against the real app, through each connector's local stand-in."""

from __future__ import annotations

from typing import Any

import httpx

from tests.conftest import Tenant, TenantFactory
from tests.domains.comments.conftest import (
    connect,
    connect_youtube,
    published_post,
    send_webhook_comments,
)
from tests.domains.distribution.standins import BlueskyStandIn, MastodonStandIn, YouTubeStandIn
from toolhost.platform.runtime import Platform


async def tool_error(tenant: Tenant, tool_name: str, arguments: dict[str, Any], status: int = 200) -> dict[str, Any]:
    """The error object of a call that must fail with that HTTP status."""
    response = await tenant.call(tool_name, arguments)
    body = response.json()
    assert response.status_code == status, body
    assert body["isError"] is True, body
    return body["error"]  # type: ignore[no-any-return]


async def test_youtube_comments_are_listed_posted_replied_to_moderated_and_deleted(
    tenant: Tenant, platform: Platform, youtube: YouTubeStandIn
) -> None:
    account_id = await connect_youtube(platform, tenant.project_id)
    await published_post(
        platform,
        project_id=tenant.project_id,
        account_id=tenant.account_id,
        connected_account_id=account_id,
        platform_name="youtube",
        external_post_id="vid1",
        title="Our launch video",
    )
    viewer = youtube.add_comment(text="Great video!", author="Bob", video_id="vid1", parent_id=None)
    youtube.add_comment(text="On another video", author="Carol", video_id="vid2", parent_id=None)

    listed = await tenant.data("list_comments", {"video_id": "vid1"})
    assert listed["nextPageToken"] is None
    [comment] = listed["comments"]
    assert (comment["id"], comment["videoId"], comment["videoTitle"]) == (viewer["id"], "vid1", "Our launch video")
    assert (comment["authorDisplayName"], comment["textOriginal"], comment["textDisplay"]) == (
        "Bob",
        "Great video!",
        "Great video!",
    )
    assert comment["publishedAt"] == "2026-11-21T00:00:00Z"
    assert comment["canReply"] is True

    posted = await tenant.data("post_comment", {"video_id": "vid1", "text": "Thanks for watching"})
    assert youtube.comments[posted["comment"]["id"]]["videoId"] == "vid1"
    assert posted["comment"]["textDisplay"] == "Thanks for watching"

    reply = await tenant.data("reply_to_comment", {"parent_id": viewer["id"], "text": "Glad you liked it"})
    created = youtube.comments[reply["comment"]["id"]]
    assert (created["parentId"], created["text"]) == (viewer["id"], "Glad you liked it")

    moderated = await tenant.data("moderate_comment", {"comment_id": viewer["id"], "moderation_status": "rejected"})
    assert moderated == {"success": True, "commentId": viewer["id"], "moderationStatus": "rejected"}
    assert youtube.comments[viewer["id"]]["moderationStatus"] == "rejected"
    await tenant.data("moderate_comment", {"comment_id": viewer["id"], "moderation_status": "published"})
    assert youtube.comments[viewer["id"]]["moderationStatus"] == "published"

    deleted = await tenant.data("delete_comment", {"comment_id": reply["comment"]["id"]})
    assert deleted == {"success": True, "commentId": reply["comment"]["id"]}
    assert reply["comment"]["id"] not in youtube.comments

    text = (await tenant.call("list_comments", {"video_id": "vid1"})).json()["content"][0]["text"]
    assert "Bob: Great video!" in text


async def test_a_comment_the_platform_does_not_know_is_an_upstream_error_naming_the_connector(
    tenant: Tenant, platform: Platform, youtube: YouTubeStandIn
) -> None:
    await connect_youtube(platform, tenant.project_id)
    error = await tool_error(tenant, "delete_comment", {"comment_id": "Ug-missing"})
    assert (error["error_type"], error["provider"]) == ("upstream_error", "youtube")
    assert youtube.refresh_token not in str(error) and youtube.access_token not in str(error)


async def test_without_video_id_comments_come_from_the_accounts_recent_posts_across_pages(
    tenant: Tenant, platform: Platform, youtube: YouTubeStandIn
) -> None:
    account_id = await connect_youtube(platform, tenant.project_id)
    for video_id in ("vid1", "vid2"):
        await published_post(
            platform,
            project_id=tenant.project_id,
            account_id=tenant.account_id,
            connected_account_id=account_id,
            platform_name="youtube",
            external_post_id=video_id,
        )
    expected = {
        youtube.add_comment(text=f"comment {index}", author="Bob", video_id=video, parent_id=None)["id"]: video
        for index, video in enumerate(["vid1", "vid1", "vid2"])
    }
    youtube.add_comment(text="not our video", author="Eve", video_id="vid9", parent_id=None)

    first = await tenant.data("list_comments", {"max_results": 2})
    assert len(first["comments"]) == 2 and first["nextPageToken"]
    second = await tenant.data("list_comments", {"max_results": 2, "page_token": first["nextPageToken"]})
    assert second["nextPageToken"] is None
    seen = {comment["id"]: comment["videoId"] for comment in first["comments"] + second["comments"]}
    assert seen == expected

    error = await tool_error(tenant, "list_comments", {"page_token": "not-a-token"})
    assert error["error_type"] == "validation_error"
    assert error["field_errors"][0]["path"] == "page_token"


async def test_mastodon_comments_work_and_moderation_names_the_connector_and_capability(
    tenant: Tenant, platform: Platform, mastodon: tuple[MastodonStandIn, str]
) -> None:
    stand_in, base = mastodon
    account_id, _ = await connect(
        platform, tenant.project_id, "mastodon", "mastodon", {"instance_url": base, "access_token": stand_in.token}
    )
    stand_in.statuses["100"] = {
        "id": "100",
        "content": "<p>Launch</p>",
        "in_reply_to_id": None,
        "account": {"acct": "alice"},
        "created_at": "2026-11-20T00:00:00Z",
    }
    stand_in.statuses["101"] = {
        "id": "101",
        "content": "<p>Congrats!</p>",
        "in_reply_to_id": "100",
        "account": {"acct": "bob@other.test"},
        "created_at": "2026-11-20T01:00:00Z",
    }
    common = {"platform": "mastodon"}

    [comment] = (await tenant.data("list_comments", {**common, "video_id": "100"}))["comments"]
    assert (comment["id"], comment["authorDisplayName"], comment["textDisplay"], comment["parentId"]) == (
        "101",
        "bob@other.test",
        "Congrats!",
        "100",
    )
    reply = await tenant.data("reply_to_comment", {**common, "parent_id": "101", "text": "Thank you"})
    assert stand_in.statuses[reply["comment"]["id"]]["in_reply_to_id"] == "101"
    note = await tenant.data("post_comment", {**common, "video_id": "100", "text": "Docs are live"})
    assert stand_in.statuses[note["comment"]["id"]]["in_reply_to_id"] == "100"
    await tenant.data("delete_comment", {"connected_account_id": str(account_id), "comment_id": note["comment"]["id"]})
    assert note["comment"]["id"] not in stand_in.statuses

    error = await tool_error(
        tenant, "moderate_comment", {**common, "comment_id": "101", "moderation_status": "rejected"}
    )
    assert error["error_type"] == "validation_error"
    assert (error["connector"], error["capability"]) == ("mastodon", "comments.moderate")
    assert "mastodon" in error["message"]


async def test_bluesky_replies_stay_in_the_posts_thread_found_from_recent_posts(
    tenant: Tenant, platform: Platform, bluesky: tuple[BlueskyStandIn, str]
) -> None:
    stand_in, base = bluesky
    account_id, _ = await connect(
        platform,
        tenant.project_id,
        "bluesky",
        "bluesky",
        {"handle": stand_in.handle, "app_password": stand_in.password, "service": base},
    )
    stand_in.records["post1"] = {"text": "Our launch", "createdAt": "2026-11-20T00:00:00Z"}
    root_uri = f"at://{stand_in.did}/app.bsky.feed.post/post1"
    bob_uri = "at://did:plc:bob/app.bsky.feed.post/r1"
    stand_in.others.append(
        {
            "uri": bob_uri,
            "cid": "cid-r1",
            "record": {
                "text": "Congrats!",
                "createdAt": "2026-11-20T01:00:00Z",
                "reply": {"root": {"uri": root_uri}, "parent": {"uri": root_uri}},
            },
            "author": {"handle": "bob.test"},
            "indexedAt": "2026-11-20T01:00:01Z",
        }
    )
    unknown = await tool_error(tenant, "reply_to_comment", {"parent_id": bob_uri, "text": "Thanks Bob"})
    assert unknown["field_errors"][0]["path"] == "video_id"
    assert stand_in.creates == 0, "nothing is posted when the thread is unknown"

    await published_post(
        platform,
        project_id=tenant.project_id,
        account_id=tenant.account_id,
        connected_account_id=account_id,
        platform_name="bluesky",
        external_post_id=root_uri,
    )
    reply = await tenant.data("reply_to_comment", {"parent_id": bob_uri, "text": "Thanks Bob"})
    record = stand_in.records[reply["comment"]["id"].rsplit("/", 1)[-1]]
    assert record["reply"]["root"]["uri"] == root_uri
    assert record["reply"]["parent"]["uri"] == bob_uri

    refused = await tool_error(tenant, "delete_comment", {"comment_id": bob_uri})
    assert refused["error_type"] == "validation_error"
    assert stand_in.deletes == []


async def test_webhook_comments_are_those_the_receiver_sent_and_it_cannot_reply(
    tenant: Tenant, platform: Platform, client: httpx.AsyncClient, receiver_url: str
) -> None:
    account_id, shown = await connect(platform, tenant.project_id, "twitter", "webhook", {"url": receiver_url})
    comment = {
        "external_post_id": "tw-1",
        "id": "c1",
        "text": "Nice",
        "author": "dana",
        "created_at": "2026-11-20T02:00:00Z",
    }
    sent = await send_webhook_comments(client, account_id, shown["signing_secret"], [comment])
    assert sent.status_code == 202
    # At-least-once delivery: the same comment sent again is listed once.
    await send_webhook_comments(client, account_id, shown["signing_secret"], [comment])
    other = {**comment, "external_post_id": "tw-2", "id": "c2", "text": "Other post"}
    await send_webhook_comments(client, account_id, shown["signing_secret"], [other])
    forged = await send_webhook_comments(client, account_id, "wrong-secret", [{**comment, "id": "c3"}])
    assert forged.status_code == 401

    [listed] = (await tenant.data("list_comments", {"platform": "twitter", "video_id": "tw-1"}))["comments"]
    assert (listed["id"], listed["videoId"], listed["textDisplay"], listed["authorDisplayName"]) == (
        "c1",
        "tw-1",
        "Nice",
        "dana",
    )
    assert listed["canReply"] is False
    everything = await tenant.data("list_comments", {})
    assert {item["id"] for item in everything["comments"]} == {"c1", "c2"}

    error = await tool_error(tenant, "reply_to_comment", {"parent_id": "c1", "text": "Thanks"})
    assert (error["error_type"], error["connector"], error["capability"]) == (
        "validation_error",
        "webhook",
        "comments.reply",
    )


async def test_account_routing_prefers_youtube_and_asks_which_account_when_several_fit(
    tenant: Tenant, platform: Platform, youtube: YouTubeStandIn, receiver_url: str
) -> None:
    none = await tool_error(tenant, "list_comments", {})
    assert none["error_type"] == "validation_error" and "start_platform_connection" in none["recover_with"]

    first, _ = await connect(platform, tenant.project_id, "twitter", "webhook", {"url": receiver_url})
    second, _ = await connect(platform, tenant.project_id, "linkedin", "webhook", {"url": receiver_url})
    several = await tool_error(tenant, "list_comments", {})
    assert {candidate["id"] for candidate in several["candidates"]} == {str(first), str(second)}
    chosen = await tenant.data("list_comments", {"connected_account_id": str(second)})
    assert chosen["comments"] == []

    youtube_id = await connect_youtube(platform, tenant.project_id)
    youtube.add_comment(text="Hello", author="Bob", video_id="vid1", parent_id=None)
    [routed] = (await tenant.data("list_comments", {"video_id": "vid1"}))["comments"]
    assert routed["textDisplay"] == "Hello", "without an id or platform the project's YouTube account serves"

    mismatch = await tool_error(
        tenant, "list_comments", {"platform": "twitter", "connected_account_id": str(youtube_id)}
    )
    assert mismatch["field_errors"][0]["path"] == "connected_account_id"
    missing = await tool_error(tenant, "list_comments", {"platform": "mastodon"})
    assert "no active account" in missing["message"]


async def test_bad_arguments_are_refused_before_anything_reaches_the_platform(
    tenant: Tenant, platform: Platform, youtube: YouTubeStandIn
) -> None:
    await connect_youtube(platform, tenant.project_id)
    refreshes = youtube.refreshes
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("post_comment", {"text": "hi"}, "video_id"),
        ("post_comment", {"video_id": "vid1", "text": ""}, "text"),
        ("post_comment", {"video_id": "vid1", "text": "   "}, "text"),
        ("post_comment", {"video_id": "vid1", "text": "x" * 10_001}, "text"),
        ("reply_to_comment", {"text": "hi"}, "parent_id"),
        ("list_comments", {"max_results": 0}, "max_results"),
        ("list_comments", {"max_results": 101}, "max_results"),
        ("list_comments", {"connected_account_id": "not-a-uuid"}, "connected_account_id"),
        ("list_comments", {"platform": "myspace"}, "platform"),
        ("moderate_comment", {"comment_id": "Ug1", "moderation_status": "heldForReview"}, "moderation_status"),
        ("delete_comment", {"comment_id": "y" * 1_001}, "comment_id"),
    ]
    for tool_name, arguments, path in cases:
        error = await tool_error(tenant, tool_name, arguments, status=400)
        assert error["error_type"] == "validation_error", (tool_name, arguments)
        assert path in {item["path"] for item in error["field_errors"]}, (tool_name, arguments, error)
    assert youtube.comments == {} and youtube.refreshes == refreshes


async def test_another_tenants_account_and_project_are_never_reachable(
    tenant: Tenant, make_tenant: TenantFactory, platform: Platform, youtube: YouTubeStandIn
) -> None:
    other = await make_tenant()
    other_account = await connect_youtube(platform, other.project_id)
    youtube.add_comment(text="Private", author="Bob", video_id="vid1", parent_id=None)

    foreign_account = await tool_error(
        tenant, "list_comments", {"connected_account_id": str(other_account), "video_id": "vid1"}
    )
    assert foreign_account["error_type"] == "validation_error"
    assert "Private" not in str(foreign_account)
    foreign_project = await tool_error(
        tenant, "list_comments", {"project_id": str(other.project_id), "video_id": "vid1"}, status=404
    )
    assert foreign_project["error_type"] == "not_found"
    assert (await other.data("list_comments", {"video_id": "vid1"}))["comments"][0]["textDisplay"] == "Private"


async def test_a_key_without_mcp_comments_is_denied_every_comments_tool(
    make_tenant: TenantFactory, platform: Platform, youtube: YouTubeStandIn
) -> None:
    reader = await make_tenant(scopes=["mcp:read", "mcp:write", "mcp:distribute", "mcp:analytics"])
    await connect_youtube(platform, reader.project_id)
    refreshes = youtube.refreshes
    pro = await make_tenant(tier="pro", scopes=["mcp:read"])
    for caller in (reader, pro):
        for tool_name, arguments in [
            ("list_comments", {"video_id": "vid1"}),
            ("reply_to_comment", {"parent_id": "Ug1", "text": "hi"}),
            ("post_comment", {"video_id": "vid1", "text": "hi"}),
            ("moderate_comment", {"comment_id": "Ug1", "moderation_status": "published"}),
            ("delete_comment", {"comment_id": "Ug1"}),
        ]:
            error = await tool_error(caller, tool_name, arguments, status=403)
            assert (error["error_type"], error["required_scope"]) == ("permission_denied", "mcp:comments")
    assert youtube.refreshes == refreshes, "a denied call never reaches the platform"
