"""The import graph points one way (issue 11): no import runs up the layers, no CLI cycles.

Every `import` / `from ... import` in the project's packages is read with ast (module level
and inside functions alike) and checked against LAYERS: a package may import only itself and
the packages listed below it. The map is data, here, so a new package is one line.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# Bottom first. contract: types and settings every layer may use; flows and the CLI on top.
LAYERS = ("contract", "schemas", "scrapers", "warehouse", "reports", "flows", "gpuprices")
RANK = {name: i for i, name in enumerate(LAYERS)}
# gpuprices.cli registers the command modules; they import only gpuprices.options/output.
CLI_BOTTOM = {"gpuprices.options", "gpuprices.output"}


def imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
    return found


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(REPO).with_suffix("").parts)


def project_modules() -> dict[str, list[str]]:
    return {module_name(path): imports(path)
            for package in LAYERS for path in sorted((REPO / package).rglob("*.py"))}


def test_no_import_runs_up_the_layers() -> None:
    upward = []
    for module, names in project_modules().items():
        layer = RANK[module.split(".")[0]]
        for name in names:
            top = name.split(".")[0]
            if top in RANK and RANK[top] > layer:
                upward.append(f"{module} imports {name}")
    assert upward == []


def test_command_modules_do_not_import_the_cli() -> None:
    cycles = [f"{module} imports {name}" for module, names in project_modules().items()
              if module.startswith("gpuprices.commands_") or module in CLI_BOTTOM
              for name in names if name == "gpuprices.cli" or
              (name.startswith("gpuprices.commands_") and module in CLI_BOTTOM)]
    assert cycles == []


def test_the_checker_sees_an_upward_import(tmp_path: Path) -> None:
    """The test can fail: an upward import in a file is found."""
    sample = tmp_path / "sample.py"
    sample.write_text("def f():\n    from reports.queries import current_prices_at\n")
    assert imports(sample) == ["reports.queries"]
    assert RANK["reports"] > RANK["warehouse"]


def test_the_warehouse_knows_no_concrete_source() -> None:
    """Source-specific import logic lives with its source (scrapers/) or is passed in."""
    concrete = [f"{module} imports {name}" for module, names in project_modules().items()
                if module.startswith("warehouse.") for name in names
                if name.startswith("scrapers.") and name != "scrapers.base"]
    assert concrete == []


def _edges(path: Path, modules: set[str]) -> set[str]:
    """The project modules `path` imports, `from package import module` included."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name in modules}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module in modules:
                found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names} & modules
    return found


def import_cycles() -> list[list[str]]:
    """Strongly connected groups of more than one module in the import graph (imports inside
    functions count: a lazy import still ties the two modules together)."""
    paths = {module_name(p): p
             for package in LAYERS for p in sorted((REPO / package).rglob("*.py"))}
    graph = {m: _edges(p, set(paths)) - {m} for m, p in paths.items()}
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(module: str) -> None:
        order[module] = low[module] = len(order)
        stack.append(module)
        for other in sorted(graph[module]):
            if other not in order:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], order[other])
        if low[module] == order[module]:
            group = []
            while True:
                top = stack.pop()
                group.append(top)
                if top == module:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for module in sorted(graph):
        if module not in order:
            visit(module)
    return groups


def test_no_import_cycles() -> None:
    """e.g. warehouse.connection <-> warehouse.lake (issue 22): now warehouse.schema holds
    what both need."""
    assert import_cycles() == []
