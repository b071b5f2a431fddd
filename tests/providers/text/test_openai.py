"""The openai adapter against a local stand-in of the chat-completions API on 127.0.0.1."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from tests.local_http import serving

from toolhost.config import ProviderSettings
from toolhost.platform.results import UpstreamFailed
from toolhost.providers.text.base import BrandContext, CarouselRequest, PostRequest
from toolhost.providers.text.openai import OpenAITextProvider


class ChatStandIn:
    """Answers POST /v1/chat/completions from a queue of (status, body) replies; "hang" waits for release."""

    def __init__(self) -> None:
        self.replies: list[tuple[int, str]] = []
        self.requests: list[dict[str, object]] = []
        # Sent with every 429 reply when set, as a Retry-After header.
        self.retry_after: str | None = None
        self.release = threading.Event()
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                stand_in.requests.append({"body": json.loads(body), "auth": self.headers.get("Authorization")})
                status, reply = stand_in.replies.pop(0) if stand_in.replies else (500, "{}")
                if reply == "hang":
                    stand_in.release.wait(timeout=10)
                    return
                data = reply.encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                if status == 429 and stand_in.retry_after is not None:
                    self.send_header("Retry-After", stand_in.retry_after)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def answer(self, content: str, status: int = 200) -> None:
        self.replies.append((status, json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]})))


@pytest.fixture
def chat() -> Iterator[ChatStandIn]:
    stand_in = ChatStandIn()
    with serving(stand_in.server):
        try:
            yield stand_in
        finally:
            stand_in.release.set()


def provider(chat: ChatStandIn, **overrides: object) -> OpenAITextProvider:
    values: dict[str, object] = {
        "openai_base_url": chat.base_url,
        "openai_api_key": "sk-test-key",
        "openai_model": "local-chat",
        "openai_retry_backoff": 0.01,
    }
    values.update(overrides)
    return OpenAITextProvider(ProviderSettings.model_validate(values))


REQUEST = PostRequest(
    prompt="Write about async standups", content_type="caption", brand=BrandContext(), platform="linkedin"
)


async def test_a_chat_answer_becomes_the_generated_text_and_the_key_is_sent_as_bearer(
    chat: ChatStandIn,
) -> None:
    chat.answer("Async standups save focus time. Try one this week.")
    text = await provider(chat).write(REQUEST)
    assert text == "Async standups save focus time. Try one this week."
    sent = chat.requests[0]
    assert sent["auth"] == "Bearer sk-test-key"
    body = sent["body"]
    assert isinstance(body, dict)
    assert body["model"] == "local-chat"
    assert body["temperature"] == 0.8


async def test_a_429_is_retried_and_the_next_answer_is_used(chat: ChatStandIn) -> None:
    chat.replies.append((429, "{}"))
    chat.answer("Second time lucky.")
    assert await provider(chat).write(REQUEST) == "Second time lucky."
    assert len(chat.requests) == 2


async def test_retry_after_is_honoured_over_the_configured_backoff(chat: ChatStandIn) -> None:
    chat.retry_after = "0"
    chat.replies += [(429, "{}"), (429, "{}")]
    chat.answer("Third time.")
    started = time.monotonic()
    # Without the header the two pauses would take 20 s and 40 s.
    assert await provider(chat, openai_retry_backoff=20.0).write(REQUEST) == "Third time."
    assert time.monotonic() - started < 5
    assert len(chat.requests) == 3


async def test_a_4xx_other_than_429_is_refused_at_once(chat: ChatStandIn) -> None:
    chat.replies.append((400, "{}"))
    with pytest.raises(UpstreamFailed, match="refused the request"):
        await provider(chat).write(REQUEST)
    assert len(chat.requests) == 1


async def test_persistent_5xx_is_an_upstream_error_naming_the_provider_after_the_retries(
    chat: ChatStandIn,
) -> None:
    chat.replies += [(503, "{}"), (502, "{}"), (500, "{}")]
    with pytest.raises(UpstreamFailed) as raised:
        await provider(chat).write(REQUEST)
    assert raised.value.details["provider"] == "openai"
    assert "sk-test-key" not in raised.value.message
    assert len(chat.requests) == 3


async def test_a_timeout_is_an_upstream_error(chat: ChatStandIn) -> None:
    chat.replies.append((200, "hang"))
    with pytest.raises(UpstreamFailed, match="timed out"):
        await provider(chat, openai_timeout=0.2).write(REQUEST)


async def test_malformed_json_for_a_structured_tool_is_an_upstream_error(chat: ChatStandIn) -> None:
    chat.answer("{this is not json")
    request = CarouselRequest(topic="async standups", template_id="step-by-step", slide_count=3, brand=BrandContext())
    with pytest.raises(UpstreamFailed, match="malformed JSON"):
        await provider(chat).carousel(request)


async def test_a_body_that_is_not_a_chat_completion_is_an_upstream_error(chat: ChatStandIn) -> None:
    chat.replies.append((200, "<html>gateway</html>"))
    with pytest.raises(UpstreamFailed, match="malformed response"):
        await provider(chat).write(REQUEST)


async def test_structured_output_asks_for_a_json_schema_and_returns_the_slides(chat: ChatStandIn) -> None:
    chat.answer(
        json.dumps({"slides": [{"headline": "One"}, {"headline": "Two"}, {"headline": "Three", "ctaText": "Follow"}]})
    )
    request = CarouselRequest(topic="async standups", template_id="step-by-step", slide_count=3, brand=BrandContext())
    slides = await provider(chat).carousel(request)
    assert [slide["slideNumber"] for slide in slides] == [1, 2, 3]
    body = chat.requests[0]["body"]
    assert isinstance(body, dict)
    assert body["response_format"]["type"] == "json_schema"
