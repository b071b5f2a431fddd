"""GET /v1/openapi.json: a valid OpenAPI 3.1 document generated from the registry, from which clients generate."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate
from pydantic import ValidationError, create_model
from referencing import Registry as SchemaRegistry
from referencing.jsonschema import DRAFT202012
from starlette.applications import Starlette

from tests.conftest import Tenant, settings_for_test
from toolhost.catalog import build_registry
from toolhost.platform import scopes
from toolhost.platform.context import ToolContext
from toolhost.platform.openapi import openapi_document
from toolhost.platform.registry import Registry, ToolInput, ToolOutput, declared_spec, tool

CLIENT_PACKAGE = "toolhost_generated_client"
# Two different models of one class name, as two domains might each define.
NumberEntry = create_model("Entry", value=(int, ...))
TextEntry = create_model("Entry", value=(str, ...))


class ListNumbersIn(ToolInput):
    pass


class ListNumbersOut(ToolOutput):
    entries: list[NumberEntry]


class ListWordsIn(ToolInput):
    pass


class ListWordsOut(ToolOutput):
    entries: list[TextEntry]


def _pascal(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


async def test_the_document_is_public_valid_and_has_a_path_per_tool(client: httpx.AsyncClient) -> None:
    response = await client.get("/v1/openapi.json")
    assert response.status_code == 200
    document = response.json()
    validate(document)
    assert document["openapi"].startswith("3.1")
    assert document["servers"] == [{"url": "http://testserver/v1"}]
    tool_paths = {path for path in document["paths"] if path.startswith("/tools/")}
    assert tool_paths == {f"/tools/{spec.name}" for spec in build_registry().all()}
    operation = document["paths"]["/tools/respond_plan_approval"]["post"]
    assert operation["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/RespondPlanApprovalIn"
    }
    request_schema = document["components"]["schemas"]["RespondPlanApprovalIn"]
    assert set(request_schema["required"]) == {"approval_id", "decision"}
    assert request_schema["properties"]["reason"]["anyOf"][0]["maxLength"] == 1000
    assert document["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"


async def test_a_body_is_required_exactly_where_an_empty_one_is_refused(client: httpx.AsyncClient) -> None:
    document = (await client.get("/v1/openapi.json")).json()
    required = {
        path.removeprefix("/tools/")
        for path, item in document["paths"].items()
        if "post" in item and item["post"]["requestBody"]["required"]
    }
    assert {"respond_plan_approval", "quality_check_plan", "schedule_post"} <= required
    # No required field, but exactly one of url, html or text: an empty body is a validation_error.
    assert "extract_brand" in required
    assert {"get_credit_balance", "list_content_plans"}.isdisjoint(required)


async def test_every_component_is_named_once_with_a_title_that_agrees(client: httpx.AsyncClient) -> None:
    components = (await client.get("/v1/openapi.json")).json()["components"]["schemas"]
    assert all(schema["title"] == name for name, schema in components.items())
    # Models that several tools share are one component, and models of the same name in two domains are not.
    assert {"ScheduleConfig", "BriefPost", "Insight", "CreatedComment", "PlanPostIn", "InlinePlanPost"} <= set(
        components
    )
    assert {"Trend", "TrendChange"} <= set(components)


async def test_a_success_is_typed_by_the_output_model_and_an_error_by_the_error_shape(
    client: httpx.AsyncClient,
) -> None:
    document = (await client.get("/v1/openapi.json")).json()
    components = document["components"]["schemas"]
    responses = document["paths"]["/tools/submit_content_plan_for_approval"]["post"]["responses"]
    assert responses["200"]["content"]["application/json"]["schema"] == {
        "oneOf": [
            {"$ref": "#/components/schemas/SubmitContentPlanForApprovalToolResult"},
            {"$ref": "#/components/schemas/ErrorResult"},
        ]
    }
    success = components["SubmitContentPlanForApprovalToolResult"]
    output_reference = {"$ref": "#/components/schemas/SubmitContentPlanForApprovalOut"}
    assert success["properties"]["structuredContent"] == output_reference
    assert success["properties"]["isError"] == {"const": False}
    assert components["ErrorResult"]["properties"]["isError"] == {"const": True}
    assert set(responses) == {"200", "400", "401", "402", "403", "404", "413", "429", "500"}
    assert all(
        response["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/ErrorResult"}
        for status, response in responses.items()
        if status != "200"
    )
    # The headers an error always carries are declared, as the app sends them.
    assert responses["401"]["headers"]["WWW-Authenticate"] == {"required": True, "schema": {"const": "Bearer"}}
    assert responses["429"]["headers"]["Retry-After"]["required"] is True
    unauthenticated = await client.post("/v1/tools/submit_content_plan_for_approval")
    assert (unauthenticated.status_code, unauthenticated.headers["www-authenticate"]) == (401, "Bearer")
    # Every field of an output is always written, so a client may rely on each one.
    output = components["SubmitContentPlanForApprovalOut"]
    assert set(output["required"]) == set(output["properties"])


UUID = "00000000-0000-4000-8000-000000000000"
PIPELINE = {"platforms": ["twitter"], "topic": "spring launch"}
# (tool, arguments, whether the input model takes them): rules pydantic checks beyond a field's own type.
CONSTRAINED_ARGUMENTS: list[tuple[str, dict[str, Any], bool]] = [
    ("extract_brand", {}, False),
    ("extract_brand", {"url": "https://brand.example"}, True),
    ("extract_brand", {"url": "https://brand.example", "text": "plain copy"}, False),
    ("respond_plan_approval", {"approval_id": UUID, "decision": "edited"}, False),
    ("respond_plan_approval", {"approval_id": UUID, "decision": "edited", "edited_post": {"caption": "c"}}, True),
    ("respond_plan_approval", {"approval_id": UUID, "decision": "approved"}, True),
    ("fetch_youtube_analytics", {"action": "video", "start_date": "2026-01-01", "end_date": "2026-01-31"}, False),
    ("fetch_youtube_analytics", {"action": "channel", "start_date": "2026-01-01", "end_date": "2026-01-31"}, True),
    ("plan_content_week", {"topic": "t", "platforms": ["twitter"], "start_date": "2026-02-30"}, False),
    ("plan_content_week", {"topic": "t", "platforms": ["twitter"], "start_date": "2026-02-28"}, True),
    ("run_content_pipeline", PIPELINE, False),
    ("run_content_pipeline", {**PIPELINE, "schedule_confirmed": True}, True),
    ("run_content_pipeline", {**PIPELINE, "skip_stages": ["schedule"]}, True),
    ("run_content_pipeline", {**PIPELINE, "skip_stages": ["quality"], "schedule_confirmed": True}, False),
    ("run_content_pipeline", {**PIPELINE, "skip_stages": ["quality"], "dry_run": True}, True),
    ("run_content_pipeline", {"platforms": ["twitter"], "topic": "  ", "dry_run": True}, False),
    ("run_content_pipeline", {"platforms": ["twitter"], "source_url": "https://news.example", "dry_run": True}, True),
    ("extract_url_content", {"url": "https://news.example]/"}, False),
    ("extract_url_content", {"url": "https://news.example/a]b?c[]=1"}, True),
    ("extract_url_content", {"url": "https://[2001:db8::1]:8443/feed"}, True),
    ("check_status", {"job_id": "job 1!"}, False),
    ("check_status", {"job_id": "job_1"}, True),
    ("reply_to_comment", {"parent_id": "c1", "text": "   "}, False),
    ("reply_to_comment", {"parent_id": "   ", "text": "thanks"}, False),
    ("reply_to_comment", {"parent_id": "c1", "text": "thanks"}, True),
    ("schedule_post", {"platforms": ["twitter"], "media_urls": ["https://a.example/1.png"]}, False),
    ("schedule_post", {"platforms": ["twitter"], "media_urls": ["https://a.example/1.png"] * 2}, True),
    ("schedule_post", {"platforms": ["twitter"], "account_ids": {"myspace": UUID}}, False),
    ("schedule_post", {"platforms": ["twitter"], "account_ids": {"x": UUID, "twitter": UUID}}, True),
    ("quality_check_plan", {"plan": {"posts": [{"id": "1", "caption": "c", "platform": "myspace"}]}}, False),
    ("quality_check_plan", {"plan": {"posts": [{"id": "1", "caption": "c", "platform": "x"}]}}, True),
]
AUTOPILOT = {"name": "weekly", "project_id": UUID, "schedule_days": ["mon"]}
CONSTRAINED_ARGUMENTS += [
    ("create_autopilot_config", {**AUTOPILOT, "schedule_time": "24:00"}, False),
    ("create_autopilot_config", {**AUTOPILOT, "schedule_time": "9:30"}, False),
    ("create_autopilot_config", {**AUTOPILOT, "schedule_time": "09:30"}, True),
    ("create_autopilot_config", {**AUTOPILOT, "schedule_time": "09:30", "timezone": "Europe/Paris"}, True),
    ("create_autopilot_config", {**AUTOPILOT, "schedule_time": "09:30", "timezone": "../etc/passwd"}, False),
]


@pytest.fixture(scope="module")
def component_schemas() -> SchemaRegistry[Any]:
    """The document's components, for JSON Schema validation of an argument object against one of them."""
    document = openapi_document(build_registry(), settings_for_test())
    schemas: SchemaRegistry[Any] = SchemaRegistry().with_resource("urn:toolhost", DRAFT202012.create_resource(document))
    return schemas


