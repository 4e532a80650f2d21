"""No import cycle inside guardrail/ (the layers of DESIGN.md import one way): every module-level import between
the package's modules, except those under ``if TYPE_CHECKING``, forms a graph without cycles."""

from __future__ import annotations

import ast
from pathlib import Path

import guardrail

ROOT = Path(guardrail.__file__).parent


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _run_time_imports(path: Path, name: str, modules: set[str]) -> set[str]:
    """Imports executed when the module is imported (top level, not under ``if TYPE_CHECKING``, not in functions)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_pkg = path.name == "__init__.py"
    out: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                visit(node.orelse)
                continue
            if isinstance(node, (ast.If, ast.Try)):
                visit(node.body)
                visit(getattr(node, "orelse", []))
                for h in getattr(node, "handlers", []):
                    visit(h.body)
                continue
            if isinstance(node, ast.Import):
                out.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    pkg = name.split(".") if is_pkg else name.split(".")[:-1]
                    pkg = pkg[: len(pkg) - node.level + 1]
                    base = ".".join(pkg + ([base] if base else []))
                out.add(base)
                out.update(f"{base}.{a.name}" for a in node.names)

    visit(tree.body)
    return {m for m in out if m in modules and m != name}


def test_no_import_cycle_inside_the_package() -> None:
    files = {_module_name(p): p for p in ROOT.rglob("*.py")}
    modules = set(files)
    graph = {name: _run_time_imports(path, name, modules) for name, path in files.items()}
    # a package's __init__ importing its own submodules is not a cycle of the layers
    for name in graph:
        graph[name] = {m for m in graph[name] if not (m.startswith(name + ".") and files[name].name == "__init__.py")}
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def dfs(node: str, stack: list[str]) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                dfs(nxt, stack)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            dfs(node, [])
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)
