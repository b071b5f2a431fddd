"""Text generation: one interface (`TextProvider`), the built-in composer and the OpenAI-compatible adapter.

Generating tools call `select_model` (CATALOG.md §1.11 model names and aliases), `provider_for`, then
`without_blocked_terms` around the provider call, so no text leaves with a banned term.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from toolhost.config import Settings
from toolhost.db.session import ensure_no_open_transaction
from toolhost.platform.results import UpstreamFailed, ValidationFailed
from toolhost.providers.text.base import TextProvider
from toolhost.providers.text.builtin import BuiltinTextProvider
from toolhost.providers.text.openai import OpenAITextProvider
from toolhost.providers.text.terms import find_terms, remove_terms

BUILTIN = "builtin"
T = TypeVar("T")


def available_models(settings: Settings) -> list[str]:
    """The configured text model names: `builtin` always, the chat endpoint's model when one is set."""
    names = [BUILTIN]
    providers = settings.providers
    if providers.openai_base_url and providers.openai_model and providers.openai_model != BUILTIN:
        names.append(providers.openai_model)
    return names


def select_model(settings: Settings, requested: str | None) -> str:
    """The configured model a `model` argument names (or its alias); the default when omitted."""
    names = available_models(settings)
    wanted = requested if requested is not None else settings.providers.text_default
    wanted = settings.providers.model_aliases.get(wanted, wanted)
    if wanted in names:
        return wanted
    raise ValidationFailed(
        f"unknown text model {wanted!r}"
        if requested is not None
        else f"the default text model {wanted!r} is not configured",
        field_errors=[{"path": "model", "message": "not a configured text model or alias"}],
        available_models=names + sorted(settings.providers.model_aliases),
        recover_with="omit model, or pass one of available_models",
    )


def provider_for(settings: Settings, model: str) -> TextProvider:
    """The provider behind a configured model name (from select_model)."""
    if model == BUILTIN:
        return BuiltinTextProvider()
    return OpenAITextProvider(settings.providers)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _strings(item)]
    if isinstance(value, list | tuple):
        return [text for item in value for text in _strings(item)]
    return []


def _map_strings(value: Any, change: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {key: _map_strings(item, change) for key, item in value.items()}
    if isinstance(value, list):
        return [_map_strings(item, change) for item in value]
    return value


def blocked_terms_in(value: Any, blocked: Sequence[str]) -> list[str]:
    """The blocked terms found in any string of a value (text, or a structure of texts)."""
    found: list[str] = []
    for text in _strings(value):
        for match in find_terms(text, blocked):
            if match.term not in found:
                found.append(match.term)
    return found


async def without_blocked_terms(
    produce: Callable[[], Awaitable[T]], blocked: Sequence[str], *, provider: str, regenerate: bool
) -> T:
    """Runs a generation and guarantees no blocked term in its output (CATALOG.md §1.11).

    An answer with blocked terms is generated once more (chat endpoints vary; the built-in composer does not),
    then whole-word matches are removed, and if any remain the generation fails as upstream_error.
    """
    ensure_no_open_transaction("text generation")
    result = await produce()
    if not blocked or not blocked_terms_in(result, blocked):
        return result
    if regenerate:
        result = await produce()
        if not blocked_terms_in(result, blocked):
            return result
    cleaned: T = _map_strings(result, lambda text: remove_terms(text, blocked))
    remaining = blocked_terms_in(cleaned, blocked)
    if remaining:
        raise UpstreamFailed(
            "the generated text kept the brand's banned terms after one retry and cleaning",
            provider=provider,
            blocked_terms=remaining,
        )
    return cleaned


__all__ = [
    "BUILTIN",
    "BuiltinTextProvider",
    "OpenAITextProvider",
    "TextProvider",
    "available_models",
    "blocked_terms_in",
    "provider_for",
    "select_model",
    "without_blocked_terms",
]
