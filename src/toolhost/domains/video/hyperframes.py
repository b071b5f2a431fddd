"""render_hyperframes: HTML compositions rendered frame by frame in headless Chromium (CATALOG.md §4).

The worker starts Debian's `chromium` with `--remote-debugging-pipe` and speaks the DevTools protocol
over the two pipes (NUL-separated JSON, no extra library). The page is served from a private origin by
request interception, so the sandbox rules are enforced in one place: the first document is the
composition, every other navigation is refused, `data:`/`blob:` load as usual, the caller's own media
keys are served from the media store, other http(s) subresources go through the SSRF-safe fetcher
(≤20 MB each, ≤100 MB per render), websockets and pop-ups are blocked, downloads denied. For each frame
the page's `window.__hf.seek(t)` is awaited, then fonts and two animation frames, then a screenshot,
which goes to the video encoder (`motion`) in a thread. The protocol connection itself is `devtools`.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import io
import json
import logging
import math
import queue
import shutil
import tempfile
import uuid
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from PIL import Image
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.domains.media import service as media_service
from toolhost.domains.video import motion
from toolhost.domains.video.blocks import BLOCKS, CATEGORIES
from toolhost.domains.video.compositions import SIZE_OF_ASPECT
from toolhost.domains.video.devtools import DevTools
from toolhost.platform import jobs as platform_jobs
from toolhost.platform.jobs import Job, JobRun, JobType
from toolhost.platform.results import ValidationFailed
from toolhost.providers.fetch import Fetcher

if TYPE_CHECKING:
    from toolhost.config import Settings

__all__ = ["BLOCKS", "CATEGORIES", "JOB_TYPES", "check_request", "credits", "enqueue", "run_hyperframes"]

logger = logging.getLogger(__name__)

ORIGIN = "https://composition.hyperframes.invalid"
PAGE_URL = f"{ORIGIN}/index.html"
CRF = {"draft": 30, "standard": 23, "high": 18}
INSTALL_HINT = "install Debian's chromium package (apt-get install chromium) or set TOOLHOST_VIDEO__CHROMIUM_BINARY"
# Frames buffered between the capture loop and the encoder thread.
FRAME_QUEUE = 8
# Runs before any page script: window.__hf keeps the caller's props whatever object the page assigns,
# and pop-ups and websockets do not exist.
INIT_SCRIPT = """(() => {
  const props = %s;
  let current = {props};
  Object.defineProperty(window, '__hf', {
    configurable: false,
    get() { return current; },
    set(value) { current = value; if (value && typeof value === 'object' && !('props' in value)) value.props = props; },
  });
  window.open = () => null;
  window.WebSocket = function () { throw new Error('websockets are not allowed in compositions'); };
})();"""
SEEK_SCRIPT = """(async (t) => {
  await window.__hf.seek(t);
  await document.fonts.ready;
  await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
})(%r)"""
READY_SCRIPT = "!!(window.__hf && typeof window.__hf.seek === 'function')"


def credits(duration_sec: float, fps: int) -> int:
    """5 + 1 credit per 5 s of output × fps/30."""
    return 5 + math.ceil(duration_sec / 5 * fps / 30 - 1e-9)


def chromium_path(settings: Settings) -> str | None:
    """The Chromium executable, or None when it is not installed."""
    return shutil.which(settings.video.chromium_binary)


def require_chromium(settings: Settings) -> str:
    """The Chromium executable, or validation_error naming the missing binary and how to install it."""
    path = chromium_path(settings)
    if path is None:
        raise ValidationFailed(
            f"render_hyperframes needs headless Chromium, and {settings.video.chromium_binary} is not installed",
            recover_with=INSTALL_HINT,
            field_errors=[{"path": "composition_html", "message": "chromium is not installed on this server"}],
        )
    return path


async def check_request(
    *,
    session: AsyncSession,
    settings: Settings,
    account_id: uuid.UUID,
    accessible_project_ids: Sequence[uuid.UUID],
    composition_html: str | None,
    composition_url: str | None,
) -> dict[str, str]:
    """Where the page comes from ({"html"}, {"key"} or {"url"}), after the Chromium and source checks."""
    require_chromium(settings)
    if (composition_html is None) == (composition_url is None):
        raise ValidationFailed(
            "give exactly one of composition_html and composition_url",
            field_errors=[{"path": "composition_html", "message": "exactly one of composition_html, composition_url"}],
        )
    if composition_html is not None:
        return {"html": composition_html}
    assert composition_url is not None
    value = composition_url.strip()
    key = (
        media_service.own_media_key(settings, value)
        if value.lower().startswith(("http://", "https://"))
        else media_service.strip_scheme(value)
    )
    if key is None:
        await Fetcher(settings.fetch).check_url(value, https_only=True)
        return {"url": value}
    media = await media_service.find(
        session=session, key=key, account_id=account_id, accessible_project_ids=accessible_project_ids
    )
    if media.content_type != "text/html":
        raise ValidationFailed(
            f"composition_url is {media.content_type}, not text/html",
            field_errors=[{"path": "composition_url", "message": "not an HTML page"}],
        )
    return {"key": media.key}


async def enqueue(
    *,
    session: AsyncSession,
    tool_name: str,
    account_id: uuid.UUID,
    project_id: uuid.UUID,
    reserved_credits: int,
    source: dict[str, str],
    props: dict[str, Any],
    aspect_ratio: str,
    duration_sec: float,
    fps: int,
    quality: str,
) -> Job:
    """A hyperframes_render job holding its reservation."""
    return await platform_jobs.enqueue(
        session=session,
        account_id=account_id,
        project_id=project_id,
        job_type="hyperframes_render",
        tool_name=tool_name,
        reserved_credits=reserved_credits,
        job_input={
            "model": "chromium",
            "source": source,
            "props": props,
            "aspect_ratio": aspect_ratio,
            "duration_sec": duration_sec,
            "fps": fps,
            "quality": quality,
        },
    )


class PageFailed(Exception):
    """The page broke the contract (no window.__hf, a seek that throws); the job fails and is refunded."""


class Subresources:
    """Answers the page's intercepted requests under the sandbox rules, counting the bytes it loads."""

    def __init__(self, run: JobRun, html: bytes) -> None:
        self.run = run
        self.html = html
        self.document_served = False
        self.loaded = 0

    async def answer(self, browser: DevTools, session: str, event: dict[str, Any]) -> None:
        """Fulfils or fails one paused request."""
        request_id = event["requestId"]
        url = str(event["request"]["url"])
        try:
            body, content_type, status = await self._resolve(url, str(event.get("resourceType", "")))
        except Exception as error:  # any refusal fails just this request, never the render
            logger.info("hyperframes subresource refused: %s", type(error).__name__)
            # An aborted navigation leaves the composition on screen; a failed one would show an error page.
            reason = "Aborted" if event.get("resourceType") == "Document" else "BlockedByClient"
            await browser.send("Fetch.failRequest", {"requestId": request_id, "errorReason": reason}, session=session)
            return
        await browser.send(
            "Fetch.fulfillRequest",
            {
                "requestId": request_id,
                "responseCode": status,
                "responseHeaders": [{"name": "Content-Type", "value": content_type}],
                "body": base64.b64encode(body).decode(),
            },
            session=session,
        )

    async def _resolve(self, url: str, resource_type: str) -> tuple[bytes, str, int]:
        if resource_type == "Document":
            # The composition is the only document; links, redirects and pop-ups go nowhere.
            if url == PAGE_URL and not self.document_served:
                self.document_served = True
                return self.html, "text/html; charset=utf-8", 200
            raise PermissionError("navigation is not allowed")
        settings = self.run.settings
        if url.startswith(f"{ORIGIN}/media/"):
            key: str | None = unquote(url[len(f"{ORIGIN}/media/") :].split("?", 1)[0])
        else:
            key = media_service.own_media_key(settings, url)
        if key is not None:
            async with self.run.session_factory() as session:
                media = await media_service.find(
                    session=session,
                    key=key,
                    account_id=self.run.account_id,
                    accessible_project_ids=[self.run.project_id],
                )
            data = await media_service.store(settings).read(media.key)
            content_type = media.content_type
        elif url.lower().startswith(("http://", "https://")) and not url.startswith(ORIGIN):
            limit = min(settings.video.max_subresource_bytes, settings.video.max_render_fetch_bytes - self.loaded)
            if limit <= 0:
                raise PermissionError("the render's subresource budget is spent")
            response = (await Fetcher(settings.fetch).get(url, max_bytes=limit)).ensure_success()
            data, content_type = response.content, response.content_type or "application/octet-stream"
        else:
            raise PermissionError("not an allowed subresource")
        self.loaded += len(data)
        if self.loaded > settings.video.max_render_fetch_bytes:
            raise PermissionError("the render's subresource budget is spent")
        return data, content_type, 200


