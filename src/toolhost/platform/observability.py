"""What an operator sees of the service: a JSON log line per tool call, Prometheus metrics, a redacted access log.

Every call of every transport ends in `execute()`, which hands its outcome to one CallObserver: a counter and a
latency histogram per tool, a counter per error type, and one JSON line on the `toolhost.calls` logger (the
lines of the calls that end in one turn of the event loop go out as one record at the end of that turn). Both
live in memory and cost no database round trip; the gauges read from the database (job queue, publish lag) are
read only when /metrics is scraped (`platform/metrics.py`).
"""

from __future__ import annotations

import asyncio
import copy
import logging
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal
from urllib.parse import unquote_plus

import orjson
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from toolhost.platform.redaction import redact_text

CALL_LOGGER = logging.getLogger("toolhost.calls")
# The label of calls naming no registered tool: a caller must not be able to mint a series per made-up name.
UNKNOWN_TOOL = "unknown"
# Seconds; from a cached read (a millisecond) to a generation that runs for minutes.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)
# Query parameters toolhost reads that never carry a secret; the access log shows every other value as redacted.
PLAIN_QUERY_PARAMETERS = frozenset({"scope", "module", "q", "exp", "instance_url"})
REDACTED = "[REDACTED]"


@dataclass(frozen=True, slots=True)
class GaugeReading:
    """One gauge sample read at scrape time: a metric name, its help text, labels and value."""

    name: str
    documentation: str
    value: float
    labels: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class FinishedCall:
    """What the observer is told of a call that ended."""

    request_id: str
    tool: str
    known_tool: bool
    transport: str
    account_id: uuid.UUID
    credential_id: uuid.UUID | None
    project_id: uuid.UUID | None
    run_id: str | None
    outcome: Literal["ok", "error", "cancelled"]
    error_type: str | None
    status: int
    seconds: float
    credits: int


class _ScrapeReadings(Collector):
    """The gauges of the current scrape, handed over right before the registry is rendered."""

    def __init__(self) -> None:
        self.families: list[Metric] = []

    def collect(self) -> Iterable[Metric]:
        return self.families


