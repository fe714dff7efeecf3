import os

# One torch thread per test process and per worker process it starts (they inherit it): xdist runs a test
# per core, and an OpenMP pool per process on the same cores made worker-starting tests 2–5× slower.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import pytest
from hypothesis import HealthCheck, settings

# Fast by default (CI), and the same examples every run: a CI run at 297869c lost a test process to a segfault
# inside torch's CPU convolution on one random config that 6000 further random examples did not meet again; a run
# that fails must fail again where it is replayed. HYPOTHESIS_PROFILE=thorough for a long run, random.
settings.register_profile(
    "fast", max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("thorough", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fast"))


def pytest_configure(config):
    """Compile our package once, before any test process starts: where PYTHONDONTWRITEBYTECODE is set (the
    project's machines set it) no process writes .pyc files, so each of the hundreds the tests start (fpa, fork
    servers, notebook kernels) would compile fp_analysis's modules again, ~0.9 s each on CI's cores."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:  # the controller, or a run without xdist
        import compileall
        import pathlib

        root = pathlib.Path(__file__).resolve().parents[1]
        for folder in ("fp_analysis", "kernels"):
            compileall.compile_dir(root / folder, quiet=1)


def pytest_collection_modifyitems(config, items):
    try:
        import torch

        has_cuda = torch.cuda.is_available()
    except ImportError:
        has_cuda = False
    skip_gpu = pytest.mark.skip(reason="needs a CUDA device (torch.cuda.is_available() is false)")
    skip_slow = pytest.mark.skip(
        reason="slow on CI's two cores (more cases of a kind CI covers, or full-size presets): run on the device "
        "(experiments/device_run.sh slowtests) or with FPA_RUN_SLOW=1"
    )
    run_slow = os.environ.get("FPA_RUN_SLOW") == "1"
    for item in items:
        if "gpu" in item.keywords and not has_cuda:
            item.add_marker(skip_gpu)
        if "slow" in item.keywords and not run_slow:
            item.add_marker(skip_slow)
    # The longest tests first: xdist hands tests out in this order, and a 30 s test started last keeps one core
    # busy after the other has finished (CI has two).
    items.sort(key=lambda item: "long" not in item.keywords)


def pytest_terminal_summary(terminalreporter):
    """The skipped tests as counts by reason, a line each (pyproject's ``-r`` lists failures, errors and known
    defects (xfail) only, where ``-ra`` would print a line per skipped test): the reasons shared by a few tests or
    more by name, the rest as one count (``-rs`` lists them all)."""
    reasons: dict[str, int] = {}
    for report in terminalreporter.stats.get("skipped", []):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        reason = reason.removeprefix("Skipped: ")
        reasons[reason] = reasons.get(reason, 0) + 1
    if not reasons:
        return
    common = sorted(((n, r) for r, n in reasons.items() if n >= 5), reverse=True)
    rest = sum(reasons.values()) - sum(n for n, _ in common)
    terminalreporter.write_sep("-", "skipped, by reason")
    for count, reason in common:
        terminalreporter.write_line(f"{count:5d}  {reason}")
    if rest:
        distinct = len(reasons) - len(common)
        terminalreporter.write_line(f"{rest:5d}  for {distinct} other reasons, each given by fewer than 5 tests (-rs)")
