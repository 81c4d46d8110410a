"""The tests' layout holds: shared helpers live in tests/support, and no module imports a test
module or a conftest (a conftest's fixtures come from tests/support; a test module's helpers that
another module needs move there). Read with `ast`, so a multi-line import counts as one.

Modules outside tests/support may be only test modules (test_*.py), conftests, package
`__init__`s and the benchmarks the Makefile runs (`make bench`, `make bench-fleet`: programs, not
helpers, kept beside the tests they measure with)."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
SUPPORT = TESTS / "support"
# The programs `make bench` and `make bench-fleet` run with `python -m`.
BENCHMARKS = frozenset({TESTS / "e2e" / "bench_fleet.py", TESTS / "ui" / "bench_fleet_page.py"})


def _modules() -> list[Path]:
    return sorted(TESTS.rglob("*.py"))


def _is_test_or_conftest(module: str) -> bool:
    last = module.rsplit(".", 1)[-1]
    return last == "conftest" or last.startswith("test_")


def _imported(tree: ast.Module) -> list[str]:
    """Every module an import statement names, `from a.b import c` giving a.b and a.b.c."""
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
            found.extend(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_no_module_imports_a_test_module_or_a_conftest() -> None:
    modules = _modules()
    assert modules, f"no Python modules found under {TESTS}"
    wrong = [
        f"{path.relative_to(TESTS.parent)}: imports {name}"
        for path in modules
        for name in _imported(ast.parse(path.read_text(), str(path)))
        if name.startswith("tests.") and _is_test_or_conftest(name)
    ]
    assert not wrong, "move what is shared into tests/support:\n" + "\n".join(wrong)


def test_helpers_live_in_the_support_package() -> None:
    modules = _modules()
    assert modules, f"no Python modules found under {TESTS}"
    outside = [
        str(path.relative_to(TESTS.parent))
        for path in modules
        if not path.is_relative_to(SUPPORT)
        and path not in BENCHMARKS
        and path.name not in ("conftest.py", "__init__.py")
        and not path.name.startswith("test_")
    ]
    assert not outside, "helper modules outside tests/support:\n" + "\n".join(outside)
