"""Parallel credit-costing calls of one account: do they overlap, and does a free call still answer at once?

Run: .venv/bin/python bench/parallel_calls.py [--database both|sqlite|postgresql] [--calls 8] [--delay 2]

Target: 8 parallel calls of a credit-costing tool whose outside work takes 2 s, from one account, all
finish within 3 s, on SQLite and on PostgreSQL; a free call made meanwhile answers within 50 ms.

A slow site on 127.0.0.1 (this process) answers every page after `--delay` seconds with a small brand
page: a title, colours in an inline stylesheet, a few paragraphs, and no same-site links, stylesheet
links or logo, so extract_brand (2 credits) fetches exactly one page per call. For each database,
toolhost runs as a single uvicorn worker (uvloop, httptools) on a fresh SQLite file or a freshly
created PostgreSQL database, migrated and bootstrapped as `toolhost serve` does, with the fetch
allowlist open to 127.0.0.1 over http and rate limits off (extract_brand's own limit is 5 a minute).
With the bootstrapped key the bench first makes one get_credit_balance and one extract_brand alone (connection
set-up and the modules a tool imports on first use are start-up costs; the lone call's time is printed apart),
then fires the parallel `POST /v1/tools/extract_brand` calls and, half a second later, one
`POST /v1/tools/get_credit_balance` (free), and prints each call's wall time.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy.ext.asyncio import create_async_engine

# The same server start and bootstrap as the REST throughput bench beside this file.
from tool_call import SETUP, start_server

POSTGRES_ADMIN = os.environ.get("BENCH_POSTGRES_ADMIN", "postgresql+asyncpg://postgres@127.0.0.1:5432/test")
POSTGRES_DATABASE = "toolhost_bench_parallel"
MAX_SECONDS = 3.0
FREE_CALL_SECONDS = 0.050
FREE_CALL_AFTER = 0.5
CALL_TIMEOUT = 120.0

BRAND_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Fernwood Coffee Roasters | Small-batch coffee, roasted weekly</title>
<meta name="description" content="Fernwood roasts single-origin coffee in small batches every Monday and ships it
the same week, so it reaches your cup within days of roasting.">
<meta name="theme-color" content="#2f5d50">
<style>
  :root { --color-primary: #2f5d50; --color-accent: #e07a3f; --color-background: #faf6f0; }
  body { font-family: "Source Sans 3", Helvetica, sans-serif; color: #2b2b2b; background: #faf6f0; }
  h1, h2 { font-family: "Fraunces", Georgia, serif; color: #2f5d50; }
  .button { background: #e07a3f; color: #ffffff; border-radius: 6px; }
  footer { background: #2f5d50; color: #faf6f0; }
</style>
</head>
<body>
<header><h1>Fernwood Coffee Roasters</h1><p>Small-batch coffee, roasted weekly.</p></header>
<main>
<h2>Coffee that tastes like where it grew</h2>
<p>We buy green coffee directly from twelve farms in Ethiopia, Colombia and Guatemala, and we pay them
at least 40% above the fair-trade minimum. Every lot is cupped in our roastery before we commit to it.</p>
<p>Your beans are roasted on Monday and shipped by Wednesday. Most orders arrive within five days of
roasting, which is when a light roast opens up and shows its fruit and sweetness.</p>
<h2>Built for busy mornings</h2>
<p>You want a great cup without fuss. Our subscription lets you pick a roast, a grind and a rhythm, and
pause or skip a delivery whenever you like. No contracts, no hidden fees.</p>
<p>Over 8,000 home baristas trust Fernwood for their daily brew. "The freshest coffee I have ever
ordered online," says Maya, a subscriber since 2021.</p>
<a class="button" href="https://shop.fernwood-coffee.example/subscribe">Start your subscription</a>
</main>
<footer><p>Fernwood Coffee Roasters, roasting in Portland since 2016.</p></footer>
</body>
</html>
"""


