"""The layering ARCHITECTURE.md draws: the platform imports no domain and names no tool or module."""

from __future__ import annotations

import ast
from pathlib import Path

from toolhost import catalog
from toolhost.platform import registry as registry_module
from toolhost.platform.registry import registry

PLATFORM = Path(registry_module.__file__).parent
# The composition root imports every domain, so reaching it from the platform is importing a domain too.
FORBIDDEN_IMPORTS = ("toolhost.domains", "toolhost.catalog")


def _trees() -> dict[Path, ast.Module]:
    return {path: ast.parse(path.read_text(), str(path)) for path in sorted(PLATFORM.rglob("*.py"))}


def _imported_modules(tree: ast.Module) -> list[str]:
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            names.append(node.module)
            names.extend(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            # importlib.import_module("toolhost.domains...") is an import too.
            names.append(node.value)
    return names


def _string_literals(tree: ast.Module) -> set[str]:
    return {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)}


def _is_forbidden(name: str) -> bool:
    return any(name == forbidden or name.startswith(f"{forbidden}.") for forbidden in FORBIDDEN_IMPORTS)


def test_the_platform_imports_no_domain_and_not_the_composition_root() -> None:
    offenders = [
        f"{path.relative_to(PLATFORM)}: {name}"
        for path, tree in _trees().items()
        for name in _imported_modules(tree)
        if _is_forbidden(name)
    ]
    assert offenders == []


def test_the_platform_names_no_registered_tool() -> None:
    catalog.load_tools()
    tool_names = {spec.name for spec in registry.all()}
    assert len(tool_names) == 91
    offenders = [
        f"{path.relative_to(PLATFORM)}: {literal}"
        for path, tree in _trees().items()
        for literal in sorted(_string_literals(tree) & tool_names)
    ]
    assert offenders == []


def test_the_registry_names_no_module() -> None:
    tree = ast.parse(Path(registry_module.__file__).read_text())
    assert _string_literals(tree) & set(catalog.MODULES) == set()


def test_every_tool_declares_a_module_the_composition_root_lists() -> None:
    catalog.load_tools()
    assert {spec.module for spec in registry.all()} <= set(catalog.MODULES)
