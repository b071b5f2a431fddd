"""execute(): the only way any tool runs, for REST, MCP and CLI alike (ARCHITECTURE.md).

Kept as one module past 500 lines on purpose: the steps of a call (lookup, scope, validation, policy, project,
limits, idempotency, hold, handler, settlement, observation) are one path in one order, read top to bottom.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from importlib.metadata import version as package_version
from typing import Any

import uuid_utils
from pydantic import BaseModel, ValidationError
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from toolhost.config import Settings
from toolhost.db.point_reads import PointReader
from toolhost.db.session import call_scope
from toolhost.platform import credits, policy, scopes
from toolhost.platform.context import Principal, ToolContext
from toolhost.platform.models import Account, CreditHold, UsageRecord
from toolhost.platform.observability import CallObserver, FinishedCall
from toolhost.platform.ratelimit import RateLimiter
from toolhost.platform.redaction import redact, redact_text
from toolhost.platform.registry import Registry, ToolOutput, ToolSpec
from toolhost.platform.results import (
    BillingFailed,
    NotFound,
    PermissionDenied,
    PolicyBlocked,
    ServerFailed,
    ToolError,
    ValidationFailed,
    bare_text,
    envelope_text,
    error_result,
    success_result,
)
from toolhost.platform.tenancy import ProjectResolver
from toolhost.platform.usage import UsageRecorder

logger = logging.getLogger("toolhost.execution")
VERSION = package_version("toolhost")


@dataclass(slots=True)
class Execution:
    """A finished call: the ToolResult, the HTTP status it maps to, and headers (Retry-After)."""

    result: dict[str, Any]
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    error: ToolError | None = None


@dataclass(slots=True)
class _Call:
    """One call in flight: who, how, what it resolved, and its hold, for its settlement and usage record."""

    name: str
    principal: Principal
    transport: str
    request_id: str
    project_id: uuid.UUID | None = None
    hold_id: uuid.UUID | None = None
    credits: int = 0
    started: float = field(default_factory=time.perf_counter)

    def usage_record(
        self, *, outcome: str, credits: int, assets: int, error_message: str | None = None
    ) -> dict[str, Any]:
        """The call's UsageRecord columns but its id (the row's default, or the batch's when queued)."""
        return {
            "account_id": self.principal.account_id,
            "project_id": self.project_id,
            "credential_id": self.principal.credential_id,
            "tool_name": self.name,
            "transport": self.transport,
            "outcome": outcome,
            "credits": credits,
            "assets": assets,
            "duration_ms": int((time.perf_counter() - self.started) * 1000),
            "run_id": self.principal.run_id,
            "request_id": self.request_id,
            "error_message": error_message,
            "created_at": datetime.now(UTC),
        }


def new_request_id() -> str:
    """A request id for logs, error bodies and usage rows: a UUIDv7's hex, unique and ordered by time.

    Ordered, the usage table's index on request ids grows at its end instead of rewriting pages all over it
    each flush; and uuid_utils draws it without the system call per id that secrets.token_hex made.
    """
    return "req_" + uuid_utils.uuid7().hex


def field_errors(error: ValidationError) -> list[dict[str, str]]:
    """Pydantic errors as `{path, message}` with dotted paths."""
    errors = []
    for item in error.errors(include_url=False):
        path = ""
        for part in item["loc"]:
            path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
        errors.append({"path": path or "$", "message": item["msg"]})
    return errors


def validation_message(errors: list[dict[str, str]]) -> str:
    """One sentence naming the first offending fields."""
    shown = "; ".join(f"{error['path']}: {error['message']}" for error in errors[:3])
    more = f" (+{len(errors) - 3} more)" if len(errors) > 3 else ""
    return f"invalid arguments: {shown}{more}"


