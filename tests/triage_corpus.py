"""A KernelBench-runs folder of our own for ``fpa triage``: problems of the model suite, each with solutions
written as kernel authors write them (KernelBench's format: a self-contained file defining ``ModelNew``),
and the verdicts each must get.

Each solution is the problem's source with ``Model`` renamed ``ModelNew`` and one change: the same code
(identical), the convolutions' operands rounded to TF32 as a tensor-core kernel does (candidate_tf32), the
convolutions summed in fp64 (accumulation_order: more accurate), GELU's tanh form where the problem has a
GELU, a bias off on one channel (bug), a NaN written (nonfinite); and, on one problem, a bias off by less
than the check's tolerance (a false pass of KernelBench's check: the verdict is bug) and the ways user code
fails: it raises, hangs, exits, segfaults, prints pages (then answers right), or defines no ``ModelNew`` (not a
KernelBench solution: a usage error).

Also a smaller runs folder, the ``runs`` fixture: five pairs of kernelbench_cases and usercode_cases, with the
verdict each gets (``EXPECTED``).
"""

from __future__ import annotations

import pathlib
import re
import shutil

import pytest

TESTS = pathlib.Path(__file__).resolve().parent
MODEL_CASES = TESTS / "model_cases"
KERNELBENCH, USERCODE = TESTS / "kernelbench_cases", TESTS / "usercode_cases"
PROBLEMS = (
    "conv2d_mish",
    "conv2d_gelu",
    "convtranspose2d_mish",
    "conv3d_mish_tanh",
    "conv2d_groupnorm_tanh",
    "convtranspose3d_gelu",
)

_CONV_HOOK = '''
import torch.nn.functional as _F

_CONVOLUTIONS = ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")


def _computed(convolution):
    """The convolution computed by {how}."""

    def computed(*args, **kwargs):
{body}

    return computed


_forward = ModelNew.forward


def _hooked(self, *inputs):
    saved = {{name: getattr(_F, name) for name in _CONVOLUTIONS}}
    try:
        for name, convolution in saved.items():
            setattr(_F, name, _computed(convolution))
        return _forward(self, *inputs)
    finally:
        for name, convolution in saved.items():
            setattr(_F, name, convolution)


ModelNew.forward = _hooked
'''
# (torch.nn's convolution modules call torch.nn.functional's functions, looked up at each call; a TorchDispatchMode
# would catch aten.convolution itself, but its first use imports torch._dynamo: 1.2 s of each pair on CI's cores.)

_TF32_BODY = """\
        args = list(args)
        for i in (0, 1):  # input and weight, rounded to nearest even at TF32's 10 mantissa bits
            bits = args[i].contiguous().view(torch.int32)
            bits = (bits + 0xFFF + ((bits >> 13) & 1)) & ~0x1FFF
            args[i] = bits.view(torch.float32)
        return convolution(*args, **kwargs)"""

_FP64_BODY = """\
        args = [a.double() if isinstance(a, torch.Tensor) else a for a in args]
        kwargs = {k: v.double() if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}
        return convolution(*args, **kwargs).float()"""

_AFTER = """
_forward = ModelNew.forward


def _changed(self, *inputs):
    out = _forward(self, *inputs)
{body}
    return out


ModelNew.forward = _changed
"""

# The solutions every problem gets: name → (the code appended to the renamed problem, the verdicts it may get).
_EVERY_PROBLEM = {
    "same": ("", ("identical",)),
    "tf32": (_CONV_HOOK.format(how="a tensor-core kernel: operands in TF32", body=_TF32_BODY), ("candidate_tf32",)),
    "fp64_sum": (
        _CONV_HOOK.format(how="a kernel summing in fp64", body=_FP64_BODY),
        ("accumulation_order", "identical"),
    ),
    "bias_off": (_AFTER.format(body="    out[:, 1] += 0.05 * out.abs().max()"), ("bug",)),
    "nan": (_AFTER.format(body="    out.view(-1)[7] = float('nan')"), ("nonfinite",)),
}
_GELU_TANH = ("", ("gelu_approximation",))  # the source's F.gelu(...) becomes F.gelu(..., approximate="tanh")

