"""What a fresh interpreter imports, checked in one: the command line and the supervising side of a job
without torch, and the interposer without torch._dynamo.
"""

from __future__ import annotations

import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_the_command_line_starts_without_torch():
    """`fpa --help` and the supervising side of a job import no torch (the workers do)."""
    import subprocess
    import sys

    code = "import sys, fp_analysis.cli.app, fp_analysis.explain.jobs; print('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"


def test_fpa_explain_stores_its_run_without_importing_torch_in_the_supervisor(tmp_path):
    """The whole `fpa explain` in the supervising process, storing included: torch's versions for the store come
    from the worker (importing torch here cost 2 s of a small pair's 4 on CI's machine)."""
    import os
    import subprocess
    import sys

    cases = ROOT / "tests" / "kernelbench_cases"
    code = (
        "import sys\nfrom fp_analysis.cli.app import app\n"
        f"args = ['explain', '--problem', {str(cases / 'conv_problem.py')!r}, '--solution', "
        f"{str(cases / 'conv_other_order.py')!r}, '--trials', '1', '--json']\n"
        "try:\n    app(args)\nexcept SystemExit:\n    pass\n"
        "print('torch imported:', 'torch' in sys.modules, file=sys.stderr)\n"
    )
    env = {**os.environ, "FPA_STORE": str(tmp_path / "store")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert "torch imported: False" in done.stderr, done.stderr[-2000:]
    from fp_analysis.store import read_store

    (row,) = read_store(tmp_path / "store", command="explain").to_pylist()
    assert row["meta_torch_version"] and "meta_cudnn_version" in row


def test_interposing_does_not_import_torch_dynamo():
    """A mode's ``__torch_dispatch__`` wrapped by PyTorch imports torch._dynamo on its first op (1.5 s of every
    job); the interposer opts out (``_should_skip_dynamo``), checked in a fresh process."""
    import subprocess
    import sys

    code = (
        "import sys, torch\n"
        "from fp_analysis.model.interpose import Arithmetic, evaluate\n"
        "evaluate(torch.nn.Conv2d(2, 3, 3), [torch.rand(1, 2, 5, 5)], Arithmetic())\n"
        "print('torch._dynamo' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stdout.strip() == "False", result.stderr
