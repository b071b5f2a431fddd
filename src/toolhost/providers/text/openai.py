"""The `openai` text provider: any OpenAI-compatible chat-completions endpoint an operator configures.

The endpoint is the operator's own (set in settings, never taken from a caller), so it is reached with a plain
httpx client rather than the SSRF-safe fetcher, which exists for caller-supplied URLs. Every failure becomes
`upstream_error` naming the provider; upstream bodies and the key never reach the caller.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

import httpx
from pydantic import BaseModel, ValidationError
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt

from toolhost.config import ProviderSettings
from toolhost.db.session import ensure_no_open_transaction
from toolhost.platform.results import UpstreamFailed
from toolhost.providers.platforms import rules_for
from toolhost.providers.text.base import (
    AdaptRequest,
    CarouselRequest,
    PlanPostDraft,
    PlanPostRequest,
    PostRequest,
    StoryboardRequest,
)

logger = logging.getLogger(__name__)


class BusyAnswer(Exception):
    """A 429 or 5xx from the chat endpoint: the same request may succeed after a pause."""

    def __init__(self, response: httpx.Response) -> None:
        super().__init__(f"HTTP {response.status_code}")
        self.response = response


PROVIDER = "openai"
RETRY_AFTER_CAP = 30.0
SHAPES = {
    "caption": "A social caption: a hook line, 1-3 short paragraphs, a call to action, then hashtags.",
    "hook": "One hook line of at most 120 characters, nothing else.",
    "script": "A video script: 'HOOK (0-3s): ...', then 'BODY' with beats prefixed by timing cues "
    "like [3-15s], "
    "then 'CTA (..s): ...'. 45-60 seconds unless the prompt states a length.",
    "blog": "A blog post in Markdown: '# Title', an intro, 3-5 sections with '## ' headings, a conclusion.",
}


class _Frame(BaseModel):
    shotType: str
    cameraMovement: str
    duration: float
    imagePrompt: str
    videoPrompt: str
    caption: str
    voiceover: str
    notes: str = ""


class _Storyboard(BaseModel):
    title: str
    characterDescription: str
    frames: list[_Frame]


class _Slide(BaseModel):
    headline: str | None = None
    subheadline: str | None = None
    body: str | None = None
    emphasisWords: list[str] | None = None
    ctaText: str | None = None


class _Carousel(BaseModel):
    slides: list[_Slide]


class _PlanPost(BaseModel):
    hook: str
    angle: str
    caption: str
    hashtags: list[str]
    title: str | None = None
    visual_direction: str = ""


class OpenAITextProvider:
    """Chat completions with structured output where the tool returns structure, timeouts and retries."""

    def __init__(self, settings: ProviderSettings, *, transport: httpx.AsyncBaseTransport | None = None) -> None:
        if not settings.openai_base_url or not settings.openai_model:
            raise ValueError("the openai provider needs providers.openai_base_url and providers.openai_model")
        self.name = settings.openai_model
        self._settings = settings
        self._url = settings.openai_base_url.rstrip("/") + "/chat/completions"
        self._transport = transport

    def _timeout(self, catalogued: float) -> float:
        configured = self._settings.openai_timeout
        return min(catalogued, configured) if configured else catalogued

    async def chat(
        self,
        *,
        system: str,
        user: str,
        temperature: float,
        max_tokens: int,
        timeout: float,
        schema: type[BaseModel] | None = None,
    ) -> str:
        """One chat completion's message text; retried on 429 and 5xx with exponential backoff."""
        ensure_no_open_transaction("a text provider call")
        body: dict[str, Any] = {
            "model": self.name,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "temperature": temperature,
            "max_tokens": max_tokens,
        }
        if schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": schema.__name__.strip("_").lower(),
                    "schema": schema.model_json_schema(),
                },
            }
        headers = {"Content-Type": "application/json"}
        if self._settings.openai_api_key:
            headers["Authorization"] = f"Bearer {self._settings.openai_api_key}"
        seconds = self._timeout(timeout)
        attempts = 1 + max(0, self._settings.openai_max_retries)
        retrying = AsyncRetrying(
            stop=stop_after_attempt(attempts),
            wait=self._backoff,
            retry=retry_if_exception_type((httpx.HTTPError, BusyAnswer)),
            reraise=True,
        )
        async with httpx.AsyncClient(transport=self._transport, timeout=httpx.Timeout(seconds)) as client:
            try:
                response: httpx.Response = await retrying(self._post, client, body, headers, seconds)
            except httpx.HTTPError as error:
                raise UpstreamFailed("the text model could not be reached", provider=PROVIDER) from error
            except BusyAnswer as busy:
                raise UpstreamFailed(
                    f"the text model answered HTTP {busy.response.status_code} after {attempts} attempts",
                    provider=PROVIDER,
                    recover_with="retry later, or use model builtin",
                ) from None
        if response.status_code >= 400:
            logger.warning("chat endpoint refused the request with HTTP %s", response.status_code)
            raise UpstreamFailed(f"the text model refused the request (HTTP {response.status_code})", provider=PROVIDER)
        return _message_text(response)

    async def _post(
        self, client: httpx.AsyncClient, body: dict[str, Any], headers: dict[str, str], seconds: float
    ) -> httpx.Response:
        """One request; a timeout is final (the model is slow, not away), a 429 or 5xx may be retried."""
        try:
            response = await client.post(self._url, json=body, headers=headers)
        except httpx.TimeoutException as error:
            raise UpstreamFailed(
                f"the text model timed out after {seconds:g} s",
                provider=PROVIDER,
                recover_with="retry later, or use model builtin",
            ) from error
        if response.status_code == 429 or response.status_code >= 500:
            raise BusyAnswer(response)
        return response

    def _backoff(self, state: RetryCallState) -> float:
        """Retry-After when the endpoint sends one (capped), else the configured backoff doubled per attempt."""
        failure = state.outcome.exception() if state.outcome is not None else None
        retry_after = failure.response.headers.get("retry-after") if isinstance(failure, BusyAnswer) else None
        if retry_after:
            try:
                return min(max(float(retry_after), 0.0), RETRY_AFTER_CAP)
            except ValueError:
                pass
        return float(self._settings.openai_retry_backoff * (2 ** (state.attempt_number - 1)))

    async def _structured(self, schema: type[BaseModel], **chat: Any) -> Any:
        text = await self.chat(schema=schema, **chat)
        try:
            return schema.model_validate(json.loads(_strip_fence(text)))
        except (json.JSONDecodeError, ValidationError) as error:
            raise UpstreamFailed(
                "the text model returned malformed JSON",
                provider=PROVIDER,
                recover_with="retry, or use model builtin",
            ) from error

    # -- the interface
    async def write(self, request: PostRequest) -> str:
        """A caption, hook, script or blog post."""
        rules = rules_for(request.platform)
        system = _system(request.brand.prompt_summary(), request.platform, request.ideation_context)
        system += f"\nWrite: {SHAPES[request.content_type]}"
        if request.platform:
            system += (
                f"\nPlatform {rules.display_name}: at most {rules.caption_limit} characters, "
                f"{rules.hashtags_min}-{rules.hashtags_max} hashtags."
            )
        if request.hook_family:
            system += f"\nOpen with a {request.hook_family.replace('_', ' ')} hook."
        if request.angle:
            system += f"\nAngle: {request.angle}"
        return (
            await self.chat(system=system, user=request.prompt, temperature=0.8, max_tokens=4096, timeout=90.0)
        ).strip()

    async def adapt(self, request: AdaptRequest) -> str:
        """Existing text rewritten for the target platform."""
        rules = rules_for(request.target_platform)
        system = _system(request.brand.prompt_summary(), request.target_platform, "")
        system += (
            f"\nRewrite the user's post for {rules.display_name}: at most {rules.caption_limit} characters, "
            f"{rules.hashtags_min}-{rules.hashtags_max} hashtags, cut at sentence boundaries, keep its facts."
        )
        voice = request.brand.voice_for(request.target_platform)
        if voice is not None:
            system += (
                f"\nPlatform voice: CTA style {voice.cta_style or 'any'}; "
                f"hashtags {voice.hashtag_strategy or 'any'}."
                f"\nSample of this platform's voice:\n{voice.sample_content}"
            )
        return (
            await self.chat(system=system, user=request.content, temperature=0.7, max_tokens=2048, timeout=60.0)
        ).strip()

    async def storyboard(self, request: StoryboardRequest) -> dict[str, Any]:
        """A storyboard in the create_storyboard shape (without content_id)."""
        system = _system(request.brand_notes or request.brand.prompt_summary(), None, "")
        system += (
            f"\nReturn a storyboard as JSON: title, characterDescription, frames ({request.scenes} of "
            "them) with shotType "
            "CU|MS|FS|WS (never the same twice in a row), cameraMovement "
            "static|zoom-in|zoom-out|pan-left|pan-right|"
            f"tracking|tilt-up|tilt-down, duration (seconds, summing to {request.duration:g}), imagePrompt "
            "(repeating "
            "characterDescription word for word, asking for no on-screen text), videoPrompt, caption, "
            "voiceover, notes. "
            f"Frame 1 is the hook, the last frame the call to action. Platform: {request.platform}. Style: "
            f"{request.style or 'any'}."
        )
        result = await self._structured(
            _Storyboard, system=system, user=request.concept, temperature=0.7, max_tokens=4096, timeout=90.0
        )
        return {
            "title": result.title,
            "totalDuration": request.duration,
            "aspectRatio": "9:16" if request.short_form else "16:9",
            "characterDescription": result.characterDescription,
            "frames": [
                {"id": f"frame-{index + 1}", "frameNumber": index + 1, **frame.model_dump()}
                for index, frame in enumerate(result.frames)
            ],
        }

    async def carousel(self, request: CarouselRequest) -> list[dict[str, Any]]:
        """The slides of a carousel in the generate_carousel shape."""
        system = _system(request.brand.prompt_summary(), request.platform, "")
        system += (
            f"\nReturn JSON {{slides: [...]}} with exactly {request.slide_count} slides for the "
            f"{request.template_id} "
            "template: headline (at most 34 characters), optional subheadline, body (at most 150 "
            "characters), "
            "emphasisWords, ctaText on the last slide (at most 28 characters). Slide 1 is the hook"
            + (
                f", exactly: {request.hook}"
                if request.hook
                else f" ({request.hook_family.replace('_', ' ')} family)"
                if request.hook_family
                else ""
            )
            + ". Use figures only from the topic, the constraints or the proof points."
            + (f"\nTone: {request.tone}" if request.tone else "")
            + (f"\nConstraints: {request.constraints}" if request.constraints else "")
        )
        result = await self._structured(
            _Carousel, system=system, user=request.topic, temperature=0.7, max_tokens=4096, timeout=90.0
        )
        return [
            {"slideNumber": index + 1, **slide.model_dump(exclude_none=True)}
            for index, slide in enumerate(result.slides)
        ]

    async def plan_post(self, request: PlanPostRequest) -> PlanPostDraft:
        """One post of a content plan."""
        rules = rules_for(request.platform)
        system = _system(request.brand.prompt_summary(), request.platform, request.source_notes)
        system += (
            "\nReturn JSON with hook, angle, caption, hashtags, title, visual_direction for one "
            f"{rules.display_name} "
            f"post (day {request.day}, media {request.media_type}). Caption at most {rules.caption_limit} "
            "characters "
            f"with {rules.hashtags_min}-{rules.hashtags_max} hashtags; open with a "
            f"{request.hook_family.replace('_', ' ')} hook"
            + (f" modelled on: {request.top_hook}" if request.top_hook else "")
            + f". Angle: {request.angle or 'your choice'}."
            + (" Title at most 100 characters." if rules.title_limit else "")
        )
        result = await self._structured(
            _PlanPost, system=system, user=request.topic, temperature=0.8, max_tokens=2048, timeout=90.0
        )
        return PlanPostDraft(
            hook=result.hook,
            angle=result.angle or request.angle,
            caption=result.caption,
            hashtags=result.hashtags,
            title=result.title,
            visual_direction=result.visual_direction,
        )


def _system(brand: str, platform: str | None, ideation: str) -> str:
    lines = [
        "You write social media content for a brand. Use only facts given here or by the user: never invent "
        "figures, testimonials, clients or results. Never use the brand's banned terms.",
    ]
    if brand:
        lines.append(brand)
    if ideation:
        lines.append("What has worked before: " + ideation[:2000])
    if platform:
        lines.append(f"Target platform: {rules_for(platform).display_name}.")
    return "\n".join(lines)


def _strip_fence(text: str) -> str:
    match = re.fullmatch(r"\s*```(?:json)?\s*(.*?)\s*```\s*", text, re.DOTALL)
    return match.group(1) if match else text


def _message_text(response: httpx.Response) -> str:
    try:
        payload = response.json()
        content = payload["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError) as error:
        raise UpstreamFailed("the text model returned a malformed response", provider=PROVIDER) from error
    if not isinstance(content, str):
        raise UpstreamFailed("the text model returned no text", provider=PROVIDER)
    return content
