"""Publishing benchmark: 10,000 posts due within a minute, N worker processes on PostgreSQL, a local receiver.

Usage:
    .venv/bin/python bench/publish.py [--posts 10000] [--workers 4] [--kill-every 0] [--mix]

Steps: a fresh PostgreSQL database migrated to head; an agency account, a project, credits granted; a
webhook receiver on 127.0.0.1 (records every delivery, de-duplicates on Idempotency-Key); the posts are
created through schedule_post on the real execute() path (credits debited), then their due times are
spread over one minute starting a few seconds ahead; N `run_worker` processes publish them. With
--kill-every S, a random worker is SIGKILLed every S seconds and replaced. With --mix the posts go round the
native connectors on their stand-ins (X, LinkedIn, Facebook, Instagram, Threads, TikTok, Pinterest, Bluesky,
Mastodon) and the webhook, and the report counts each post on the platform side.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import time
import uuid
from collections import Counter, defaultdict
from contextlib import AsyncExitStack
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import create_async_engine
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from connector_mix import CAPTION, ConnectorMix, caption
from tests.domains.distribution.standins import serve

from toolhost.catalog import JOB_TYPES, POLLERS, build_registry
from toolhost.config import load_settings
from toolhost.db.migrate import upgrade
from toolhost.db.session import create_engine
from toolhost.domains.distribution import accounts as accounts_service
from toolhost.domains.distribution.models import Post
from toolhost.platform import accounts, credits, scopes
from toolhost.platform.context import Principal
from toolhost.platform.runtime import build_platform
from toolhost.platform.worker import run_worker

ADMIN_URL = os.environ.get("BENCH_POSTGRES_ADMIN", "postgresql+asyncpg://postgres@127.0.0.1:5432/test")
DATABASE = os.environ.get("BENCH_PUBLISH_DATABASE", "toolhost_bench_publish")
DATABASE_URL = ADMIN_URL.rsplit("/", 1)[0] + f"/{DATABASE}"
BENCH_ENV = {
    "TOOLHOST_ENVIRONMENT": "test",
    "TOOLHOST_SECRET_KEY": "bench-secret-not-for-production-0123456789",
    "TOOLHOST_DATABASE_URL": DATABASE_URL,
    "TOOLHOST_RATELIMIT__ENABLED": "false",
    "TOOLHOST_FETCH__ALLOW": '["127.0.0.1"]',
    "TOOLHOST_FETCH__ALLOW_HTTP": "true",
    "TOOLHOST_JOBS__POLL_INTERVAL": "0.2",
    "TOOLHOST_LOG_LEVEL": "WARNING",
}


class Receiver:
    """Records every delivery with its arrival time; de-duplicates on Idempotency-Key."""

    def __init__(self) -> None:
        self.deliveries = 0
        self.first_seen: dict[str, float] = {}
        self.keys_by_post: dict[str, set[str]] = defaultdict(set)
        self.captions: dict[str, str] = {}

    async def handle(self, request: Request) -> Response:
        arrived = time.time()
        try:
            body = json.loads(await request.body())
        except ClientDisconnect:
            # A worker SIGKILLed mid-request: nothing arrived, and its post is delivered again by key.
            return Response(status_code=499)
        key = request.headers["idempotency-key"]
        self.deliveries += 1
        self.keys_by_post[body["post_id"]].add(key)
        self.first_seen.setdefault(key, arrived)
        self.captions.setdefault(key, body["caption"])
        return JSONResponse({"external_post_id": f"bench-{key[-16:]}"})

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/hook", self.handle, methods=["POST"])])


async def recreate_database() -> None:
    admin = create_async_engine(ADMIN_URL, isolation_level="AUTOCOMMIT")
    async with admin.connect() as connection:
        await connection.exec_driver_sql(f'DROP DATABASE IF EXISTS "{DATABASE}" WITH (FORCE)')
        await connection.exec_driver_sql(f'CREATE DATABASE "{DATABASE}"')
    await admin.dispose()
    engine = create_engine(DATABASE_URL)
    await upgrade(engine)
    await engine.dispose()


async def create_posts(receiver_url: str, count: int, mix: ConnectorMix | None) -> tuple[str, float, dict[int, str]]:
    """Account, project, credits, the accounts to publish through (the webhook's, or one per connector of the
    mix); then `count` schedule_post calls through execute(). Returns the connector of each post too."""
    settings = load_settings()
    platform = build_platform(settings, build_registry())
    async with platform.session_factory() as session, session.begin():
        account = await accounts.create_account(session, name="bench", tier="agency", settings=settings)
        project = await accounts.create_project(session, account_id=account.id, name="bench")
        await credits.grant(session, account_id=account.id, amount=count + 10)
        if mix is None:
            await accounts_service.create(
                session=session,
                settings=settings,
                project_id=project.id,
                platform="twitter",
                connector_name="webhook",
                fields={"url": receiver_url},
            )
    principal = Principal(
        account_id=account.id,
        tier="agency",
        credential_id=None,
        credential_name="bench",
        scopes=frozenset(scopes.LEAF_SCOPES),
        project_id=project.id,
    )
    media: dict[str, str] = {}
    if mix is not None:
        await mix.connect(platform, project.id, receiver_url)
        media = await mix.upload_media(platform, principal)
    far = (datetime.now(UTC) + timedelta(days=1)).isoformat()
    limiter = asyncio.Semaphore(16)
    failures: list[Any] = []
    connectors: dict[int, str] = {}

    async def one(index: int) -> None:
        connector, arguments = ("webhook", {"platforms": ["twitter"]}) if mix is None else mix.post(index, media)
        connectors[index] = connector
        async with limiter:
            execution = await platform.execute(
                "schedule_post",
                {
                    "caption": caption(index),
                    "schedule_at": far,
                    "idempotency_key": f"bench-{index:06d}-{uuid.uuid4().hex[:8]}",
                    **arguments,
                },
                principal,
                transport="cli",
            )
            if execution.result["isError"]:
                failures.append(execution.result["structuredContent"])

    started = time.perf_counter()
    await asyncio.gather(*(one(index) for index in range(count)))
    elapsed = time.perf_counter() - started
    if failures:
        raise SystemExit(f"{len(failures)} schedule_post calls failed, first: {failures[0]}")
    await platform.close()
    return str(project.id), elapsed, connectors


async def spread_due_times(count: int, lead_seconds: float, window: float) -> datetime:
    """Makes the posts due within `window` seconds from `lead_seconds` ahead, evenly, in creation order."""
    engine = create_engine(DATABASE_URL)
    start = datetime.now(UTC) + timedelta(seconds=lead_seconds)
    async with engine.begin() as connection:
        await connection.execute(
            text(
                "WITH ordered AS (SELECT id, row_number() OVER (ORDER BY created_at, id) - 1 AS n "
                "FROM posts), due AS (SELECT id, CAST(:start AS timestamptz) "
                "+ make_interval(secs => n * CAST(:step AS float8)) AS at FROM ordered) "
                "UPDATE posts SET scheduled_at = due.at, due_at = due.at FROM due WHERE posts.id = due.id"
            ),
            {"start": start, "step": window / count},
        )
        # A post is claimed through its publish job, which is due when the post is.
        await connection.execute(
            text("UPDATE jobs SET run_after = posts.due_at FROM posts WHERE jobs.id = posts.job_id")
        )
    await engine.dispose()
    return start


def start_worker() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, __file__, "--worker"], env={**os.environ, **BENCH_ENV})


def start_supervisor(processes: int) -> subprocess.Popen[bytes]:
    """`toolhost worker --processes N`: one parent that forks the workers and replaces a dead one."""
    command = [sys.executable, "-c", "from toolhost.cli import main; main()", "worker", "--processes", str(processes)]
    return subprocess.Popen(command, env={**os.environ, **BENCH_ENV})


def children_of(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as listing:
        return [int(child) for child in listing.read().split()]


class Workers:
    """The worker processes under test: N started by the bench (a killed one restarted as a new process, as
    systemd or Kubernetes would) or N forked by one supervisor (a killed one replaced by the supervisor)."""

    def __init__(self, count: int, *, supervised: bool) -> None:
        self.supervisor = start_supervisor(count) if supervised else None
        self.processes = [] if supervised else [start_worker() for _ in range(count)]

    def kill_one(self) -> None:
        if self.supervisor is not None:
            children = children_of(self.supervisor.pid)
            if children:
                os.kill(random.choice(children), signal.SIGKILL)
            return
        victim = random.randrange(len(self.processes))
        self.processes[victim].send_signal(signal.SIGKILL)
        self.processes[victim].wait()
        self.processes[victim] = start_worker()

    def stop(self) -> None:
        running = [self.supervisor] if self.supervisor is not None else self.processes
        for process in running:
            process.send_signal(signal.SIGTERM)
        for process in running:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()


async def worker_main() -> None:
    platform = build_platform(load_settings(), build_registry())
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    try:
        await run_worker(platform, pollers=POLLERS, job_types=JOB_TYPES, stop_event=stop)
    finally:
        await platform.close()


async def database_counts() -> dict[str, int]:
    engine = create_engine(DATABASE_URL)
    async with engine.connect() as connection:
        rows = await connection.execute(select(Post.status, func.count()).group_by(Post.status))
        counts = {status: count for status, count in rows}
    await engine.dispose()
    return counts


async def due_times() -> dict[str, tuple[str, datetime, int]]:
    """Each post's idempotency key, due time and the number of times a worker claimed it."""
    engine = create_engine(DATABASE_URL)
    async with engine.connect() as connection:
        rows = await connection.execute(select(Post.id, Post.idempotency_key, Post.due_at, Post.attempt))
        found = {str(row.id): (row.idempotency_key, row.due_at, row.attempt) for row in rows}
    await engine.dispose()
    return found


