"""The layering ARCHITECTURE.md draws, read from the source's imports (function-local and TYPE_CHECKING ones too).

Layers point down: db <- platform <- providers <- domains <- the composition root (catalog, app, cli). The domains
form an acyclic graph, and a domain reaches another only through its `service`, `models` and `schemas` modules.
"""

from __future__ import annotations

import ast
import functools
import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolhost import catalog
from toolhost.platform.registry import Registry

SOURCE = Path(catalog.__file__).parent
PLATFORM = SOURCE / "platform"
DOMAINS = SOURCE / "domains"
COMPOSITION_ROOT = ("toolhost.catalog", "toolhost.app", "toolhost.cli")
# What a layer may not import: everything above it.
FORBIDDEN_BY_LAYER: dict[str, tuple[str, ...]] = {
    "toolhost.db": ("toolhost.platform", "toolhost.providers", "toolhost.domains", *COMPOSITION_ROOT),
    "toolhost.platform": ("toolhost.providers", "toolhost.domains", *COMPOSITION_ROOT),
    "toolhost.providers": ("toolhost.domains", *COMPOSITION_ROOT),
    "toolhost.domains": COMPOSITION_ROOT,
}
# The migration entry points load every table through the composition root's list; they are the root's, not db's.
COMPOSITION_ENTRY_POINTS = ("toolhost.db.migrate", "toolhost.db.migrations")
PUBLIC_DOMAIN_MODULES = frozenset({"service", "models", "schemas"})
LONG_MODULE_LINES = 500
# A module longer than LONG_MODULE_LINES says in its docstring why it is not split by job.
LONG_MODULE_REASON = "Kept as one module past 500 lines on purpose:"
# Imports of another domain's private modules that predate the rule; this list only shrinks (each entry says where
# the piece goes). A new private import fails, and so does an entry that no longer occurs.
KNOWN_PRIVATE_IMPORTS: frozenset[tuple[str, str]] = frozenset()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SOURCE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@functools.cache  # the tests read the same folders: each file is parsed once per pytest-xdist worker
def _trees(root: Path) -> dict[str, tuple[Path, ast.Module]]:
    return {_module_name(path): (path, ast.parse(path.read_text(), str(path))) for path in sorted(root.rglob("*.py"))}


