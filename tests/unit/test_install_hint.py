"""The install hint for an optional extra names the form this install takes."""

from __future__ import annotations

import pathlib
import sys

from fp_analysis.errors import install_hint


def test_from_a_checkout_the_hint_installs_the_checkout_not_another_copy():
    checkout = pathlib.Path(__file__).resolve().parents[2]
    assert (checkout / "pyproject.toml").is_file()  # the tests run from a checkout
    assert install_hint("notebooks") == f"{sys.executable} -m pip install -e '{checkout}[notebooks]'"
