"""The public API is a list a reader can see, README's commands are what CI runs, and every Enum member
says what it means.
"""

from __future__ import annotations

import importlib
import pathlib
import re

import pytest

import fp_analysis

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGES = ["fp_analysis", "fp_analysis.ops"]
MODULES = [
    "errors",
    "lazy_exports",
    "numerics.arith",
    "numerics.bounds",
    "numerics.fma_emulation",
    "numerics.formats",
    "numerics.metrics",
    "numerics.orders",
    "numerics.rounding",
    "ops.conv",
    "ops.epilogue",
    "ops.modules",
    "ops.presets",
    "ops.reference",
    "study.order_table",
]


@pytest.mark.parametrize("name", PACKAGES + [f"fp_analysis.{m}" for m in MODULES])
def test_all_lists_exactly_what_exists(name):
    module = importlib.import_module(name)
    exported = module.__all__
    assert len(exported) == len(set(exported)), "duplicate names in __all__"
    assert sorted(exported, key=str.casefold) == sorted(exported, key=str.casefold)
    missing = [n for n in exported if not hasattr(module, n)]
    assert not missing, missing


@pytest.mark.parametrize("name", PACKAGES)
def test_package_reexports_every_public_name_of_its_modules(name):
    package = importlib.import_module(name)
    public = {n for n in dir(package) if not n.startswith("_") and not isinstance(getattr(package, n), type(package))}
    public -= {"annotations"}
    assert public <= set(package.__all__) | set(MODULES), public - set(package.__all__)


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    return re.findall(r"```\n(python3 -m venv[^\n]*)\n```", text)


def test_ci_runs_readmes_test_command_verbatim():
    commands = _readme_commands()
    assert len(commands) == 2, "README should give one set-up-and-run command and one set-up-and-test command"
    test_command = next(c for c in commands if "pytest" in c)
    assert test_command in (ROOT / ".ci" / "run").read_text()
    assert any(c.endswith("fpa report dilated_conv2d") for c in commands)


def test_errors_derive_from_the_builtins_pytorch_raises():
    assert issubclass(fp_analysis.ParameterError, ValueError)
    assert issubclass(fp_analysis.ShapeError, RuntimeError)
    assert issubclass(fp_analysis.DtypeError, TypeError)
    assert all(issubclass(e, fp_analysis.FpaError) for e in (fp_analysis.ParameterError, fp_analysis.ShapeError))


def test_the_command_lines_preset_names_are_the_presets():
    from fp_analysis.ops.presets import PRESETS
    from fp_analysis.options import PRESET_NAMES

    assert tuple(PRESETS) == PRESET_NAMES


def _enum_members_without_a_docstring(path: pathlib.Path) -> list[str]:
    """``Class.MEMBER`` for each member of an Enum class in ``path`` that no string literal follows."""
    import ast

    missing = []
    for node in ast.walk(ast.parse(path.read_text())):
        bases = {getattr(b, "id", getattr(b, "attr", "")) for b in getattr(node, "bases", [])}
        if not isinstance(node, ast.ClassDef) or not bases & {"Enum", "IntEnum", "StrEnum"}:
            continue
        for i, statement in enumerate(node.body):
            if isinstance(statement, ast.Assign) and all(
                isinstance(t, ast.Name) and t.id.isupper() for t in statement.targets
            ):
                after = node.body[i + 1] if i + 1 < len(node.body) else None
                if not (isinstance(after, ast.Expr) and isinstance(getattr(after, "value", None), ast.Constant)):
                    missing.append(f"{node.name}.{statement.targets[0].id}")
    return missing


def test_every_enum_member_says_what_it_means():
    """Options are Enums with a docstring per member (shared/STYLE.md): modes, devices, causes, row kinds, orders…"""
    sources = sorted([*(ROOT / "fp_analysis").rglob("*.py"), *(ROOT / "kernels").glob("*.py")])
    missing = {str(p.relative_to(ROOT)): m for p in sources if (m := _enum_members_without_a_docstring(p))}
    assert not missing
    from fp_analysis.model.verdict import CauseKind
    from fp_analysis.options import PrecisionMode
    from fp_analysis.study.report import RowKind

    assert all(issubclass(e, str) for e in (PrecisionMode, RowKind, CauseKind))  # they print and serialize
