"""execute(): the only way any tool runs, for REST, MCP and CLI alike (ARCHITECTURE.md)."""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import version as package_version
from typing import Any

from pydantic import BaseModel, ValidationError
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from toolhost.config import Settings
from toolhost.platform import credits, policy, scopes
from toolhost.platform.context import Principal, ToolContext
from toolhost.platform.models import Account, UsageRecord
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
    """One call in flight: who, how, and what it resolved, for its usage record."""

    name: str
    principal: Principal
    transport: str
    request_id: str
    project_id: uuid.UUID | None = None
    started: float = field(default_factory=time.perf_counter)

    def usage_record(self, *, outcome: str, credits: int, assets: int) -> UsageRecord:
        return UsageRecord(
            account_id=self.principal.account_id,
            project_id=self.project_id,
            credential_id=self.principal.credential_id,
            tool_name=self.name,
            transport=self.transport,
            outcome=outcome,
            credits=credits,
            assets=assets,
            duration_ms=int((time.perf_counter() - self.started) * 1000),
            run_id=self.principal.run_id,
            request_id=self.request_id,
        )


def new_request_id() -> str:
    """A request id for logs and error bodies."""
    return "req_" + uuid.uuid4().hex


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
    ) -> None:
        self.registry = registry
        self.settings = settings
        self.session_factory = session_factory
        self.rate_limiter = rate_limiter
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
            return Execution(result=await self._run(spec, args, call))
        except ToolError as error:
            execution = self._failure(error, request_id)
        except Exception:
            logger.exception("tool %s failed unexpectedly [%s]", name, request_id)
            execution = self._failure(
                ServerFailed(f"internal error; quote request id {request_id} when reporting it"), request_id
            )
        if spec is not None:
            await self._record_failure(call, execution)
        return execution

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
        try:
            args = spec.input_model.model_validate(arguments)
        except ValidationError as error:
            errors = field_errors(error)
            raise ValidationFailed(validation_message(errors), field_errors=errors) from None
        if self.settings.policy.input == "block":
            findings = policy.scan(spec.name, arguments)
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
        async with self.session_factory() as session:
            try:
                projects = (
                    [] if spec.project == "none" else await self._projects.accessible_projects(session, principal)
                )
                project, auto_resolved = await self._projects.resolve(session, spec, args, principal, projects)
                call.project_id = project.id if project else None
                if not (spec.resume_argument and getattr(args, spec.resume_argument) is not None):
                    await self.rate_limiter.check_call(spec, account_id=str(principal.account_id), tier=principal.tier)
                await self._debit(session, spec, principal, cost, assets, call.request_id)
                context = ToolContext(
                    tool_name=spec.name,
                    session=session,
                    principal=principal,
                    project=project,
                    accessible_project_ids=[item.id for item in projects],
                    settings=self.settings,
                    request_id=call.request_id,
                    session_factory=self.session_factory,
                    waits=spec.waits,
                    credits_debited=cost,
                )
                try:
                    async with self.rate_limiter.in_flight(spec, account_id=str(principal.account_id)):
                        output = await spec.handler(context, args)
                except ToolError as error:
                    error.raised_by_handler = True
                    raise
                result = self._render(spec, args, output, auto_resolved)
                # A success is recorded with the work it paid for: one commit, one usage record.
                session.add(call.usage_record(outcome="ok", credits=context.credits_debited, assets=assets))
                await session.commit()
            except BaseException:
                await session.rollback()
                raise
        return result

    async def _debit(
        self,
        session: AsyncSession,
        spec: ToolSpec,
        principal: Principal,
        cost: int,
        assets: int,
        request_id: str,
    ) -> None:
        if cost <= 0 and assets <= 0:
            return
        await self._check_run_budget(session, principal, cost, assets)
        if cost <= 0:
            return
        account = await session.get(Account, principal.account_id)
        if account is None:
            raise NotFound("account not found")
        if account.tier == "trial":
            if account.trial_ends_at is not None and account.trial_ends_at <= datetime.now(UTC):
                raise BillingFailed(
                    "trial ended: calls that cost credits need a paid tier",
                    recover_with="upgrade the account's tier",
                    balance=account.credit_balance,
                    required_credits=cost,
                )
        else:
            await credits.roll_period(
                session,
                account_id=account.id,
                tier=account.tier,
                allocation=self.settings.credits.allocations[account.tier],
            )
        await credits.debit(session, account_id=account.id, amount=cost, tool_name=spec.name, reference=request_id)

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
        """A failed call's usage, in a transaction of its own (the call's own was rolled back)."""
        assert execution.error is not None
        record = call.usage_record(outcome=execution.error.error_type, credits=0, assets=0)
        record.error_message = execution.error.message[:500]
        try:
            async with self.session_factory() as session, session.begin():
                session.add(record)
        except Exception:
            logger.exception("could not record usage of %s [%s]", call.name, call.request_id)


async def run_usage(session: AsyncSession, principal: Principal) -> tuple[int, int]:
    """Credits and assets spent so far in the principal's run (a call without a run is a run of its own)."""
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
    return int(row[0]), int(row[1])
