"""Model-written text as the README sets it up: environment variables pointing at a local OpenAI-compatible
server (here a stand-in on 127.0.0.1), then generate_content naming the model."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import Tenant, settings_for_test
from tests.providers.text.test_openai import ChatStandIn, chat  # noqa: F401 (the stand-in's fixture)
from toolhost.config import Settings

README = Path(__file__).parents[3] / "README.md"


@pytest.fixture
def readme_environment(chat: ChatStandIn, clean_environment: None) -> None:  # noqa: F811
    """The README's exports, with the stand-in's address and model name (clean_environment restores them)."""
    os.environ["TOOLHOST_PROVIDERS__OPENAI_BASE_URL"] = chat.base_url
    os.environ["TOOLHOST_PROVIDERS__OPENAI_MODEL"] = "llama3.1"
    os.environ["TOOLHOST_PROVIDERS__OPENAI_API_KEY"] = "unused"


@pytest.fixture
def settings(database_url: str, tmp_path: Path, readme_environment: None) -> Settings:
    return settings_for_test(database_url=database_url, media={"root": str(tmp_path / "media")})


def test_the_readme_sets_the_model_up_with_these_variables() -> None:
    readme = README.read_text()
    for line in (
        "export TOOLHOST_PROVIDERS__OPENAI_BASE_URL=http://127.0.0.1:11434/v1",
        "export TOOLHOST_PROVIDERS__OPENAI_MODEL=llama3.1",
        "export TOOLHOST_PROVIDERS__OPENAI_API_KEY=unused",
        "export TOOLHOST_PROVIDERS__TEXT_DEFAULT=llama3.1",
    ):
        assert line in readme


async def test_generate_content_naming_the_model_is_written_by_the_local_server(
    tenant: Tenant,
    chat: ChatStandIn,  # noqa: F811
) -> None:
    chat.answer("Weekend sourdough is back, baked at dawn for early shoppers.")
    data = await tenant.data(
        "generate_content", {"prompt": "Announce our weekend sourdough", "content_type": "hook", "model": "llama3.1"}
    )
    assert data == {**data, "model": "llama3.1", "text": "Weekend sourdough is back, baked at dawn for early shoppers."}
    request = chat.requests[0]
    assert request["auth"] == "Bearer unused"
    body = request["body"]
    assert isinstance(body, dict) and body["model"] == "llama3.1"
    assert "Announce our weekend sourdough" in str(body["messages"])


async def test_a_prompt_in_german_goes_to_the_model_while_the_builtin_writer_refuses_it(
    tenant: Tenant,
    chat: ChatStandIn,  # noqa: F811
) -> None:
    german = "Schreibe einen Beitrag über unser neues Sauerteigbrot für Familien"
    chat.answer("Unser neues Sauerteigbrot ist da.")
    written = await tenant.data("generate_content", {"prompt": german, "content_type": "hook", "model": "llama3.1"})
    assert written["text"] == "Unser neues Sauerteigbrot ist da."
    refused = (await tenant.call("generate_content", {"prompt": german, "content_type": "hook"})).json()
    assert refused["error"]["error_type"] == "validation_error"
    assert "llama3.1" not in refused["error"]["message"] and "model" in refused["error"]["recover_with"]
    assert len(chat.requests) == 1
