"""The task packages read one way: no module imports, directly or through its siblings, a module that imports it
back; and the rest of ``src/bedside`` has no such circle either.

A circle between two modules is usually hidden by moving one import into a function body; that still ties the two
modules together (each needs the other to work) and keeps the layering (data -> systems -> scoring -> tables ->
task in a task package) from being readable off the imports. So this test counts every import: module level,
inside functions and classes, and under ``if TYPE_CHECKING:``.

The graph is built from the source with ``ast`` (nothing is imported): one node per module (a package's
``__init__.py`` is the node named after the package), one edge per import of another bedside module. ``from
bedside.x import y`` is an edge to ``bedside.x.y`` when that is a module, else to ``bedside.x``. Importing a
submodule also runs its parent packages' ``__init__``; that implicit edge is left out (every module would otherwise
sit in a circle with an ``__init__`` that re-exports it), so an ``__init__`` counts only for the imports it makes
itself and the names imported from it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
ROOT = SRC / "bedside"


def module_name(path: Path) -> str:
    """The dotted name of the module in ``path`` (a package's ``__init__.py`` is the package)."""
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> dict[str, Path]:
    """Every bedside module by dotted name."""
    return {module_name(path): path for path in sorted(ROOT.rglob("*.py"))}


def _resolve_relative(module: str, is_package: bool, level: int, target: str | None) -> str:
    """The absolute name that ``from {'.' * level}{target} import ...`` means inside ``module``."""
    base = module.split(".") if is_package else module.split(".")[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join([*base, target] if target else base)


def imported_modules(name: str, path: Path, modules: dict[str, Path]) -> Iterator[str]:
    """The bedside modules that the module ``name`` imports anywhere in its source."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    yield alias.name
        elif isinstance(node, ast.ImportFrom):
            relative = node.level > 0
            source = _resolve_relative(name, is_package, node.level, node.module) if relative else node.module or ""
            if not source.startswith("bedside"):
                continue
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                if submodule in modules:
                    yield submodule
                elif source in modules:
                    yield source


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the bedside modules it imports (itself left out)."""
    return {
        name: {target for target in imported_modules(name, path, modules) if target != name}
        for name, path in modules.items()
    }


def components(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module: the modules that reach each other (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    counter = 0

    def visit(root: str) -> None:
        # Iterative Tarjan: the graph has a few hundred nodes, but recursion depth is not worth the risk.
        nonlocal counter
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: set[str] = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One shortest circle per strongly connected component, as ``[a, b, ..., a]``."""
    return [_shortest_circle(graph, component) for component in components(graph)]


def describe(graph: dict[str, set[str]], component: set[str]) -> str:
    """A component as a failure message: a shortest circle, then every import between its modules."""
    edges = [f"    {a} imports {b}" for a in sorted(component) for b in sorted(graph[a] & component)]
    return " -> ".join(_shortest_circle(graph, component)) + "\n" + "\n".join(edges)


def _shortest_circle(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """A shortest circle through the component's first module, as ``[a, b, ..., a]``."""
    start = min(component)
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for child in sorted(graph[node] & component):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [start, *reversed(path[:-1]), start] if node != start else [start, start]
                if child not in previous:
                    previous[child] = node
                    following.append(child)
        frontier = following
    raise AssertionError(f"no circle in a strongly connected component: {sorted(component)}")


def test_the_graph_sees_every_kind_of_import(tmp_path: Path) -> None:
    """The builder finds module-level, function-level, relative and TYPE_CHECKING imports, and names the circle."""
    package = tmp_path / "bedside" / "tasks" / "toy"
    package.mkdir(parents=True)
    for parent in (tmp_path / "bedside", tmp_path / "bedside" / "tasks"):
        (parent / "__init__.py").write_text("")
    (package / "__init__.py").write_text("from bedside.tasks.toy.task import run\n")
    (package / "data.py").write_text("X = 1\n")
    (package / "scoring.py").write_text("from .data import X\n\ndef f():\n    from . import tables\n")
    (package / "tables.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import bedside.tasks.toy.task\n"
    )
    (package / "task.py").write_text("from bedside.tasks.toy import scoring\n\ndef run():\n    pass\n")
    modules = {
        ".".join(path.relative_to(tmp_path).with_suffix("").parts).removesuffix(".__init__"): path
        for path in sorted(tmp_path.rglob("*.py"))
    }
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        graph[name] = {t for t in imported_modules(name, path, modules) if t != name}
    toy = "bedside.tasks.toy"
    assert graph[f"{toy}.scoring"] == {f"{toy}.data", f"{toy}.tables"}
    assert graph[f"{toy}.tables"] == {f"{toy}.task"}
    assert graph[f"{toy}.task"] == {f"{toy}.scoring"}
    assert graph[toy] == {f"{toy}.task"}
    assert cycles(graph) == [[f"{toy}.scoring", f"{toy}.tables", f"{toy}.task", f"{toy}.scoring"]]


GRAPH = import_graph(all_modules())


def test_the_real_graph_is_not_empty() -> None:
    """A sanity check that the walk found the task packages and their imports (an empty graph is trivially acyclic)."""
    for task in ("citeqa", "discharge", "drafting", "instruct", "sensemaking"):
        package = f"bedside.tasks.{task}"
        assert f"{package}.task" in GRAPH
        assert any(target.startswith(package + ".") for target in GRAPH[f"{package}.task"])


def test_task_packages_read_one_way() -> None:
    """No circle inside or between the task packages (data -> systems -> scoring -> tables -> task)."""
    found = [c for c in components(GRAPH) if any(m.startswith("bedside.tasks") for m in c)]
    assert not found, "import circles in the task packages:\n" + "\n".join(describe(GRAPH, c) for c in found)


def test_no_import_circle_anywhere() -> None:
    """The whole of src/bedside: no circle at all (the last two were broken for issue 48: the task registry moved
    out of runs.task, the web pages' request helpers out of web.app)."""
    found = components(GRAPH)
    assert not found, "import circles:\n" + "\n".join(describe(GRAPH, c) for c in found)