async def claimed_again() -> int:
    """Posts claimed more than once: a worker died (or lost its lease) while publishing them."""
    engine = create_engine(DATABASE_URL)
    async with engine.connect() as connection:
        count = await connection.scalar(select(func.count()).select_from(Post).where(Post.attempt > 1))
    await engine.dispose()
    return int(count or 0)


async def failed_indices() -> set[int]:
    """The posts (by caption number) toolhost recorded as failed."""
    engine = create_engine(DATABASE_URL)
    async with engine.connect() as connection:
        rows = await connection.execute(select(Post.caption).where(Post.status == "failed"))
        found = {int(match.group(1)) for (text,) in rows if (match := CAPTION.search(text or "")) is not None}
    await engine.dispose()
    return found


async def failure_reasons() -> Counter[str]:
    """The errors of the posts that failed, as the post rows keep them."""
    engine = create_engine(DATABASE_URL)
    async with engine.connect() as connection:
        rows = await connection.execute(select(Post.error).where(Post.status == "failed"))
        reasons = Counter(str(error)[:160] for (error,) in rows)
    await engine.dispose()
    return reasons


async def main(arguments: argparse.Namespace) -> None:
    os.environ.update(BENCH_ENV)
    if arguments.kill_every:
        os.environ["TOOLHOST_JOBS__LEASE_SECONDS"] = str(arguments.lease)
    await recreate_database()
    receiver = Receiver()
    mix = (
        ConnectorMix(lambda: list(receiver.captions.values()), answer_delay=arguments.answer_delay)
        if arguments.mix
        else None
    )
    async with AsyncExitStack() as stack:
        base = await stack.enter_async_context(serve(receiver.app()))
        if mix is not None:
            await mix.start(stack)
            os.environ.update(mix.environment())
        _, creation_seconds, connectors = await create_posts(f"{base}/hook", arguments.posts, mix)
        print(f"created {arguments.posts} posts through schedule_post in {creation_seconds:.1f} s")
        workers = Workers(arguments.workers, supervised=arguments.supervised)
        kills = 0
        try:
            start = await spread_due_times(arguments.posts, lead_seconds=5, window=arguments.window)
            deadline = time.time() + 5 + arguments.window + arguments.timeout
            next_kill = time.time() + arguments.kill_every if arguments.kill_every else None
            while time.time() < deadline:
                await asyncio.sleep(0.5)
                if next_kill is not None and time.time() >= next_kill:
                    workers.kill_one()
                    kills += 1
                    next_kill = time.time() + arguments.kill_every
                counts = await database_counts()
                if counts.get("published", 0) + counts.get("failed", 0) >= arguments.posts:
                    break
            unfinished = arguments.posts - counts.get("published", 0) - counts.get("failed", 0)
            if mix is not None and unfinished:
                # The kills stop; the posts they left behind finish, so what is missing at the end is lost, not late.
                print(
                    f"kills stopped with {unfinished} posts unfinished; waiting up to {arguments.settle:g} s for them"
                )
                settle_until = time.time() + arguments.settle
                while time.time() < settle_until:
                    await asyncio.sleep(0.5)
                    counts = await database_counts()
                    if counts.get("published", 0) + counts.get("failed", 0) >= arguments.posts:
                        break
        finally:
            workers.stop()
        counts = await database_counts()
        posts = await due_times()
        held = mix.held() if mix is not None else {}

    mode = "steady"
    if arguments.kill_every:
        mode = f"SIGKILL a worker every {arguments.kill_every}s (lease {arguments.lease}s)"
    started_by = "forked by `toolhost worker --processes`" if arguments.supervised else "separate processes"
    print(
        f"mode: {mode}; {arguments.workers} workers ({started_by}); "
        f"{arguments.posts} posts due over {arguments.window:g} s"
        + ("; a mix of connectors on their stand-ins" if mix is not None else "")
    )
    print(f"database: {json.dumps(counts, sort_keys=True)}")
    if arguments.kill_every:
        print(f"workers killed: {kills}")
    if mix is not None:
        print(f"posts claimed again after a worker died or lost its lease mid-publication: {await claimed_again()}")
        report_mix(connectors, held, await failed_indices())
        for reason, count in (await failure_reasons()).most_common(5):
            print(f"  failed {count}: {reason}")
        return

    unique_posts = {post_id for post_id, keys in receiver.keys_by_post.items() if keys}
    published_twice = sum(1 for keys in receiver.keys_by_post.values() if len(keys) > 1)
    lost = len(set(posts) - unique_posts)
    late_by_claims: dict[bool, list[float]] = {False: [], True: []}
    for key, due, attempt in posts.values():
        if key in receiver.first_seen:
            late_by_claims[attempt > 1].append(max(0.0, receiver.first_seen[key] - due.timestamp()))
    lateness = sorted(late_by_claims[False] + late_by_claims[True])
    last = max(receiver.first_seen.values()) if receiver.first_seen else start.timestamp()
    span = max(last - start.timestamp(), 1e-9)
    p99 = lateness[min(len(lateness) - 1, int(len(lateness) * 0.99))] if lateness else float("nan")
    print(f"published (receiver, unique posts): {len(unique_posts)}")
    print(f"deliveries: {receiver.deliveries}; redeliveries: {receiver.deliveries - len(receiver.first_seen)}")
    print(f"published twice (a post under two keys): {published_twice}")
    print(f"lost: {lost}")
    print(f"publications/s (first due -> last first delivery): {len(unique_posts) / span:.1f}")
    # The workers' processes, all ended and waited for by now (the supervisor's children through it): CPU per
    # publication moves far less with the machine's other work than lateness does.
    spent = os.times()
    worker_seconds = spent.children_user + spent.children_system
    print(f"worker CPU per post: {worker_seconds / max(1, len(unique_posts)) * 1e3:.2f} ms")
    if lateness:
        print(f"lateness after due: p50 {statistics.median(lateness):.3f} s, p99 {p99:.3f} s, max {lateness[-1]:.3f} s")
    # Whether the tail is the posts a dead worker held (claimed again) or a queue the workers could not keep up with.
    for again, label in ((False, "claimed once"), (True, "claimed again")):
        late = sorted(late_by_claims[again])
        if late:
            tail = late[min(len(late) - 1, int(len(late) * 0.99))]
            print(f"  {label}: {len(late)} posts, p50 {statistics.median(late):.3f} s, p99 {tail:.3f} s")