@pytest.mark.parametrize(("tool_name", "arguments", "accepted"), CONSTRAINED_ARGUMENTS)
def test_the_input_schema_takes_exactly_what_the_input_model_takes(
    component_schemas: SchemaRegistry[Any], tool_name: str, arguments: dict[str, Any], accepted: bool
) -> None:
    spec = build_registry().get(tool_name)
    assert spec is not None
    validator = Draft202012Validator(
        {"$ref": f"urn:toolhost#/components/schemas/{spec.input_model.__name__}"},
        registry=component_schemas,
        format_checker=Draft202012Validator.FORMAT_CHECKER,
    )
    try:
        spec.input_model.model_validate(arguments)
        model_takes = True
    except ValidationError:
        model_takes = False
    assert (model_takes, validator.is_valid(arguments)) == (accepted, accepted)


def test_two_different_models_of_one_name_are_refused_rather_than_given_names_that_shift() -> None:
    @tool(module="numbers", scope=scopes.READ, response_format=None)
    async def list_numbers(ctx: ToolContext, args: ListNumbersIn) -> ListNumbersOut:
        """Lists numbers."""
        return ListNumbersOut(entries=[])

    @tool(module="words", scope=scopes.READ, response_format=None)
    async def list_words(ctx: ToolContext, args: ListWordsIn) -> ListWordsOut:
        """Lists words."""
        return ListWordsOut(entries=[])

    stand_in = Registry()
    for handler in (list_numbers, list_words):
        spec = declared_spec(handler)
        assert spec is not None
        stand_in.add(spec)

    with pytest.raises(ValueError, match="two different models are named Entry"):
        openapi_document(stand_in, settings_for_test())