class SlowSite:
    """An HTTP/1.1 server on 127.0.0.1 answering every request with the brand page after a delay."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.requests = 0
        self.body = BRAND_PAGE.encode()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readuntil(b"\r\n\r\n")
            self.requests += 1
            await asyncio.sleep(self.delay)
            head = (
                "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
                f"Content-Length: {len(self.body)}\r\nConnection: close\r\n\r\n"
            )
            writer.write(head.encode() + self.body)
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


async def recreate_postgres_database() -> str:
    admin = create_async_engine(POSTGRES_ADMIN, isolation_level="AUTOCOMMIT")
    async with admin.connect() as connection:
        await connection.exec_driver_sql(f'DROP DATABASE IF EXISTS "{POSTGRES_DATABASE}" WITH (FORCE)')
        await connection.exec_driver_sql(f'CREATE DATABASE "{POSTGRES_DATABASE}"')
    await admin.dispose()
    return POSTGRES_ADMIN.rsplit("/", 1)[0] + f"/{POSTGRES_DATABASE}"


async def timed_call(
    client: httpx.AsyncClient, tool_name: str, arguments: dict[str, Any], fired_at: float
) -> tuple[float, str]:
    """Posts one call at `fired_at` (monotonic) and returns its wall time and outcome."""
    await asyncio.sleep(max(0.0, fired_at - time.monotonic()))
    started = time.monotonic()
    response = await client.post(f"/v1/tools/{tool_name}", json=arguments)
    elapsed = time.monotonic() - started
    if response.status_code != 200:
        return elapsed, f"HTTP {response.status_code}"
    body = response.json()
    if body.get("isError"):
        return elapsed, f"error {body.get('error', {}).get('error_type')}"
    return elapsed, "ok"


async def fire(
    port: int, key: str, site_url: str, calls: int
) -> tuple[tuple[float, str], list[tuple[float, str]], tuple[float, str]]:
    """One extract_brand alone, then the parallel extract_brand calls and, half a second in, one get_credit_balance."""
    limits = httpx.Limits(max_connections=calls + 2, max_keepalive_connections=calls + 2)
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{port}",
        headers={"Authorization": f"Bearer {key}"},
        limits=limits,
        timeout=CALL_TIMEOUT,
    ) as client:
        # One call of each tool alone first: connection set-up and the modules a tool imports on its first use
        # are start-up costs, not what the target is about. The lone extract_brand is printed apart.
        await client.post("/v1/tools/get_credit_balance", json={})
        first = await timed_call(client, "extract_brand", {"url": site_url}, time.monotonic())
        start = time.monotonic() + 0.05
        paid = [timed_call(client, "extract_brand", {"url": site_url}, start) for _ in range(calls)]
        free = timed_call(client, "get_credit_balance", {}, start + FREE_CALL_AFTER)
        *paid_results, free_result = await asyncio.gather(*paid, free)
    return first, paid_results, free_result


def bootstrap(environment: dict[str, str]) -> str:
    completed = subprocess.run(
        [sys.executable, "-c", SETUP], env=environment, capture_output=True, text=True, check=True
    )
    return completed.stdout.strip()


async def run_one(label: str, database_url: str, site: SlowSite, site_url: str, arguments: argparse.Namespace) -> bool:
    workdir = Path(tempfile.mkdtemp(prefix="toolhost-bench-parallel-"))
    environment = {
        **os.environ,
        "TOOLHOST_DATABASE_URL": database_url,
        "TOOLHOST_RATELIMIT__ENABLED": "false",
        # PostgreSQL installs name their key file (an SQLite one keeps it beside the database).
        "TOOLHOST_SECRET_FILE": str(workdir / "toolhost.secret"),
        "TOOLHOST_FETCH__ALLOW": '["127.0.0.1"]',
        "TOOLHOST_FETCH__ALLOW_HTTP": "true",
        "TOOLHOST_MEDIA__ROOT": str(workdir / "media"),
        "TOOLHOST_LOG_LEVEL": "WARNING",
        # The server runs in a temporary directory: a relative PYTHONPATH (PYTHONPATH=src) must not change meaning.
        "PYTHONPATH": os.pathsep.join(
            str(Path(entry).resolve()) for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry
        ),
    }
    key = await asyncio.to_thread(bootstrap, environment)
    process, port = await asyncio.to_thread(
        start_server, ["toolhost.app:create_app", "--factory"], environment, workdir
    )
    site.requests = 0
    try:
        first, paid, free = await fire(port, key, site_url, arguments.calls)
    finally:
        process.terminate()
        await asyncio.to_thread(process.wait, 10)
    slowest = max(seconds for seconds, _ in paid)
    all_ok = all(outcome == "ok" for _, outcome in paid) and free[1] == "ok"
    print(f"database: {label}")
    print(f"  first extract_brand after start, alone: {first[0]:6.3f} s  {first[1]}")
    for index, (seconds, outcome) in enumerate(sorted(paid), start=1):
        print(f"  extract_brand call {index}: {seconds:6.3f} s  {outcome}")
    print(f"  slowest extract_brand: {slowest:.3f} s (target <= {MAX_SECONDS:.1f} s)")
    print(
        f"  get_credit_balance fired {FREE_CALL_AFTER:.1f} s in: {free[0] * 1000:.1f} ms {free[1]} "
        f"(target <= {FREE_CALL_SECONDS * 1000:.0f} ms)"
    )
    print(f"  slow-site requests: {site.requests} (one page per call, the lone one included: {arguments.calls + 1})")
    passed = all_ok and slowest <= MAX_SECONDS and free[0] <= FREE_CALL_SECONDS
    print(f"  {'PASS' if passed else 'FAIL'}")
    return passed


async def main(arguments: argparse.Namespace) -> None:
    site = SlowSite(arguments.delay)
    server = await asyncio.start_server(site.handle, "127.0.0.1", 0)
    site_url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/"
    print(
        f"{arguments.calls} parallel extract_brand calls (one account), outside work {arguments.delay:g} s each; "
        "uvicorn --loop uvloop --http httptools --workers 1"
    )
    results: list[bool] = []
    async with server:
        if arguments.database in ("both", "sqlite"):
            sqlite_url = f"sqlite+aiosqlite:///{tempfile.mkdtemp(prefix='toolhost-bench-parallel-')}/bench.db"
            results.append(await run_one("sqlite", sqlite_url, site, site_url, arguments))
        if arguments.database in ("both", "postgresql"):
            postgres_url = await recreate_postgres_database()
            results.append(await run_one("postgresql", postgres_url, site, site_url, arguments))
    print("overall: " + ("PASS" if all(results) else "FAIL"))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database", choices=("both", "sqlite", "postgresql"), default="both")
    parser.add_argument("--calls", type=int, default=8)
    parser.add_argument("--delay", type=float, default=2.0, help="seconds the slow site waits before each page")
    asyncio.run(main(parser.parse_args()))