class Executor:
    """Runs tools: lookup, scope, validation, policy, project, limits, credits, handler, usage."""

    def __init__(
        self,
        *,
        registry: Registry,
        settings: Settings,
        session_factory: async_sessionmaker[AsyncSession],
        rate_limiter: RateLimiter,
        usage: UsageRecorder,
        point_reads: PointReader,
        observer: CallObserver,
    ) -> None:
        self.registry = registry
        self.settings = settings
        self.session_factory = session_factory
        self.rate_limiter = rate_limiter
        self.usage = usage
        self.point_reads = point_reads
        self.observer = observer
        self.hold_lifetime = timedelta(seconds=settings.credits.hold_seconds)
        self.hold_keeper = credits.HoldKeeper(session_factory=session_factory, lifetime=self.hold_lifetime)
        self._projects = ProjectResolver(registry)

    async def execute(
        self,
        name: str,
        arguments: Any,
        principal: Principal,
        *,
        transport: str,
        request_id: str | None = None,
    ) -> Execution:
        """Runs one tool call for an authenticated principal and returns its result; never raises."""
        request_id = request_id or new_request_id()
        call = _Call(name=name, principal=principal, transport=transport, request_id=request_id)
        spec = self.registry.get(name)
        try:
            if spec is None:
                raise NotFound(f"Unknown tool '{name}'", recover_with="call search_tools to see the tools you can use")
            self._check_scope(spec, principal)
            args = self._validate(spec, arguments)
            with call_scope():
                execution = Execution(result=await self._run(spec, args, call))
        except ToolError as error:
            execution = self._failure(error, request_id)
        except asyncio.CancelledError:
            self._observe(call, known_tool=spec is not None, execution=None)
            raise
        except Exception:
            logger.exception("tool %s failed unexpectedly [%s]", name, request_id)
            execution = self._failure(
                ServerFailed(f"internal error; quote request id {request_id} when reporting it"), request_id
            )
        if spec is not None and execution.error is not None:
            await self._record_failure(call, execution)
        self._observe(call, known_tool=spec is not None, execution=execution)
        return execution

    def _observe(self, call: _Call, *, known_tool: bool, execution: Execution | None) -> None:
        """The call's metrics and log line; `execution` None: the client went away before it ended."""
        error = execution.error if execution is not None else None
        self.observer.finished(
            FinishedCall(
                request_id=call.request_id,
                tool=call.name,
                known_tool=known_tool,
                transport=call.transport,
                account_id=call.principal.account_id,
                credential_id=call.principal.credential_id,
                project_id=call.project_id,
                run_id=call.principal.run_id,
                outcome="cancelled" if execution is None else ("ok" if error is None else "error"),
                error_type=error.error_type if error is not None else None,
                status=execution.status if execution is not None else 499,
                seconds=time.perf_counter() - call.started,
                credits=call.credits,
            )
        )

    def _check_scope(self, spec: ToolSpec, principal: Principal) -> None:
        if not scopes.satisfies(principal.scopes, spec.scope):
            raise PermissionDenied(
                f"{spec.name} needs scope {spec.scope}",
                recover_with="call search_tools with available_only=true",
                required_scope=spec.scope,
                available_scopes=scopes.display(principal.scopes),
            )

    def _validate(self, spec: ToolSpec, arguments: Any) -> BaseModel:
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise ValidationFailed(
                "the arguments must be a JSON object",
                field_errors=[{"path": "$", "message": "expected a JSON object"}],
            )
        policy.refuse_unstorable_text(arguments)
        try:
            args = spec.input_model.model_validate(arguments)
        except ValidationError as error:
            errors = field_errors(error)
            raise ValidationFailed(validation_message(errors), field_errors=errors) from None
        if self.settings.policy.input == "block":
            findings = policy.scan(spec, arguments)
            if findings:
                raise PolicyBlocked(
                    "the arguments contain blocked patterns: "
                    + ", ".join(sorted({f"{finding.pattern} at {finding.path}" for finding in findings})),
                    recover_with="remove the invisible characters or instruction-like phrases and call again",
                    blocked_patterns=[finding.as_dict() for finding in findings],
                )
        return args

    def cost_of(self, spec: ToolSpec, args: BaseModel) -> int:
        """Credits this call costs: the operator's override, else the tool's own rule."""
        override = self.settings.credits.costs.get(spec.name)
        if override is not None:
            units = spec.units(args) if spec.units else 0
            return override.base + override.per * units
        return spec.credits if isinstance(spec.credits, int) else spec.credits(args)

    async def _run(self, spec: ToolSpec, args: BaseModel, call: _Call) -> dict[str, Any]:
        cost = self.cost_of(spec, args)
        assets = spec.assets(args) if spec.assets else 0
        principal = call.principal
        context = ToolContext(
            tool_name=spec.name,
            principal=principal,
            settings=self.settings,
            request_id=call.request_id,
            session_factory=self.session_factory,
            usage=self.usage,
            point_reads=self.point_reads,
            registry=self.registry,
        )
        claimed = False
        try:
            if spec.project != "none":
                projects = await self._projects.accessible_projects(context.session, principal)
                context.accessible_project_ids = [item.id for item in projects]
                project, auto_resolved = await self._projects.resolve(context.session, spec, args, principal, projects)
                context.project = project
                call.project_id = project.id if project else None
            else:
                auto_resolved = None
            if not (spec.resume_argument and getattr(args, spec.resume_argument) is not None):
                await self.rate_limiter.check_call(spec, account_id=str(principal.account_id), tier=principal.tier)
            if spec.idempotency is not None:
                # A repeat is answered from what its first call stored before any credit moves: a repeat costs
                # nothing, so an account without credits still gets its answer (CATALOG.md §1.7).
                await context.commit()
                stored = await spec.idempotency.claim(context, args)
                if stored is not None:
                    self.usage.add(call.usage_record(outcome="ok", credits=0, assets=0))
                    return self._render(spec, args, stored, auto_resolved)
                claimed = True
            if cost > 0 or assets > 0:
                await self._hold(context.session, spec, principal, cost, assets, call)
                context.credits_debited = cost if call.hold_id is not None else 0
            try:
                async with self.rate_limiter.in_flight(spec, account_id=str(principal.account_id)):
                    output = await spec.handler(context, args)
            except ToolError as error:
                error.raised_by_handler = True
                raise
            result = self._render(spec, args, output, auto_resolved)
            call.credits = context.credits_debited
            usage = call.usage_record(outcome="ok", credits=context.credits_debited, assets=assets)
            # A free call is recorded in a batch; one that paid or made assets counts toward run budgets now.
            if call.hold_id is None and context.credits_debited_beyond_hold == 0 and assets == 0:
                await context.commit()
                self.usage.add(usage)
                return result
            # A call that paid commits its last unit of work, its settlement and its usage record together.
            session = context.session
            await self._settle(session, call, owed=context.credits_debited, beyond=context.credits_debited_beyond_hold)
            session.add(UsageRecord(**usage))
            await session.commit()
            self._forget_hold(call)
            return result
        except asyncio.CancelledError:
            await self._discard(context)
            # The client went away mid-call: the settlement must still happen, whatever else is cancelled.
            await asyncio.shield(self._settle_failure(call, outcome="cancelled", message="cancelled by the client"))
            if claimed:
                await asyncio.shield(self._release_claim(spec, context, args))
            raise
        except BaseException:
            await self._discard(context)
            if claimed:
                await self._release_claim(spec, context, args)
            raise
        finally:
            await _close(context.opened_session)

    @staticmethod
    async def _release_claim(spec: ToolSpec, context: ToolContext, args: BaseModel) -> None:
        """Gives back a failed call's claim on its idempotency key, so a retry of the request runs afresh."""
        assert spec.idempotency is not None
        try:
            await spec.idempotency.release(context, args)
        except Exception:
            # The claim stays until it lapses; until then a repeat waits for it, then is told to call again.
            logger.exception("could not release the idempotency claim of %s [%s]", spec.name, context.request_id)

    @staticmethod
    async def _discard(context: ToolContext) -> None:
        """Rolls back a failed call's unit of work by closing its session, which detaches the rows it loaded
        as they were (a rollback would expire them), so the project stays readable to the claim's release."""
        if context.opened_session is not None:
            await context.opened_session.close()

    async def _hold(
        self,
        session: AsyncSession,
        spec: ToolSpec,
        principal: Principal,
        cost: int,
        assets: int,
        call: _Call,
    ) -> None:
        """Places the call's hold and commits it at once, so the account row is not locked while the handler runs."""
        await self._check_run_budget(session, principal, cost, assets)
        if cost <= 0:
            return
        account = await session.get(Account, principal.account_id)
        if account is None:
            raise NotFound("account not found")
        period = account.credit_period
        if account.tier == "trial":
            if account.trial_ends_at is not None and account.trial_ends_at <= datetime.now(UTC):
                raise BillingFailed(
                    "trial ended: calls that cost credits need a paid tier",
                    recover_with="upgrade the account's tier",
                    balance=account.credit_balance,
                    required_credits=cost,
                )
        else:
            period = credits.period_of(datetime.now(UTC))
            # The period was read without a lock: only the roll changes it, and only forwards, so a current one
            # stays current, and this call skips the roll's wait on the account row another call may hold.
            if account.credit_period != period:
                await credits.roll_period(
                    session,
                    account_id=account.id,
                    tier=account.tier,
                    allocation=self.settings.credits.allocations[account.tier],
                )
        hold_id = await credits.place_hold(
            session,
            account_id=account.id,
            period=period,
            amount=cost,
            tool_name=spec.name,
            reference=call.request_id,
            run_id=principal.run_id,
            lifetime=self.hold_lifetime,
        )
        await session.commit()
        call.hold_id = hold_id
        self.hold_keeper.track(hold_id)

    async def _settle(self, session: AsyncSession, call: _Call, *, owed: int, beyond: int) -> None:
        """A successful call's settlement: keeps what it owes of its hold and beyond it; returns the rest."""
        owed = max(0, owed)
        if call.hold_id is not None:
            returned = await credits.settle_hold(session, hold_id=call.hold_id, charged=owed - beyond, outcome="ok")
            if returned is None and owed > beyond:
                # The hold expired and was returned while the call still ran (its process looked dead): the
                # settlement charges what is owed anew, and gives the work away if the balance no longer covers it.
                try:
                    async with session.begin_nested():
                        await credits.debit(
                            session,
                            account_id=call.principal.account_id,
                            amount=owed - beyond,
                            tool_name=call.name,
                            reference=call.request_id,
                        )
                except BillingFailed:
                    logger.warning("call %s outlived its hold and could not be charged", call.request_id)
        if beyond > owed:
            await credits.refund(
                session,
                account_id=call.principal.account_id,
                amount=beyond - owed,
                tool_name=call.name,
                reference=call.request_id,
            )

    def _forget_hold(self, call: _Call) -> None:
        if call.hold_id is not None:
            self.hold_keeper.forget(call.hold_id)
            call.hold_id = None

    async def _settle_failure(self, call: _Call, *, outcome: str, message: str) -> None:
        """A failed call's hold returned in full and its usage record, in a transaction of their own."""
        record = call.usage_record(outcome=outcome, credits=0, assets=0, error_message=message[:500])
        if call.hold_id is None:
            self.usage.add(record)
            return
        try:
            async with self.session_factory() as session, session.begin():
                # Only the hold goes back: a charge beyond it was either rolled back with its unit of work or
                # committed with the work it paid for, which stays.
                await credits.settle_hold(session, hold_id=call.hold_id, charged=0, outcome=outcome)
                session.add(UsageRecord(**record))
            self._forget_hold(call)
        except Exception:
            # The hold stays open and expires; the worker then returns it (release_expired_holds).
            logger.exception("could not settle the hold of %s [%s]", call.name, call.request_id)

    async def _check_run_budget(self, session: AsyncSession, principal: Principal, cost: int, assets: int) -> None:
        budget = self.settings.credits
        max_credits = (
            budget.max_credits_per_run if budget.max_credits_per_run and budget.max_credits_per_run > 0 else None
        )
        max_assets = budget.max_assets_per_run if budget.max_assets_per_run and budget.max_assets_per_run > 0 else None
        if max_credits is None and max_assets is None:
            return
        used_credits, used_assets = await run_usage(session, principal)
        if max_credits is not None and used_credits + cost > max_credits:
            raise BillingFailed(
                f"this call ({cost} credits) would pass the run's budget of {max_credits} credits",
                recover_with="start a new run or raise credits.max_credits_per_run",
                credits_used_this_run=used_credits,
                estimated_call_cost=cost,
                max_credits_per_run=max_credits,
            )
        if max_assets is not None and used_assets + assets > max_assets:
            raise BillingFailed(
                f"this call ({assets} assets) would pass the run's budget of {max_assets} assets",
                recover_with="start a new run or raise credits.max_assets_per_run",
                assets_generated_this_run=used_assets,
                estimated_call_assets=assets,
                max_assets_per_run=max_assets,
            )

    def _render(self, spec: ToolSpec, args: BaseModel, output: ToolOutput, auto_resolved: str | None) -> dict[str, Any]:
        payload = output.model_dump(mode="json", by_alias=True)
        if auto_resolved is not None and "project_auto_resolved" in type(output).model_fields:
            payload["project_auto_resolved"] = auto_resolved
        payload = redact(payload)
        if spec.response_format is not None:
            requested = getattr(args, "response_format", None) or spec.response_format
            shape = "summary" if requested == "text" else spec.text_shape
        else:
            shape = spec.text_shape
        if shape == "summary":
            text = redact_text(output.summary())
        elif shape == "bare":
            text = bare_text(payload)
        else:
            text = envelope_text(output.envelope_data(payload), VERSION)
        return success_result(text, payload, redact(output.extra_content()))

    def _failure(self, error: ToolError, request_id: str) -> Execution:
        headers = {}
        retry_after = error.details.get("retry_after")
        if retry_after is not None:
            headers["Retry-After"] = str(retry_after)
        if error.error_type == "unauthenticated":
            headers["WWW-Authenticate"] = "Bearer"
        return Execution(
            result=error_result(error, request_id), status=error.http_status(), headers=headers, error=error
        )

    async def _record_failure(self, call: _Call, execution: Execution) -> None:
        """A failed call's settlement (its hold returned) and usage record; the call's own work was rolled back."""
        assert execution.error is not None
        await self._settle_failure(call, outcome=execution.error.error_type, message=execution.error.message)


async def _close(session: AsyncSession | None) -> None:
    """Closes a call's session; one that holds nothing (a handler that only asked for it) needs no close."""
    if session is None:
        return
    if session.in_transaction() or session.identity_map or session.new or session.dirty or session.deleted:
        await session.close()


async def run_usage(session: AsyncSession, principal: Principal) -> tuple[int, int]:
    """Credits and assets spent so far in the principal's run, calls still holding credits included.

    A call without a run is a run of its own.
    """
    if principal.run_id is None:
        return 0, 0
    row = (
        await session.execute(
            select(
                func.coalesce(func.sum(UsageRecord.credits), 0),
                func.coalesce(func.sum(UsageRecord.assets), 0),
            ).where(UsageRecord.account_id == principal.account_id, UsageRecord.run_id == principal.run_id)
        )
    ).one()
    held = await session.scalar(
        select(func.coalesce(func.sum(CreditHold.amount), 0)).where(
            CreditHold.account_id == principal.account_id,
            CreditHold.run_id == principal.run_id,
            CreditHold.settled_at.is_(None),
        )
    )
    return int(row[0]) + int(held or 0), int(row[1])
