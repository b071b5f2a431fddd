"""Bad input to the writing tools, as an agent sends it: a blank request, a request that is only a link, one
as long as the tool allows, one in German, Spanish or Japanese. Each gets a clear answer, a validation error
naming the field with what to do instead, or text in whole sentences; never garble, and a refusal costs nothing.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.applications import Starlette

from tests.conftest import Tenant
from tests.platform.test_mcp import mcp_client
from tests.providers.text.brands import BRANDS
from toolhost.domains.content.models import ContentRecord
from toolhost.domains.planning.models import ContentPlan


@dataclass(frozen=True)
class WritingTool:
    """A writing tool, the argument it writes from, that argument's limit and the rest of a valid call."""

    name: str
    field: str
    limit: int
    other_arguments: dict[str, Any]

    def arguments(self, text: str) -> dict[str, Any]:
        return {self.field: text, **self.other_arguments}


WRITING_TOOLS = [
    WritingTool("generate_content", "prompt", 10_000, {"content_type": "caption", "platform": "linkedin"}),
    WritingTool("adapt_content", "content", 5_000, {"target_platform": "twitter"}),
    WritingTool("generate_carousel", "topic", 200, {"template_id": "step-by-step", "slide_count": 5}),
    WritingTool("create_storyboard", "concept", 2_000, {"platform": "tiktok", "num_scenes": 5}),
    WritingTool("plan_content_week", "topic", 10_000, {"platforms": ["linkedin", "twitter"], "days": 2}),
    WritingTool("run_skill", "topic", 500, {"skill_id": "skill-carousel-from-topic"}),
]
BY_NAME = {tool.name: tool for tool in WRITING_TOOLS}
OTHER_LANGUAGES = {
    "German": "Schreibe einen Beitrag über unser neues Sauerteigbrot für Familien, die früh einkaufen",
    "Spanish": "Escribe una publicación sobre nuestro nuevo pan de masa madre para las familias del barrio",
    "Japanese": "朝早く買い物をする家族のための新しいサワードウパンについて投稿を書いてください",
}
ASK = "Announce our new weekend sourdough loaves for families who shop early."
NOTES = (
    "Our weekend sourdough loaves are baked from 4am with flour milled within 40 miles.",
    "Families who shop early get the first loaves while they are still warm.",
    "Each loaf is slow-fermented for 36 hours, which gives it a deep crust and an open crumb.",
    "The loaves are on the shelf from Saturday morning until they sell out.",
)


def long_request(tool: WritingTool) -> str:
    """A request as long as the tool allows, in whole sentences: the ask first, then pasted notes (for
    adapt_content, a post of notes to rewrite)."""
    limit = tool.limit
    text = NOTES[-1] if tool.name == "adapt_content" else ASK
    index = 0
    while len(text) + 1 + len(NOTES[index % len(NOTES)]) <= limit:
        text += " " + NOTES[index % len(NOTES)]
        index += 1
    return text


async def balance(tenant: Tenant) -> int:
    data = await tenant.data("get_credit_balance", {})
    return int(data["balance"] if "balance" in data else data["credits_remaining"])


async def stored(session: AsyncSession) -> tuple[int, int]:
    """(content records, content plans) in the database."""
    records = await session.scalar(select(func.count()).select_from(ContentRecord))
    plans = await session.scalar(select(func.count()).select_from(ContentPlan))
    return int(records or 0), int(plans or 0)


async def refused(tenant: Tenant, session: AsyncSession, tool: WritingTool, text: str) -> dict[str, Any]:
    """The error of a call that must be refused as a validation error naming the tool's field, at no cost."""
    before = await balance(tenant), await stored(session)
    response = await tenant.call(tool.name, tool.arguments(text))
    body = response.json()
    assert body["isError"], body
    error: dict[str, Any] = body["error"]
    assert error["error_type"] == "validation_error", error
    assert [item["path"] for item in error["field_errors"]] == [tool.field], error
    assert (await balance(tenant), await stored(session)) == before
    return error


def written_texts(tool: WritingTool, data: dict[str, Any]) -> list[str]:
    """The texts a person would read in a writing tool's answer."""
    if tool.name in ("generate_content", "adapt_content"):
        return [data["text"]]
    if tool.name == "generate_carousel":
        # the middle slides' headlines are labels ("Step 2"); the cover and the closing line are sentences
        slides = data["slides"]
        return [
            slides[0]["headline"],
            *[slide["body"] for slide in slides if slide.get("body")],
            slides[-1]["headline"],
        ]
    if tool.name == "create_storyboard":
        return [data["title"]] + [frame["voiceover"] for frame in data["frames"]]
    if tool.name == "plan_content_week":
        return [post["caption"] for post in data["posts"]]
    return [data["plan"][0]["args"]["topic"]]


def sentences_of(text: str) -> list[str]:
    """The sentences of a text, without its hashtags and numbered-list markers."""
    text = re.sub(r"(?:^|\s)#\w+", " ", text)
    text = re.sub(r"(?m)^\s*\d+\.\s+", "", text)
    return [part.strip() for part in re.split(r"(?<=[.!?])\s+|\n+", text) if part.strip()]


@pytest.fixture
async def baker(tenant: Tenant) -> Tenant:
    """A tenant whose project has a bakery's brand."""
    await tenant.data("save_brand_profile", {"brand_context": BRANDS["crumb"]})
    return tenant


