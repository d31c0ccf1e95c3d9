"""The import graph of ``src/referee``, read statically (``ast``): no circles.

* Module-level imports (outside ``if TYPE_CHECKING``): no cycle at all.
* Every import, function-level ones and ``importlib.import_module("literal")`` included: no
  cycle either, and none through the registries' discovery of domains in particular
  (``referee.discovery`` is imported by the registries and imports none of them; domains are
  reached through entry points, by string).
* Nothing runs back up: every import, function-level ones included, goes from a component to one
  on its own floor or a lower one of :data:`FLOORS`.

An edge goes to the module named (``from a.b import c`` is ``a.b.c`` where that is a module, else
``a.b``); a package's ``__init__`` run on the way is not counted.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import referee

PACKAGE = Path(referee.__file__).parent
DISCOVERY = {
    "referee.discovery",
    "referee.domains",
    "referee.domains.registry",
    "referee.tasks.sources",
    "referee.tasks.kinds",
    "referee.verify.record",
    "referee.verify.dispatch",
    "referee.envs.registry",
}
#: Function-level cycles allowed (imports inside functions, harmless at import time): none is
#: left, and a new one fails.
KNOWN_DEEP_CYCLES: list[set[str]] = []

#: The components (``referee.NAME``), lowest floor first: a module may import its own floor and
#: the floors below it, never one above (``shared/DESIGN.md``, ``docs/concepts/layout.md``). The
#: package ``referee`` itself holds only ``__version__`` and lazy names, so it is on the ground.
FLOORS: list[set[str]] = [
    {"referee", "errors", "optional", "discovery", "storage", "plain"},
    {"sandbox"},
    {"tasks"},
    {"verify"},
    {"envs", "synth"},
    {"domains"},
    {"policy"},
    {"rollout"},
    {"track"},
    {"service"},  # the engine and sessions the cluster's actors hold
    {"cluster"},  # Ray pools of those engines; the trainers' shared pools
    {"train"},  # the adapters: veRL and NeMo RL judge on the cluster's shared pool
    {"experiments"},
    {"ui"},
    {"demo", "cli", "__main__"},
]
#: Upward imports allowed, each with its reason: none is left, and a new one fails.
KNOWN_UPWARD: dict[tuple[str, str], str] = {}


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(body: list[ast.stmt], deep: bool) -> Iterator[ast.AST]:
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If) and _is_type_checking(node):
            continue
        elif isinstance(node, ast.If | ast.Try | ast.With):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt):
                    yield from _imports([child], deep)
                elif isinstance(child, ast.ExceptHandler):
                    yield from _imports(child.body, deep)
        elif deep:
            for child in ast.walk(node):
                if isinstance(child, ast.Import | ast.ImportFrom):
                    yield child
                elif (
                    isinstance(child, ast.Call)
                    and getattr(child.func, "attr", getattr(child.func, "id", ""))
                    == "import_module"
                    and child.args
                    and isinstance(child.args[0], ast.Constant)
                ):
                    yield ast.Import(names=[ast.alias(name=str(child.args[0].value))])


def graph(deep: bool) -> dict[str, set[str]]:
    modules = _modules()
    edges: dict[str, set[str]] = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        targets = set()
        for node in _imports(ast.parse(path.read_text()).body, deep):
            if isinstance(node, ast.Import):
                targets |= {a.name for a in node.names}
                continue
            assert isinstance(node, ast.ImportFrom)
            base = node.module or ""
            if node.level:
                package = name.split(".") if is_package else name.split(".")[:-1]
                package = package[: len(package) - (node.level - 1)]
                base = ".".join([*package, base] if base else package)
            targets |= {f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                        for a in node.names}  # fmt: skip
        edges[name] = {t for t in targets if t in modules and t != name}
    return edges


def cycles(edges: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(component)

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_module_level_imports_have_no_cycle() -> None:
    edges = graph(deep=False)
    assert len(edges) > 300 and "referee.discovery" in edges["referee.tasks.sources"]
    assert cycles(edges) == []


def test_no_cycle_even_through_function_level_imports() -> None:
    edges = graph(deep=True)
    assert edges["referee.discovery"] <= {"referee.errors"}
    found = cycles(edges)
    assert not [c for c in found if c & DISCOVERY]
    assert sorted(map(sorted, found)) == sorted(map(sorted, KNOWN_DEEP_CYCLES))


def test_the_cycle_finder_finds_one() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]


def _floor(module: str) -> int:
    parts = module.split(".")
    component = parts[1] if len(parts) > 1 else parts[0]
    floors = [i for i, names in enumerate(FLOORS) if component in names]
    assert floors, f"{component} (of {module}) is on no floor of FLOORS: add it where it belongs"
    return floors[0]


def upward(edges: dict[str, set[str]]) -> list[tuple[str, str]]:
    """The imports from a module to one on a higher floor, sorted."""
    return sorted((a, b) for a, targets in edges.items() for b in targets if _floor(b) > _floor(a))


def test_nothing_imports_upward() -> None:
    edges = graph(deep=True)
    found = upward(edges)
    assert [e for e in found if e not in KNOWN_UPWARD] == []
    assert sorted(KNOWN_UPWARD) == [e for e in found if e in KNOWN_UPWARD]  # none stale


def test_the_floor_check_finds_an_upward_import() -> None:
    edges = {"referee.tasks.model": {"referee.train.lookup"}, "referee.train.lookup": set()}
    assert upward(edges) == [("referee.tasks.model", "referee.train.lookup")]
