"""The connect page's Mastodon and YouTube OAuth flows, YouTube comments, Bluesky comments and deletes,
each against a local stand-in of the platform's API."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from sqlalchemy import select

from tests.conftest import Tenant
from tests.domains.distribution.conftest import local_settings
from tests.domains.distribution.standins import BlueskyStandIn, MastodonStandIn, YouTubeStandIn, serve
from tests.domains.distribution.test_connectors import connect
from toolhost.config import Settings
from toolhost.domains.distribution import accounts as accounts_service
from toolhost.domains.distribution.models import ConnectedAccount
from toolhost.platform.results import ValidationFailed
from toolhost.platform.runtime import Platform
from toolhost.providers.connectors.registry import Connectors
from toolhost.providers.connectors.vault import TokenVault
from toolhost.providers.fetch import PRIVATE_ADDRESS

CALLBACK = "http://testserver/app/connect/oauth/callback"
AUTHORIZE = "https://accounts.example.test/o/oauth2/auth"


@pytest.fixture
async def youtube() -> AsyncIterator[tuple[YouTubeStandIn, str]]:
    stand_in = YouTubeStandIn()
    async with serve(stand_in.app()) as base:
        stand_in.base_url = base
        yield stand_in, base


@pytest.fixture
def settings(request: pytest.FixtureRequest, database_url: str, tmp_path: Path) -> Settings:
    """YouTube's OAuth client and endpoints point at the stand-in when a test uses it."""
    if "youtube" not in request.fixturenames:
        return local_settings(database_url, tmp_path / "media")
    stand_in, base = request.getfixturevalue("youtube")
    return local_settings(
        database_url,
        tmp_path / "media",
        distribution={
            "connectors": {
                "youtube_client_id": stand_in.client_id,
                "youtube_client_secret": stand_in.client_secret,
                "youtube_auth_url": AUTHORIZE,
                "youtube_token_url": f"{base}/token",
                "youtube_api_url": f"{base}/youtube/v3",
                "youtube_upload_url": f"{base}/upload/youtube/v3",
            }
        },
    )


async def open_page(tenant: Tenant, client: httpx.AsyncClient, platform_name: str) -> str:
    """start_platform_connection, then the page opened: returns the page's path."""
    started = await tenant.data("start_platform_connection", {"platform": platform_name})
    path = str(started["deep_link"]).removeprefix("http://testserver")
    assert (await client.get(path)).status_code == 200
    return path


async def accounts_on(platform: Platform, platform_name: str) -> list[ConnectedAccount]:
    async with platform.session_factory() as session:
        found = await session.scalars(select(ConnectedAccount).where(ConnectedAccount.platform == platform_name))
        return list(found)


# IPv6 forms that carry a private IPv4 address; the tests allow 127.0.0.1 itself, and these must not ride on that.
EMBEDDED_PRIVATE_HOSTS = [
    "[64:ff9b::7f00:1]",  # NAT64 of 127.0.0.1
    "[64:ff9b::a9fe:a9fe]",  # NAT64 of 169.254.169.254
    "[64:ff9b:1::a00:1]",  # local-use NAT64
    "[2002:7f00:1::1]",  # 6to4 of 127.0.0.1
    "[2002:a00:1::1]",  # 6to4 of 10.0.0.1
    "[::ffff:0:7f00:1]",  # IPv4-translated 127.0.0.1
]


@pytest.mark.parametrize("host", EMBEDDED_PRIVATE_HOSTS)
async def test_the_connect_page_refuses_urls_that_reach_a_private_ipv4_address_through_ipv6(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform, host: str
) -> None:
    webhook_page = await open_page(tenant, client, "threads")
    refused = await client.post(webhook_page, data={"connector": "webhook", "url": f"https://{host}/hook"})
    assert refused.status_code == 400 and PRIVATE_ADDRESS in refused.text

    mastodon_page = await open_page(tenant, client, "mastodon")
    refused = await client.post(
        mastodon_page, data={"connector": "mastodon", "instance_url": f"https://{host}", "access_token": "t"}
    )
    assert refused.status_code == 400 and PRIVATE_ADDRESS in refused.text
    refused = await client.get(f"{mastodon_page}/oauth/mastodon", params={"instance_url": f"https://{host}"})
    assert refused.status_code == 400 and PRIVATE_ADDRESS in refused.text
    assert await accounts_on(platform, "threads") == [] and await accounts_on(platform, "mastodon") == []


