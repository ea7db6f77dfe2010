"""No import cycles among queerbias modules, counting every import (module level and inside
functions; not `if TYPE_CHECKING:` blocks, which never run): a cycle hidden in a function is
still a cycle between two concepts."""

from __future__ import annotations

import ast
from pathlib import Path

import queerbias

ROOT = Path(queerbias.__file__).parent


def _modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(test)


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The queerbias modules `name` imports (`from a import b` is module a.b where there is one)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found, pending = set(), list(ast.parse(path.read_text(encoding="utf-8")).body)
    while pending:
        node = pending.pop()
        if _type_checking(node):
            continue
        pending += list(ast.iter_child_nodes(node))
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name in modules}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, *([base] if base else [])])
            for alias in node.names:
                target = f"{base}.{alias.name}"
                found |= {target} if target in modules else {base} if base in modules else set()
    return found - {name}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph (a depth-first search's back edge), or None."""
    state: dict[str, str] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = "open"
        path.append(node)
        for child in sorted(graph[node]):
            if state.get(child) == "open":
                return path[path.index(child):] + [child]
            if child not in state and (found := visit(child)):
                return found
        state[node] = "done"
        path.pop()
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)):
            return found
    return None


def test_no_module_imports_itself_through_others():
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    assert sum(map(len, graph.values())) > 300  # the walk finds the imports
    cycle = _cycle(graph)
    assert cycle is None, " -> ".join(cycle)


def test_a_cycle_is_found():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
