"""The layers of docs/architecture.md, checked on the source: imports point down, nothing imports itself back, and
no module, function or signature outgrows the limits there."""

from __future__ import annotations

import ast
import functools
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGES = {"fp_analysis": ROOT / "fp_analysis", "fpa_kernels": ROOT / "kernels"}
# Each group of modules (a module or a package, by dotted prefix) and its layer; a module may import from its own
# layer or a lower one, never a higher one (and no cycle: below). The longest prefix decides.
LAYERS = {
    "fp_analysis.errors": 0,
    "fp_analysis.records": 0,
    "fp_analysis.options": 0,
    "fp_analysis.lazy_exports": 0,
    "fp_analysis.numerics": 1,
    "fp_analysis.ops": 2,
    "fpa_kernels": 3,
    "fp_analysis.model": 4,
    "fp_analysis.run": 5,
    "fp_analysis.explain": 6,
    "fp_analysis.store": 6,
    "fp_analysis.strategies": 6,
    "fp_analysis.triage": 7,
    "fp_analysis.fuzz": 7,
    "fp_analysis.study": 7,
    "fp_analysis.cli": 8,
    "fp_analysis.__main__": 9,
    "fp_analysis": 9,
}
MAX_MODULE_LINES, MAX_FUNCTION_LINES, MAX_PARAMETERS, MAX_TOP_LEVEL = 600, 100, 8, 15


def _modules() -> dict[str, pathlib.Path]:
    out = {}
    for package, folder in PACKAGES.items():
        for path in folder.rglob("*.py"):
            parts = [package, *path.relative_to(folder).with_suffix("").parts]
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


MODULES = _modules()


def _imports(name: str, path: pathlib.Path) -> set[str]:
    """The modules of ours that ``name`` imports, anywhere in it (a function's import too)."""
    base = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = (
                ".".join([*base[: len(base) - node.level + 1], node.module or ""]).strip(".")
                if node.level
                else node.module
            )
            targets = [module] + [f"{module}.{alias.name}" for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in MODULES:
                target = target.rpartition(".")[0]
            if target and target != name and not name.startswith(f"{target}."):  # a package's own __init__
                found.add(target)
    return found


@functools.cache
def _graph() -> dict[str, set[str]]:
    """Each module's imports of the two packages, parsed when a test asks (not at collection: every pytest-xdist
    worker collects this module, and parsing every module takes 0.5 s of each one's start on the 2-core CPU)."""
    return {name: _imports(name, path) for name, path in MODULES.items()}


def _group(name: str) -> str:
    return max((prefix for prefix in LAYERS if name == prefix or name.startswith(f"{prefix}.")), key=len)


def test_every_module_has_a_layer():
    assert all(_group(name) for name in MODULES)


def test_no_import_points_up_the_layers():
    upward = [
        f"{name} (layer {LAYERS[_group(name)]}) imports {target} (layer {LAYERS[_group(target)]})"
        for name, targets in _graph().items()
        for target in targets
        if LAYERS[_group(target)] > LAYERS[_group(name)]
    ]
    assert not upward, "\n".join(sorted(upward))


def test_no_module_imports_itself_back():
    """No cycle among modules (Tarjan's strongly connected components, iteratively)."""
    index, low, stack, on_stack, cycles, counter = {}, {}, [], set(), [], [0]
    graph = _graph()
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    assert not cycles, cycles


@pytest.mark.parametrize("name", sorted(MODULES))
def test_modules_functions_and_signatures_stay_small(name):
    source = MODULES[name].read_text()
    assert source.count("\n") <= MAX_MODULE_LINES, f"{name}: {source.count(chr(10))} lines"
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        lines = node.end_lineno - node.lineno + 1
        assert lines <= MAX_FUNCTION_LINES, f"{name}.{node.name}: {lines} lines"
        arguments = node.args
        named = [a.arg for a in arguments.posonlyargs + arguments.args]
        count = len(named) + len(arguments.kwonlyargs) + (arguments.vararg is not None)
        count += (arguments.kwarg is not None) - (bool(named) and named[0] in ("self", "cls"))
        if not name.startswith("fp_analysis.cli."):  # a command function's parameters are its options
            assert count <= MAX_PARAMETERS, f"{name}.{node.name}: {count} parameters"


def test_the_top_level_holds_few_modules():
    top = [p.name for p in PACKAGES["fp_analysis"].iterdir() if not p.name.startswith(("_", "."))]
    top = [n for n in top if n.endswith(".py") or (PACKAGES["fp_analysis"] / n / "__init__.py").exists()]
    assert len(top) <= MAX_TOP_LEVEL, sorted(top)