def _imports(module: str, path: Path, tree: ast.Module) -> Iterator[tuple[str, int]]:
    """Every name an import statement anywhere in the file brings in, as `package.module[.name]`, with its line."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            yield base, node.lineno
            for alias in node.names:
                yield f"{base}.{alias.name}", node.lineno


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(f"{prefix}.")


def _string_literals(tree: ast.Module) -> set[str]:
    return {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)}


def _domain_of(name: str) -> str | None:
    parts = name.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["toolhost", "domains"] else None


def _cross_domain_imports() -> Iterator[tuple[str, str, str, int]]:
    """(importing module, its domain, imported name, line) for every import of another domain."""
    for module, (path, tree) in _trees(DOMAINS).items():
        own = _domain_of(module)
        if own is None:
            continue
        for name, line in _imports(module, path, tree):
            other = _domain_of(name)
            if other is not None and other != own:
                yield module, own, name, line


def _domain_graph() -> dict[str, dict[str, str]]:
    """domain -> {domain it imports: one import that says so}."""
    graph: dict[str, dict[str, str]] = {}
    for module, own, name, line in _cross_domain_imports():
        graph.setdefault(own, {}).setdefault(_domain_of(name) or "", f"{module}:{line} imports {name}")
    return graph


def _find_cycle(graph: dict[str, dict[str, str]]) -> list[str]:
    """One cycle of the graph as [a, b, ..., a], or [] when it is acyclic."""
    done: set[str] = set()
    path: list[str] = []

    def visit(node: str) -> list[str]:
        if node in path:
            return [*path[path.index(node) :], node]
        if node in done:
            return []
        path.append(node)
        for target in sorted(graph.get(node, {})):
            cycle = visit(target)
            if cycle:
                return cycle
        path.pop()
        done.add(node)
        return []

    for start in sorted(graph):
        cycle = visit(start)
        if cycle:
            return cycle
    return []


@pytest.mark.slow
def test_each_layer_imports_only_the_layers_below_it() -> None:
    offenders = [
        f"{module}:{line} imports {name}"
        for layer, forbidden in FORBIDDEN_BY_LAYER.items()
        for module, (path, tree) in _trees(SOURCE / layer.removeprefix("toolhost.")).items()
        if not any(_within(module, entry) for entry in COMPOSITION_ENTRY_POINTS)
        for name, line in _imports(module, path, tree)
        if any(_within(name, above) for above in forbidden)
    ]
    assert offenders == []


def test_the_platform_names_no_domain_module_in_a_string() -> None:
    # importlib.import_module("toolhost.domains...") is an import too.
    offenders = [
        f"{module}: {literal}"
        for module, (_path, tree) in _trees(PLATFORM).items()
        for literal in sorted(_string_literals(tree))
        if any(_within(literal, above) for above in FORBIDDEN_BY_LAYER["toolhost.platform"])
    ]
    assert offenders == []


def test_the_domains_import_each_other_without_a_cycle() -> None:
    graph = _domain_graph()
    cycle = _find_cycle(graph)
    steps = [graph[source][target] for source, target in zip(cycle, cycle[1:], strict=False)]
    assert cycle == [], "import cycle " + " -> ".join(cycle) + ":\n  " + "\n  ".join(steps)


def test_the_cycle_finder_reports_a_cycle_it_is_given() -> None:
    graph = {"content": {"media": "x"}, "media": {"planning": "y"}, "planning": {"content": "z"}, "brand": {}}
    assert _find_cycle(graph) == ["content", "media", "planning", "content"]
    assert _find_cycle({"content": {"media": "x"}, "media": {}}) == []


def test_a_domain_reaches_another_only_through_its_service_models_and_schemas() -> None:
    private = set()
    for module, _own, name, _line in _cross_domain_imports():
        parts = name.split(".")
        # `from toolhost.domains.x import service` names the module as its last part, `...x.service.f` as its fourth.
        if len(parts) > 3 and parts[3] not in PUBLIC_DOMAIN_MODULES:
            private.add((module.removeprefix("toolhost.domains."), ".".join(parts[2:4])))
    assert private - KNOWN_PRIVATE_IMPORTS == set(), "imports of another domain's private modules"
    assert KNOWN_PRIVATE_IMPORTS - private == set(), "exceptions that no longer occur: drop them from the list"


def test_the_platform_names_no_registered_tool() -> None:
    tool_names = {spec.name for spec in catalog.build_registry().all()}
    assert len(tool_names) == 91
    offenders = [
        f"{module}: {literal}"
        for module, (_path, tree) in _trees(PLATFORM).items()
        for literal in sorted(_string_literals(tree) & tool_names)
    ]
    assert offenders == []


def test_the_registry_names_no_module() -> None:
    _path, tree = _trees(PLATFORM)["toolhost.platform.registry"]
    assert _string_literals(tree) & set(catalog.MODULES) == set()


def test_every_tool_declares_a_module_the_composition_root_lists() -> None:
    assert {spec.module for spec in catalog.build_registry().all()} <= set(catalog.MODULES)


def test_no_module_holds_a_registry() -> None:
    # The composition root builds registries and hands them down; one held by a module would be every caller's.
    catalog.build_registry()
    for name in COMPOSITION_ROOT:
        importlib.import_module(name)
    holders = [
        f"{name}.{attribute}"
        for name, module in list(sys.modules.items())
        if name.startswith("toolhost.")
        for attribute, value in vars(module).items()
        if isinstance(value, Registry)
    ]
    assert holders == []


def _unexplained_long_modules(trees: dict[str, tuple[Path, ast.Module]]) -> list[str]:
    return [
        f"{module}: {len(path.read_text().splitlines())} lines"
        for module, (path, tree) in trees.items()
        if len(path.read_text().splitlines()) > LONG_MODULE_LINES
        and LONG_MODULE_REASON not in " ".join((ast.get_docstring(tree) or "").split())
    ]


def test_every_module_past_500_lines_says_why_at_its_top() -> None:
    assert _unexplained_long_modules(_trees(SOURCE)) == [], f'split by job, or write "{LONG_MODULE_REASON} ..."'


def test_a_long_module_passes_only_with_the_reason_in_its_docstring(tmp_path: Path) -> None:
    body = "value = 1\n" * (LONG_MODULE_LINES + 1)
    cases = {
        "explained": f'"""A table.\n\n{LONG_MODULE_REASON} it is one table.\n"""\n{body}',
        "comment_only": f"# {LONG_MODULE_REASON} it is one table.\n{body}",
        "silent": f'"""A table."""\n{body}',
        "short": '"""A table."""\nvalue = 1\n',
    }
    trees = {}
    for name, text in cases.items():
        path = tmp_path / f"{name}.py"
        path.write_text(text)
        trees[name] = (path, ast.parse(text))
    assert [entry.split(":")[0] for entry in _unexplained_long_modules(trees)] == ["comment_only", "silent"]
