"""Every package the project's code imports is declared in pyproject.toml (not merely present
because another dependency brought it), and every pin says why it is a pin."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("contract", "schemas", "scrapers", "warehouse", "reports", "flows", "gpuprices")
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def _name(requirement: str) -> str:
    return re.split(r"[\[<>=!~; ]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def imported_modules() -> dict[str, set[str]]:
    """Top-level third-party module -> the files importing it."""
    found: dict[str, set[str]] = {}
    for package in PACKAGES:
        for path in (REPO / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                         [node.module] if isinstance(node, ast.ImportFrom) and node.module
                         and not node.level else [])
                for name in names:
                    top = name.split(".")[0]
                    if top not in sys.stdlib_module_names and top not in PACKAGES:
                        found.setdefault(top, set()).add(str(path.relative_to(REPO)))
    return found


def test_every_imported_package_is_declared() -> None:
    declared = {_name(r) for r in PYPROJECT["project"]["dependencies"]}
    distributions = packages_distributions()
    undeclared = {module: sorted(files) for module, files in imported_modules().items()
                  if not {d.lower().replace("_", "-") for d in distributions.get(module, [])}
                  & declared}
    assert undeclared == {}


def test_every_exact_pin_is_explained() -> None:
    """An `==` pin in the dependencies has a comment on the line above saying why."""
    lines = (REPO / "pyproject.toml").read_text(encoding="utf-8").splitlines()
    start = lines.index("dependencies = [")
    for number, line in enumerate(lines[start:], start):
        if line.strip() == "]":
            break
        if "==" in line:
            assert lines[number - 1].strip().startswith("#"), f"unexplained pin: {line.strip()}"