async def _page_html(run: JobRun) -> bytes:
    source: dict[str, str] = run.job_input["source"]
    if "html" in source:
        return source["html"].encode()
    if "key" in source:
        return await media_service.store(run.settings).read(source["key"])
    response = await Fetcher(run.settings.fetch).get(source["url"], max_bytes=run.settings.video.max_subresource_bytes)
    return response.ensure_success().content


def _queued_frames(frames: queue.Queue[Image.Image | None]) -> Iterator[Image.Image]:
    while (frame := frames.get()) is not None:
        yield frame


async def run_hyperframes(run: JobRun) -> media_service.JobOutput:
    """Renders a hyperframes_render job: Chromium screenshots of each seek(t), encoded to H.264 MP4."""
    binary = chromium_path(run.settings)
    if binary is None:
        raise RuntimeError(f"chromium is not installed: {INSTALL_HINT}")
    width, height = SIZE_OF_ASPECT[str(run.job_input["aspect_ratio"])]
    quality = str(run.job_input["quality"])
    if quality == "draft":
        width, height = width // 2, height // 2
    fps = int(run.job_input["fps"])
    total = max(1, math.ceil(float(run.job_input["duration_sec"]) * fps))
    html = await _page_html(run)
    resources = Subresources(run, html)
    # Chromium's helper processes may still be writing the profile as the main one exits: a profile that cannot be
    # removed at once must not fail a render that finished (the temporary directory's parent is cleared anyway).
    with tempfile.TemporaryDirectory(prefix="hyperframes-", ignore_cleanup_errors=True) as profile:
        browser = await DevTools.launch(binary, profile)
        try:
            session = await _open_page(run, browser, resources, (width, height))
            await run.report(5)
            frames: queue.Queue[Image.Image | None] = queue.Queue(maxsize=FRAME_QUEUE)
            encoding = asyncio.create_task(
                asyncio.to_thread(
                    motion.encode_mp4, _queued_frames(frames), size=(width, height), fps=fps, crf=CRF[quality]
                )
            )
            try:
                for number in range(total):
                    run.checkpoint()
                    await _evaluate(browser, session, SEEK_SCRIPT % (number / fps), what=f"seek({number / fps:g})")
                    shot = await browser.send(
                        "Page.captureScreenshot",
                        {"format": "png", "captureBeyondViewport": False, "optimizeForSpeed": True},
                        session=session,
                    )
                    image = Image.open(io.BytesIO(base64.b64decode(shot["data"]))).convert("RGB")
                    if image.size != (width, height):
                        image = image.resize((width, height), Image.Resampling.BILINEAR)
                    await asyncio.to_thread(frames.put, image)
                    if number % fps == 0:
                        await run.report(5 + round(number / total * 90))
            finally:
                # The end marker stops the encoder thread whether the loop finished or not.
                await asyncio.to_thread(frames.put, None)
            data, codec = await encoding
        finally:
            await browser.close()
    return media_service.JobOutput(
        data=data,
        content_type="video/mp4",
        model="chromium",
        details={
            "width": width,
            "height": height,
            "fps": fps,
            "frames": total,
            "duration_seconds": round(total / fps, 3),
            "codec": codec,
            "quality": quality,
        },
    )


