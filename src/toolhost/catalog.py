"""The composition root's lists: every domain's tool and model modules, worker pollers and job types, named
explicitly (no scanning), and the tool registry built from them."""

from __future__ import annotations

import importlib

from toolhost.platform.registry import Registry, RegistryError

# The catalogue's modules (CATALOG.md): the names a tool may give as its `module`, and search_tools' filter.
MODULES: tuple[str, ...] = (
    "content",
    "media",
    "video",
    "ideation",
    "brand",
    "planning",
    "approvals",
    "quality",
    "distribution",
    "analytics",
    "comments",
    "autopilot",
    "pipeline",
    "recipes",
    "skills",
    "account",
    "discovery",
    "apps",
)

TOOL_MODULES: tuple[str, ...] = (
    "toolhost.domains.account.tools",
    "toolhost.domains.discovery.tools",
    "toolhost.domains.planning.tools",
    "toolhost.domains.approvals.tools",
    "toolhost.domains.brand.tools",
    "toolhost.domains.content.tools",
    "toolhost.domains.content.job_tools",
    "toolhost.domains.video.generation_tools",
    "toolhost.domains.content.carousel_tools",
    "toolhost.domains.video.tools",
    "toolhost.domains.quality.tools",
    "toolhost.domains.ideation.tools",
    "toolhost.domains.media.tools",
    "toolhost.domains.distribution.tools",
    "toolhost.domains.analytics.tools",
    "toolhost.domains.comments.tools",
    "toolhost.domains.apps.tools",
    "toolhost.domains.skills.tools",
    "toolhost.domains.recipes.tools",
    "toolhost.domains.autopilot.tools",
    "toolhost.domains.pipeline.tools",
)

MODEL_MODULES: tuple[str, ...] = (
    "toolhost.platform.models",
    "toolhost.domains.planning.models",
    "toolhost.domains.approvals.models",
    "toolhost.domains.brand.models",
    "toolhost.domains.content.models",
    "toolhost.domains.ideation.models",
    "toolhost.platform.jobs",
    "toolhost.domains.media.models",
    "toolhost.domains.distribution.models",
    "toolhost.domains.analytics.models",
    "toolhost.domains.autopilot.models",
    "toolhost.domains.pipeline.models",
)

POLLERS: tuple[str, ...] = (
    "toolhost.platform.credits.release_expired_holds",
    "toolhost.platform.worker.run_jobs",
    "toolhost.domains.autopilot.runner.run_due_autopilot",
    "toolhost.domains.media.retention.sweep_expired_media",
)

# Each names a domain's tuple of job types (runner per job type), run by the platform's job machine.
JOB_TYPES: tuple[str, ...] = (
    "toolhost.domains.distribution.dispatcher.JOB_TYPES",
    "toolhost.domains.content.image_jobs.JOB_TYPES",
    "toolhost.domains.video.generation_jobs.JOB_TYPES",
    "toolhost.domains.video.jobs.JOB_TYPES",
    "toolhost.domains.video.hyperframes.JOB_TYPES",
    "toolhost.domains.analytics.refresh.JOB_TYPES",
    "toolhost.domains.recipes.runner.JOB_TYPES",
    "toolhost.domains.autopilot.runner.JOB_TYPES",
)


def build_registry() -> Registry:
    """A registry of every tool module's tools, object lookups and probe, each tool's module checked.

    Each call builds a registry of its own; the process's transports share the one they are handed.
    """
    registry = Registry.from_modules(importlib.import_module(name) for name in TOOL_MODULES)
    for spec in registry.all():
        if spec.module not in MODULES:
            raise RegistryError(f"{spec.name}: unknown module {spec.module!r}")
    return registry


def load_models() -> None:
    """Imports every table definition, so the metadata is complete (migrations, autogenerate)."""
    for name in MODEL_MODULES:
        importlib.import_module(name)