# How user code fails, on the first problem: name → (code appended, verdicts).
_FAILURES = {
    "raises": (_AFTER.format(body='    raise RuntimeError("kernel launch failed: too many resources requested")'),
               ("user_code_failed",)),
    "hangs": (_AFTER.format(body="    import time\n    time.sleep(10_000)"), ("user_code_failed",)),
    "exits": (_AFTER.format(body="    import os\n    os._exit(7)"), ("user_code_failed",)),
    "segfault": (_AFTER.format(body="    import ctypes\n    ctypes.string_at(0)"), ("user_code_failed",)),
    "prints": (_AFTER.format(body="    print('debug:', 'x' * 200, flush=True)\n    print(out.sum())"), ("identical",)),
    "no_model_new": ("\ndel ModelNew\n", ("usage_error",)),
    # a bug under the check's tolerance (atol 1e-4): KernelBench passes it, the verdict must not
    "bias_off_small": (_AFTER.format(body="    out[:, 1] += 5e-5"), ("bug",)),
}  # fmt: skip
FALSE_PASS = "level1/conv2d_mish/bias_off_small/solution"


def _as_solution(problem_source: str, extra: str) -> str:
    source = re.sub(r"\bclass Model\b", "class ModelNew", problem_source)
    return source.rstrip() + "\n" + extra


def write_corpus(root: pathlib.Path) -> dict[str, tuple[str, ...]]:
    """Write the folder (level1/<problem>/<sample>/solution.py beside level1/<problem>/problem.py); returns each
    pair's id (as ``fp_analysis.triage.discovery.discover`` names it) → the verdicts it may get."""
    expected = {}
    for index, name in enumerate(PROBLEMS):
        source = (MODEL_CASES / f"{name}.py").read_text()
        folder = root / "level1" / name
        folder.mkdir(parents=True)
        (folder / "problem.py").write_text(source)
        solutions = dict(_EVERY_PROBLEM)
        if "F.gelu(" in source:
            solutions["gelu_tanh"] = _GELU_TANH
        if index == 0:
            solutions.update(_FAILURES)
        for sample, (extra, verdicts) in solutions.items():
            text = _as_solution(source, extra)
            if sample == "gelu_tanh":
                text = re.sub(r"F\.gelu\(([^()]*(?:\([^()]*\))?[^()]*)\)", r'F.gelu(\1, approximate="tanh")', text)
            (folder / sample).mkdir()
            (folder / sample / "solution.py").write_text(text)
            expected[f"level1/{name}/{sample}/solution"] = verdicts
    return expected


def _problem(root: pathlib.Path, name: str, problem: pathlib.Path, solutions: dict[str, pathlib.Path]) -> None:
    """A problem folder as KernelBench runs lay them out: problem.py, and one sample folder per solution."""
    folder = root / "level1" / name
    folder.mkdir(parents=True)
    shutil.copy(problem, folder / "problem.py")
    for sample, solution in solutions.items():
        (folder / sample).mkdir()
        shutil.copy(solution, folder / sample / "solution.py")
        if (solution.parent / "_conv.py").exists():  # the usercode cases' helper module, beside each solution
            shutil.copy(solution.parent / "_conv.py", folder / sample / "_conv.py")


@pytest.fixture
def runs(tmp_path) -> pathlib.Path:
    """Five pairs: arithmetic (an other order, GELU's tanh form), a bug, a candidate that raises, one that hangs."""
    root = tmp_path / "runs"
    _problem(
        root,
        "conv",
        KERNELBENCH / "conv_problem.py",
        {"other_order": KERNELBENCH / "conv_other_order.py", "off_by_one": KERNELBENCH / "conv_off_by_one.py"},
    )
    _problem(root, "gelu", KERNELBENCH / "gelu_problem.py", {"tanh": KERNELBENCH / "gelu_tanh.py"})
    _problem(root, "usercode", USERCODE / "problem.py",
             {"raises": USERCODE / "raises.py", "hangs": USERCODE / "hang.py",
              "raises_again": USERCODE / "raises.py"})  # fmt: skip
    return root


EXPECTED = {
    "level1/conv/other_order/solution": "accumulation_order",
    "level1/conv/off_by_one/solution": "bug",
    "level1/gelu/tanh/solution": "gelu_approximation",
    "level1/usercode/raises/solution": "user_code_failed",
    "level1/usercode/hangs/solution": "user_code_failed",
    "level1/usercode/raises_again/solution": "user_code_failed",  # the same file as raises: one stored result
}