@pytest.mark.parametrize("tool", WRITING_TOOLS, ids=lambda tool: tool.name)
async def test_a_blank_request_is_a_validation_error_naming_the_field(
    baker: Tenant, session: AsyncSession, tool: WritingTool
) -> None:
    response = await baker.call(tool.name, tool.arguments("  \n\t "))
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["error_type"] == "validation_error"
    assert [item["path"] for item in error["field_errors"]] == [tool.field]
    assert "whitespace" in error["message"]
    assert await stored(session) == (0, 0)


@pytest.mark.parametrize("tool", WRITING_TOOLS, ids=lambda tool: tool.name)
async def test_a_request_that_is_only_a_link_says_links_are_not_opened_and_what_to_do(
    baker: Tenant, session: AsyncSession, tool: WritingTool
) -> None:
    error = await refused(baker, session, tool, "https://crumb.example/blog/Weekend-Loaves")
    assert error["message"] == f"the {tool.field} is only a link, and generation does not open links"
    expected_advice = {"plan_content_week": "source_url", "run_skill": "skill-url-repurpose"}
    assert expected_advice.get(tool.name, "extract_url_content") in error["recover_with"]


@pytest.mark.parametrize("tool", WRITING_TOOLS, ids=lambda tool: tool.name)
async def test_a_request_in_another_language_is_refused_by_the_builtin_writer_saying_how_to_get_it_written(
    baker: Tenant, session: AsyncSession, tool: WritingTool
) -> None:
    for language, text in OTHER_LANGUAGES.items():
        error = await refused(baker, session, tool, text[: tool.limit])
        assert error["message"] == f"the {tool.field} is not in English, and the built-in writer writes English only"
        assert "English" in error["recover_with"] and "model" in error["recover_with"], language
        # Only the tools with a `model` argument can be told to pass one.
        takes_model = tool.name in ("generate_content", "adapt_content")
        assert ("pass `model`" in error["recover_with"]) == takes_model, error["recover_with"]


@pytest.mark.parametrize("tool", WRITING_TOOLS, ids=lambda tool: tool.name)
async def test_a_request_one_character_over_the_limit_is_refused_naming_the_field(
    baker: Tenant, session: AsyncSession, tool: WritingTool
) -> None:
    await refused(baker, session, tool, "a" * (tool.limit + 1))


@pytest.mark.parametrize("tool", WRITING_TOOLS, ids=lambda tool: tool.name)
async def test_a_request_as_long_as_the_tool_allows_is_written_from_in_whole_sentences(
    baker: Tenant, tool: WritingTool
) -> None:
    request = long_request(tool)
    data = await baker.data(tool.name, tool.arguments(request))
    texts = written_texts(tool, data)
    assert texts and all(texts)
    for text in texts:
        assert len(text) < max(len(request), 500)
        if tool.name != "run_skill":  # a preview hands the topic on as it was given
            assert "announce our" not in text.lower(), text
        parts = sentences_of(text)
        assert len(parts) == len(set(parts)), f"a sentence said twice: {text}"
        if tool.name == "run_skill":
            # the preview hands generate_carousel the topic cut to its 200 characters at a word boundary
            assert len(text) <= 200 and request.startswith(text) and request[len(text)] == " ", text
        elif tool.name != "create_storyboard" or text is not texts[0]:  # a storyboard's title is a phrase
            assert all(part[-1] in ".?!" for part in parts), text
    assert "sourdough" in " ".join(texts).lower()
    if tool.name in ("generate_carousel", "create_storyboard"):
        # every slide and scene between the opening and the call to action speaks of the request or the brand
        known = words_of(request + " " + json.dumps(BRANDS["crumb"]))
        for text in texts[1:-1]:
            assert words_of(text) & known, f"off the topic: {text}"


def words_of(text: str) -> set[str]:
    return {word for word in re.findall(r"[a-z]{4,}", text.lower())} - {"your", "this", "what", "with", "that"}


async def test_the_same_answers_reach_an_agent_over_mcp(baker: Tenant, app: Starlette) -> None:
    async with mcp_client(app, baker.key) as client:
        blank = await client.call_tool("create_storyboard", {"concept": " ", "platform": "tiktok"})
        german = await client.call_tool(
            "generate_content", {"prompt": OTHER_LANGUAGES["German"], "content_type": "hook"}
        )
    for result, field in ((blank, "concept"), (german, "prompt")):
        assert result.is_error is True
        assert result.structured_content is not None
        error = result.structured_content["error"]
        assert error["error_type"] == "validation_error"
        assert [item["path"] for item in error["field_errors"]] == [field]
    assert german.structured_content is not None
    assert "not in English" in german.structured_content["error"]["message"]


async def test_skill_url_repurpose_reads_the_link_in_its_topic_and_refuses_a_topic_without_one(baker: Tenant) -> None:
    data = await baker.data(
        "run_skill", {"skill_id": "skill-url-repurpose", "topic": "Repurpose https://crumb.example/blog/Rye-Loaf"}
    )
    extract = data["plan"][0]
    assert extract["tool"] == "extract_url_content"
    assert extract["args"]["url"] == "https://crumb.example/blog/Rye-Loaf"
    response = await baker.call("run_skill", {"skill_id": "skill-url-repurpose", "topic": "our rye loaf"})
    error = response.json()["error"]
    assert error["error_type"] == "validation_error"
    assert error["field_errors"][0]["path"] == "topic" and "link" in error["recover_with"]
