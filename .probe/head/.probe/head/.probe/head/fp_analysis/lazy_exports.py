"""A package's names imported on first use (PEP 562 module ``__getattr__``), for ``__init__`` files that re-export
their submodules' names: importing the package, or one submodule of it, then costs nothing for the others (the
CLI's start does not pay for torch; an explanation that needs ``fp_analysis.ops.conv`` does not pay for numba and
mpmath, which ``fp_analysis.ops.epilogue`` brings)."""

from __future__ import annotations

import importlib

__all__ = ["lazy_exports"]


def lazy_exports(package: str, exports: dict[str, str | None], namespace: dict, public: list[str]):
    """(``__getattr__``, ``__dir__``) for ``package``: ``exports`` maps each name to the submodule defining it (None:
    the name is a submodule); ``namespace`` is the package's ``globals()``, where a name, once imported, is kept
    as an ordinary attribute."""

    def __getattr__(name: str):
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(f".{exports[name] or name}", package)
        value = module if exports[name] is None else getattr(module, name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(public))

    return __getattr__, __dir__