def report_mix(connectors: dict[int, str], held: dict[str, Counter[int]], failed: set[int]) -> None:
    """Per connector: its posts, those its platform holds once, twice or more, and not at all; and the posts
    toolhost recorded as failed although their platform holds them."""
    totals = Counter[str]()
    print(f"{'connector':<10} {'posts':>6} {'once':>6} {'twice+':>7} {'lost':>6}")
    for connector in held:
        indices = [index for index, name in connectors.items() if name == connector]
        once = sum(1 for index in indices if held[connector][index] == 1)
        twice = sum(1 for index in indices if held[connector][index] > 1)
        lost = sum(1 for index in indices if held[connector][index] == 0)
        totals.update({"posts": len(indices), "once": once, "twice": twice, "lost": lost})
        print(f"{connector:<10} {len(indices):>6} {once:>6} {twice:>7} {lost:>6}")
    print(f"{'all':<10} {totals['posts']:>6} {totals['once']:>6} {totals['twice']:>7} {totals['lost']:>6}")
    out_but_failed = sum(1 for index in failed if held[connectors[index]][index] > 0)
    print(f"published twice on the platform side: {totals['twice']}")
    print(f"lost (on no platform): {totals['lost']}")
    print(f"recorded failed although on the platform: {out_but_failed}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--posts", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--kill-every", type=float, default=0.0, help="SIGKILL a worker every N seconds (0: never)")
    parser.add_argument("--window", type=float, default=60.0, help="seconds the due times spread over")
    parser.add_argument("--lease", type=int, default=5, help="lease seconds in kill mode")
    parser.add_argument("--timeout", type=float, default=120.0, help="extra seconds after the minute")
    parser.add_argument(
        "--supervised", action="store_true", help="run the workers as `toolhost worker --processes N` (forked)"
    )
    parser.add_argument(
        "--settle", type=float, default=180.0, help="--mix: seconds the posts left unfinished get once kills stop"
    )
    parser.add_argument(
        "--answer-delay",
        type=float,
        default=0.5,
        help="--mix: seconds each stand-in holds back its answer to a POST after acting on it",
    )
    parser.add_argument(
        "--mix", action="store_true", help="publish through the native connectors on their stand-ins (and the webhook)"
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parsed = parser.parse_args()
    if parsed.worker:
        asyncio.run(worker_main())
    else:
        asyncio.run(main(parsed))