class CallObserver:
    """Counts, times and logs every finished call of this process; renders its metrics in Prometheus format."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self._calls = Counter(
            "toolhost_tool_calls",
            "Tool calls finished by execute(), by tool and outcome (ok, error, or cancelled by the client).",
            ["tool", "outcome"],
            registry=self.registry,
        )
        self._errors = Counter(
            "toolhost_tool_errors",
            "Tool calls that ended in an error, by tool and error_type (CATALOG.md 1.3).",
            ["tool", "error_type"],
            registry=self.registry,
        )
        self._latency = Histogram(
            "toolhost_tool_call_duration_seconds",
            "Time execute() took per call, by tool (authentication and the HTTP body are not included).",
            ["tool"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self._readings = _ScrapeReadings()
        self.registry.register(self._readings)
        # The labelled children by label values: prometheus_client's labels() takes a lock and checks its
        # arguments on every call, which the call path does not need to repeat.
        self._call_counters: dict[tuple[str, str], Counter] = {}
        self._error_counters: dict[tuple[str, str], Counter] = {}
        self._histograms: dict[str, Histogram] = {}
        self._lines: list[str] = []
        self._writing_on: asyncio.AbstractEventLoop | None = None

    def finished(self, call: FinishedCall) -> None:
        """Counts and times the call, and writes its log line."""
        tool = call.tool if call.known_tool else UNKNOWN_TOOL
        counter = self._call_counters.get((tool, call.outcome))
        if counter is None:
            counter = self._call_counters[(tool, call.outcome)] = self._calls.labels(tool, call.outcome)
        counter.inc()
        histogram = self._histograms.get(tool)
        if histogram is None:
            histogram = self._histograms[tool] = self._latency.labels(tool)
        histogram.observe(call.seconds)
        if call.error_type is not None:
            errors = self._error_counters.get((tool, call.error_type))
            if errors is None:
                errors = self._error_counters[(tool, call.error_type)] = self._errors.labels(tool, call.error_type)
            errors.inc()
        if CALL_LOGGER.isEnabledFor(logging.INFO):
            loop = asyncio.get_running_loop()
            # Also when lines wait for a loop that ended before its turn did (tests run a loop per test).
            if self._writing_on is not loop:
                loop.call_soon(self.write_lines)
                self._writing_on = loop
            self._lines.append(call_line(call))

    def write_lines(self) -> None:
        """Writes the call lines queued so far as one log record (its message one JSON line per call).

        `finished` queues a line and the event loop writes the turn's lines when that turn ends: under load
        one record and one write carry many calls, where a record per call (with its caller lookup, its
        formatting and the stream's flush) cost about a tenth of a cheap call.
        """
        lines, self._lines = self._lines, []
        self._writing_on = None
        if lines:
            CALL_LOGGER.info("\n".join(lines))

    def exposition(self, readings: Iterable[GaugeReading]) -> bytes:
        """This process's metrics and the given gauge readings in the Prometheus text format."""
        families: dict[str, GaugeMetricFamily] = {}
        for reading in readings:
            family = families.get(reading.name)
            if family is None:
                family = families[reading.name] = GaugeMetricFamily(
                    reading.name, reading.documentation, labels=sorted(reading.labels)
                )
            family.add_metric([reading.labels[name] for name in sorted(reading.labels)], reading.value)
        # No await between handing the readings over and rendering them: a concurrent scrape cannot interleave.
        self._readings.families = list(families.values())
        try:
            return generate_latest(self.registry)
        finally:
            self._readings.families = []


def call_line(call: FinishedCall) -> str:
    """The call's JSON log line: who called what, for which project, how it ended, how long, what it cost."""
    # orjson writes the UUIDs and the time itself, several times faster than formatting them here first.
    return orjson.dumps(
        {
            "time": datetime.now(UTC),
            "event": "tool_call",
            "request_id": call.request_id,
            # A name no tool has is the caller's text: bounded, and JSON-escaped like every value here.
            "tool": call.tool[:100],
            "transport": call.transport,
            "account_id": call.account_id,
            "credential_id": call.credential_id,
            "project_id": call.project_id,
            "run_id": call.run_id,
            "outcome": call.outcome,
            "error_type": call.error_type,
            "status": call.status,
            "ms": round(call.seconds * 1000, 1),
            "credits": call.credits,
        },
        option=orjson.OPT_UTC_Z,
        # asyncpg hands out ids of its own UUID type (not uuid.UUID), which orjson writes through str().
        default=str,
    ).decode()


def redact_request_target(target: str) -> str:
    """A request's path and query as the access log may show them: no query value but plain ones, no secret."""
    path, separator, query = target.partition("?")
    path = redact_text(path)
    if not separator:
        return path
    shown = []
    for pair in query.split("&"):
        name, equals, value = pair.partition("=")
        if equals and unquote_plus(name) not in PLAIN_QUERY_PARAMETERS:
            value = REDACTED
        shown.append(f"{name}{equals}{redact_text(value)}")
    return f"{path}?{'&'.join(shown)}"


class AccessLogRedaction(logging.Filter):
    """Rewrites uvicorn's access lines so no credential sent in a URL is ever written (query values, keys)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(
                redact_request_target(value) if isinstance(value, str) else value for value in record.args
            )
        return True


def redact_access_log() -> None:
    """Puts the redaction on uvicorn's access logger (once, whoever configured the logging)."""
    access = logging.getLogger("uvicorn.access")
    if not any(isinstance(existing, AccessLogRedaction) for existing in access.filters):
        access.addFilter(AccessLogRedaction())


def logging_config(level: str) -> dict[str, Any]:
    """uvicorn's logging with toolhost's loggers: messages to stderr, the JSON call lines alone on stdout."""
    from uvicorn.config import LOGGING_CONFIG

    config: dict[str, Any] = copy.deepcopy(LOGGING_CONFIG)
    config["formatters"]["toolhost"] = {
        "()": "uvicorn.logging.DefaultFormatter",
        "fmt": "%(levelprefix)s %(name)s: %(message)s",
    }
    config["formatters"]["json_line"] = {"format": "%(message)s"}
    config["handlers"]["toolhost"] = {
        "class": "logging.StreamHandler",
        "formatter": "toolhost",
        "stream": "ext://sys.stderr",
    }
    config["handlers"]["calls"] = {
        "class": "logging.StreamHandler",
        "formatter": "json_line",
        "stream": "ext://sys.stdout",
    }
    config["loggers"]["toolhost"] = {"handlers": ["toolhost"], "level": level.upper(), "propagate": False}
    config["loggers"]["toolhost.calls"] = {"handlers": ["calls"], "propagate": False}
    return config
