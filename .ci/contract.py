"""The contract run: schemathesis over every operation of /v1/openapi.json against the real app.

`make contract` runs it (CI runs it after `make test`). It serves the app from a fresh SQLite database whose
first-start bootstrap made an agency account with an mcp:full key (every scope), the job worker off and rate
limits off, then sends a few generated requests to each operation and checks every answer: no server error,
and the status, content type, headers and body the document promises. Exits with schemathesis' status.

The Makefile runs it inside a network namespace of its own (`unshare --net`): generated arguments carry URLs,
and no request of the run may leave the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from toolhost.catalog import build_registry
from toolhost.config import load_settings
from toolhost.db.migrate import upgrade
from toolhost.domains.distribution import accounts as connected_accounts
from toolhost.platform import accounts
from toolhost.platform.fields import SOCIAL_PLATFORMS
from toolhost.platform.runtime import build_platform

CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
)
STARTUP_SECONDS = 60
# The webhook receiver of the seeded accounts: nothing listens there, and the fetcher allows it (FETCH__ALLOW).
RECEIVER = "127.0.0.1:9"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def bootstrap_key() -> str:
    """Migrates the database the environment names and runs the first-start bootstrap: its mcp:full key.

    The default project also gets a webhook account on every social platform (a receiver on this machine that
    nothing calls: the worker is off), so that scheduling and publishing tools run past "connect an account".
    """
    settings = load_settings()
    platform = build_platform(settings, build_registry())
    try:
        await upgrade(platform.engine)
        async with platform.session_factory() as session, session.begin():
            bootstrapped = await accounts.bootstrap(session, settings=settings)
            if bootstrapped is None:
                raise SystemExit("the contract database was not empty")
            project_id = bootstrapped.project.id
        for social_platform in SOCIAL_PLATFORMS:
            async with platform.session_factory() as session, session.begin():
                await connected_accounts.create(
                    session=session,
                    settings=settings,
                    project_id=project_id,
                    platform=social_platform,
                    connector_name="webhook",
                    fields={"url": f"https://{RECEIVER}/{social_platform}"},
                )
    finally:
        await platform.close()
    return bootstrapped.issued.plaintext


def wait_until_up(base_url: str, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the server exited with status {server.returncode} before it answered")
        try:
            if httpx.get(f"{base_url}/healthz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.2)
    raise SystemExit(f"the server did not answer /healthz within {STARTUP_SECONDS} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-examples", type=int, default=5, help="generated requests per operation and phase")
    # A fixed seed: CI sends the same requests on every run, so a failure it reports is one a developer replays.
    parser.add_argument("--seed", type=int, default=1, help="the generation seed (another one explores further)")
    options, extra = parser.parse_known_args()
    with tempfile.TemporaryDirectory(prefix="toolhost-contract-") as directory:
        port = free_port()
        base_url = f"http://127.0.0.1:{port}"
        os.environ.update(
            {
                "TOOLHOST_DATABASE_URL": f"sqlite+aiosqlite:///{directory}/contract.db",
                "TOOLHOST_SECRET_FILE": f"{directory}/toolhost.secret",
                "TOOLHOST_MEDIA__ROOT": f"{directory}/media",
                "TOOLHOST_HOST": "127.0.0.1",
                "TOOLHOST_PORT": str(port),
                "TOOLHOST_PUBLIC_URL": base_url,
                "TOOLHOST_JOBS__RUN_IN_PROCESS": "false",
                "TOOLHOST_RATELIMIT__ENABLED": "false",
                "TOOLHOST_LOG_LEVEL": "WARNING",
                "TOOLHOST_FETCH__ALLOW": '["127.0.0.1"]',
                "SCHEMATHESIS_HOOKS": "contract_hooks",
                "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).parent), os.environ.get("PYTHONPATH")])),
            }
        )
        key = asyncio.run(bootstrap_key())
        server_log = Path(directory) / "server.log"
        with server_log.open("wb") as log:
            server = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "uvicorn",
                    "toolhost.app:create_app",
                    "--factory",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--log-level",
                    "warning",
                    "--timeout-graceful-shutdown",
                    "5",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
            try:
                wait_until_up(base_url, server)
                command = [
                    sys.executable,
                    "-m",
                    "schemathesis.cli",
                    "run",
                    f"{base_url}/v1/openapi.json",
                    "--header",
                    f"Authorization: Bearer {key}",
                    "--checks",
                    ",".join(CHECKS),
                    "--workers",
                    "1",
                    "--max-examples",
                    str(options.max_examples),
                    "--request-timeout",
                    "60",
                    "--suppress-health-check",
                    "all",
                    "--generation-with-security-parameters",
                    "false",
                    "--generation-database",
                    "none",
                    "--seed",
                    str(options.seed),
                    *extra,
                ]
                started = time.monotonic()
                status = subprocess.run(command, check=False).returncode
                print(f"contract run: schemathesis exited {status} after {time.monotonic() - started:.0f} s")
            finally:
                server.terminate()
                try:
                    server.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    server.kill()
                    server.wait()
        logged = server_log.read_text(errors="replace")
        if "Traceback" in logged:
            # An exception the server logged is a server error too, whatever the answer that went out.
            print(f"contract run: the server logged an exception:\n{logged[-20_000:]}")
            return status or 1
    return status


if __name__ == "__main__":
    sys.exit(main())