def test_brand_tools_also_list_the_public_api_host_when_set() -> None:
    registry = build_registry()
    document = openapi_document(
        registry, settings_for_test(public_url="https://tools.example", public_api_url="https://api.example")
    )
    validate(document)
    brand_runtime_tools = {spec.name for spec in registry.all() if spec.public_api_server}
    assert brand_runtime_tools == {"get_brand_runtime", "explain_brand_system", "check_brand_consistency"}
    for name in brand_runtime_tools:
        servers = document["paths"][f"/tools/{name}"]["post"]["servers"]
        assert [server["url"] for server in servers] == ["https://tools.example/v1", "https://api.example/v1"]
    assert "servers" not in document["paths"]["/tools/list_plan_approvals"]["post"]


async def test_the_api_root_serves_the_brand_routes_of_the_seed(client: httpx.AsyncClient) -> None:
    docs = await client.get("/docs")
    assert docs.status_code == 200
    assert (await client.get("/docs/assets/api-reference.js")).text.count("/v1/openapi.json") == 1


def _generate_client(document: dict[str, Any], directory: Path) -> None:
    """Runs openapi-python-client over the document into directory/CLIENT_PACKAGE; fails on any warning.

    Without post hooks: formatting the generated code with ruff is cosmetic and the slowest part.
    """
    # Imported here, by the one test that generates: every pytest-xdist worker imports this module to collect it.
    from openapi_python_client import generate
    from openapi_python_client.config import Config, ConfigFile, MetaType

    (directory / "openapi.json").write_text(json.dumps(document))
    config = Config.from_sources(
        ConfigFile(post_hooks=[]),
        MetaType.NONE,
        directory / "openapi.json",
        file_encoding="utf-8",
        overwrite=False,
        output_path=directory / CLIENT_PACKAGE,
    )
    # The generator reports every schema it skipped or could not type as a warning.
    assert list(generate(config=config)) == []