async def test_the_connect_page_completes_mastodon_oauth_on_the_instance(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform
) -> None:
    stand_in = MastodonStandIn()
    async with serve(stand_in.app()) as base:
        path = await open_page(tenant, client, "mastodon")
        started = await client.get(f"{path}/oauth/mastodon", params={"instance_url": base})
        assert started.status_code == 303
        target = urlsplit(started.headers["location"])
        assert f"{target.scheme}://{target.netloc}{target.path}" == f"{base}/oauth/authorize"
        query = {name: values[0] for name, values in parse_qs(target.query).items()}
        [app] = stand_in.apps
        assert app["redirect_uri"] == CALLBACK
        assert (query["client_id"], query["redirect_uri"], query["response_type"], query["scope"]) == (
            app["client_id"],
            CALLBACK,
            "code",
            "read write",
        )

        # The instance sends the person back with a code; a forged state is refused first.
        forged = await client.get("/app/connect/oauth/callback", params={"code": stand_in.code, "state": "x"})
        assert forged.status_code == 400
        assert stand_in.grants == []
        done = await client.get("/app/connect/oauth/callback", params={"code": stand_in.code, "state": query["state"]})
        assert done.status_code == 200, done.text
        assert "@alice@127.0.0.1" in done.text
        assert stand_in.grants[0]["client_secret"] == app["client_secret"]

        [account] = await accounts_on(platform, "mastodon")
        assert (account.connector, account.project_id) == ("mastodon", tenant.project_id)
        assert stand_in.token not in account.secret
        assert TokenVault(platform.settings.keyring).open(account.secret)["access_token"] == stand_in.token
        waited = await tenant.data("wait_for_connection", {"platform": "mastodon"})
        assert (waited["connected"], waited["account_id"]) == (True, str(account.id))

        again = await client.get("/app/connect/oauth/callback", params={"code": stand_in.code, "state": query["state"]})
        assert again.status_code == 400, "the link was spent: a replayed callback connects nothing"
        assert len(await accounts_on(platform, "mastodon")) == 1


async def test_the_connect_page_completes_youtube_oauth_and_a_bad_code_connects_nothing(
    tenant: Tenant,
    client: httpx.AsyncClient,
    platform: Platform,
    youtube: tuple[YouTubeStandIn, str],
) -> None:
    stand_in, _ = youtube
    path = await open_page(tenant, client, "youtube")
    page = await client.get(path)
    assert f"{path}/oauth/youtube" in page.text

    started = await client.get(f"{path}/oauth/youtube")
    assert started.status_code == 303
    target = urlsplit(started.headers["location"])
    assert f"{target.scheme}://{target.netloc}{target.path}" == AUTHORIZE
    query = {name: values[0] for name, values in parse_qs(target.query).items()}
    assert query["client_id"] == stand_in.client_id
    assert query["redirect_uri"] == CALLBACK
    assert (query["access_type"], query["prompt"]) == ("offline", "consent")
    assert "https://www.googleapis.com/auth/youtube.upload" in query["scope"].split()

    refused = await client.get("/app/connect/oauth/callback", params={"code": "bad-code", "state": query["state"]})
    assert refused.status_code == 400
    assert await accounts_on(platform, "youtube") == []

    done = await client.get("/app/connect/oauth/callback", params={"code": "good-code", "state": query["state"]})
    assert done.status_code == 200, done.text
    assert "Alice Channel" in done.text
    [account] = await accounts_on(platform, "youtube")
    assert account.username == "Alice Channel"
    assert account.settings["channel_id"] == "UC123"
    assert account.has_refresh_token
    secrets = TokenVault(platform.settings.keyring).open(account.secret)
    assert (secrets["refresh_token"], secrets["access_token"]) == (
        stand_in.refresh_token,
        stand_in.access_token,
    )
    assert account.expires_at is None, "a refreshable grant never shows the account as expiring"