async def _evaluate(browser: DevTools, session: str, expression: str, *, what: str) -> Any:
    result = await browser.send(
        "Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True}, session=session
    )
    if "exceptionDetails" in result:
        details = result["exceptionDetails"]
        text = (details.get("exception") or {}).get("description") or details.get("text") or "an exception"
        raise PageFailed(f"the page's {what} threw: {str(text)[:300]}")
    return (result.get("result") or {}).get("value")


async def _open_page(run: JobRun, browser: DevTools, resources: Subresources, size: tuple[int, int]) -> str:
    """A sandboxed page at `size` with the composition loaded and window.__hf ready; its session id."""
    target = await browser.send("Target.createTarget", {"url": "about:blank"})
    our_target = target["targetId"]
    attached = await browser.send("Target.attachToTarget", {"targetId": our_target, "flatten": True})
    session = str(attached["sessionId"])

    async def on_event(message: dict[str, Any]) -> None:
        method = message.get("method")
        if method == "Fetch.requestPaused" and message.get("sessionId") == session:
            await resources.answer(browser, session, message["params"])
        elif method == "Target.targetCreated":
            info = message["params"]["targetInfo"]
            if info.get("type") == "page" and info.get("targetId") != our_target:
                with contextlib.suppress(RuntimeError):
                    await browser.send("Target.closeTarget", {"targetId": info["targetId"]})

    browser.handlers.append(on_event)
    await browser.send("Target.setDiscoverTargets", {"discover": True})
    await browser.send("Browser.setDownloadBehavior", {"behavior": "deny"})
    await browser.send("Page.enable", session=session)
    await browser.send("Network.enable", session=session)
    await browser.send("Network.setBlockedURLs", {"urls": ["ws://*", "wss://*"]}, session=session)
    await browser.send("Fetch.enable", {"patterns": [{"urlPattern": "*", "requestStage": "Request"}]}, session=session)
    await browser.send(
        "Emulation.setDeviceMetricsOverride",
        {"width": size[0], "height": size[1], "deviceScaleFactor": 1, "mobile": False},
        session=session,
    )
    props = json.dumps(run.job_input.get("props") or {})
    await browser.send("Page.addScriptToEvaluateOnNewDocument", {"source": INIT_SCRIPT % props}, session=session)
    navigation = await browser.send("Page.navigate", {"url": PAGE_URL}, session=session)
    if navigation.get("errorText"):
        raise PageFailed(f"the composition did not load: {navigation['errorText']}")
    deadline = asyncio.get_running_loop().time() + run.settings.video.page_ready_seconds
    while not await _evaluate(browser, session, READY_SCRIPT, what="start"):
        run.checkpoint()
        if asyncio.get_running_loop().time() > deadline:
            raise PageFailed("page does not expose window.__hf")
        await asyncio.sleep(0.1)
    return session


JOB_TYPES = (JobType(name="hyperframes_render", run=media_service.media_runner(run_hyperframes)),)