@pytest.fixture
def importable(tmp_path: Path) -> Iterator[Path]:
    """tmp_path on sys.path for the test, and whatever the test imported from CLIENT_PACKAGE forgotten after it."""
    sys.path.insert(0, str(tmp_path))
    try:
        yield tmp_path
    finally:
        sys.path.remove(str(tmp_path))
        for name in [name for name in sys.modules if name.split(".")[0] == CLIENT_PACKAGE]:
            del sys.modules[name]


def _client_module(name: str) -> Any:
    return importlib.import_module(f"{CLIENT_PACKAGE}.{name}")


@pytest.mark.slow
async def test_a_client_generated_from_the_live_document_types_every_operation_and_reads_the_real_app(
    client: httpx.AsyncClient, app: Starlette, tenant: Tenant, importable: Path
) -> None:
    _generate_client((await client.get("/v1/openapi.json")).json(), importable)
    models = _client_module("models")
    for spec in build_registry().all():
        operation = _client_module(f"api.{spec.module}.{spec.name}")
        result_class = getattr(models, f"{_pascal(spec.name)}ToolResult")
        # The operation answers the tool's result type, whose structuredContent is the tool's output model.
        assert result_class.__name__ in str(operation._parse_response.__annotations__["return"])
        fields = {field.name: field.type for field in result_class.__attrs_attrs__}
        assert fields["structured_content"] in (spec.output_model.__name__, getattr(models, spec.output_model.__name__))
    assert _client_module("api.default.list_tools")

    generated = _client_module("client").AuthenticatedClient(base_url="http://testserver/v1", token=tenant.key)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app),
        base_url="http://testserver/v1",
        headers={"Authorization": f"Bearer {tenant.key}"},
    ) as http:
        generated.set_async_httpx_client(http)

        balance = await _client_module("api.account.get_credit_balance").asyncio(
            client=generated, body=models.GetCreditBalanceIn()
        )
        assert isinstance(balance, models.GetCreditBalanceToolResult)
        assert isinstance(balance.structured_content, models.GetCreditBalanceOut)
        assert balance.structured_content.balance > 0

        saved = await _client_module("api.planning.save_content_plan").asyncio(
            client=generated,
            body=models.SaveContentPlanIn.from_dict(
                {"plan": {"topic": "t", "posts": [{"caption": "c"}]}, "status": "scheduled"}
            ),
        )
        assert isinstance(saved, models.SaveContentPlanToolResult)
        # What the running tool reports is a 200 whose body is the error shape.
        conflict = await _client_module("api.planning.submit_content_plan_for_approval").asyncio_detailed(
            client=generated, body=models.SubmitContentPlanForApprovalIn(plan_id=saved.structured_content.plan_id)
        )
        assert conflict.status_code == 200 and isinstance(conflict.parsed, models.ErrorResult)
        assert conflict.parsed.error.error_type == models.ErrorType.CONFLICT
        assert conflict.parsed.structured_content.error.request_id == conflict.parsed.error.request_id

        refused = await _client_module("api.approvals.respond_plan_approval").asyncio_detailed(
            client=generated,
            body=models.RespondPlanApprovalIn.from_dict(
                {"approval_id": "00000000-0000-4000-8000-000000000000", "decision": "approved"}
            ),
        )
        assert refused.status_code == 404 and isinstance(refused.parsed, models.ErrorResult)
        assert refused.parsed.is_error is True