async def test_youtube_lists_posts_replies_to_moderates_and_deletes_comments(
    tenant: Tenant, platform: Platform, youtube: tuple[YouTubeStandIn, str]
) -> None:
    stand_in, _ = youtube
    account = await connect(platform, tenant.project_id, "youtube", "youtube", {"refresh_token": "refresh-yt"})
    connector = Connectors(platform.settings).get("youtube")
    assert connector is not None
    view = accounts_service.session_of(account, TokenVault(platform.settings.keyring))
    viewer = stand_in.add_comment(text="Great video!", author="Bob", video_id="vid1", parent_id=None)
    stand_in.add_comment(text="On another video", author="Carol", video_id="vid2", parent_id=None)

    listed = await connector.list_comments(view, "vid1", limit=10)
    assert [(comment.id, comment.text, comment.author) for comment in listed] == [(viewer["id"], "Great video!", "Bob")]

    posted = await connector.post_comment(view, "vid1", "Thanks for watching")
    assert stand_in.comments[posted.id]["videoId"] == "vid1"
    assert [comment.id for comment in await connector.list_comments(view, "vid1", limit=10)] == [
        viewer["id"],
        posted.id,
    ]
    reply = await connector.reply_to_comment(view, "vid1", viewer["id"], "Glad you liked it")
    assert (reply.parent_id, stand_in.comments[reply.id]["parentId"]) == (viewer["id"], viewer["id"])
    assert stand_in.comments[reply.id]["text"] == "Glad you liked it"

    await connector.moderate_comment(view, viewer["id"], "hold")
    assert stand_in.comments[viewer["id"]]["moderationStatus"] == "heldForReview"
    await connector.moderate_comment(view, viewer["id"], "reject")
    assert stand_in.comments[viewer["id"]]["moderationStatus"] == "rejected"
    with pytest.raises(ValidationFailed):
        await connector.moderate_comment(view, viewer["id"], "shadowban")

    await connector.delete_comment(view, reply.id)
    assert reply.id not in stand_in.comments

    # An access token the API no longer takes is refreshed once and the call goes through.
    stand_in.access_token = "revoked-elsewhere"
    before = stand_in.refreshes
    assert [comment.id for comment in await connector.list_comments(view, "vid1", limit=1)] == [viewer["id"]]
    assert stand_in.refreshes == before + 1


async def test_bluesky_lists_replies_replies_in_thread_and_deletes_only_its_own(
    tenant: Tenant, platform: Platform
) -> None:
    stand_in = BlueskyStandIn()
    async with serve(stand_in.app()) as base:
        account = await connect(
            platform,
            tenant.project_id,
            "bluesky",
            "bluesky",
            {"handle": stand_in.handle, "app_password": stand_in.password, "service": base},
        )
        connector = Connectors(platform.settings).get("bluesky")
        assert connector is not None
        view = accounts_service.session_of(account, TokenVault(platform.settings.keyring))
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

        [comment] = await connector.list_comments(view, root_uri, limit=10)
        assert (comment.id, comment.text, comment.author, comment.parent_id) == (
            bob_uri,
            "Congrats!",
            "bob.test",
            root_uri,
        )

        answer = await connector.reply_to_comment(view, root_uri, bob_uri, "Thank you Bob")
        rkey = answer.id.rsplit("/", 1)[-1]
        record = stand_in.records[rkey]
        assert record["reply"] == {
            "root": {"uri": root_uri, "cid": "cid-post1"},
            "parent": {"uri": bob_uri, "cid": "cid-r1"},
        }
        note = await connector.post_comment(view, root_uri, "Docs are live too")
        assert stand_in.records[note.id.rsplit("/", 1)[-1]]["reply"]["parent"]["uri"] == root_uri
        assert {reply.id for reply in await connector.list_comments(view, root_uri, limit=10)} == {
            bob_uri,
            note.id,
        }

        await connector.delete_comment(view, answer.id)
        assert stand_in.deletes == [rkey]
        assert rkey not in stand_in.records
        with pytest.raises(ValidationFailed, match="own replies"):
            await connector.delete_comment(view, bob_uri)
        assert stand_in.deletes == [rkey], "someone else's reply is never sent for deletion"
