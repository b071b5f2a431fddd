"""GET /v1/openapi.json: a valid OpenAPI 3.1 document generated from the registry."""

from __future__ import annotations

import httpx
from openapi_spec_validator import validate

from tests.conftest import settings_for_test
from toolhost.platform.openapi import openapi_document
from toolhost.platform.registry import registry


async def test_the_document_is_public_valid_and_has_a_path_per_tool(client: httpx.AsyncClient) -> None:
    response = await client.get("/v1/openapi.json")
    assert response.status_code == 200
    document = response.json()
    validate(document)
    assert document["openapi"].startswith("3.1")
    assert document["servers"] == [{"url": "http://testserver/v1"}]
    tool_paths = {path for path in document["paths"] if path.startswith("/tools/")}
    assert tool_paths == {f"/tools/{spec.name}" for spec in registry.all()}
    operation = document["paths"]["/tools/respond_plan_approval"]["post"]
    schema_name = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    request_schema = document["components"]["schemas"][schema_name]
    assert set(request_schema["required"]) == {"approval_id", "decision"}
    assert request_schema["properties"]["reason"]["anyOf"][0]["maxLength"] == 1000
    assert {"ToolResult", "ErrorResult", "Error"} <= set(document["components"]["schemas"])
    assert document["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"


def test_brand_tools_also_list_the_public_api_host_when_set() -> None:
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
