"""``fpa fuzz``: search configurations and data for a failure and shrink it; exit 1 when one is found."""

from __future__ import annotations

from typing import Annotated

import typer

from .. import records
from ..errors import ExitCode, ParameterError
from ..options import DEFAULT_TIMEOUT_S, PRESET_NAMES, check_op, check_seconds, check_seed
from ..run.interrupts import work_done
from .arguments import AsJson, Device, Timeout
from .console import out, shown
from .worker import WorkerStatus, print_worker


def fuzz(
    op: Annotated[str | None, typer.Argument(help=f"one of {', '.join(PRESET_NAMES)}: fuzz our own variants")] = None,
    problem: Annotated[str | None, typer.Option(help="KernelBench problem file to fuzz against")] = None,
    solution: Annotated[str | None, typer.Option(help="KernelBench solution file (ModelNew) to fuzz")] = None,
    max_examples: Annotated[
        int | None,
        typer.Option(help="examples to try, at least 1 (default 200; 2000 with HYPOTHESIS_PROFILE=thorough)"),
    ] = None,
    device: Device = "auto",
    seed: Annotated[int, typer.Option(help="the search's seed: the same seed draws the same examples")] = 0,
    replay: Annotated[str | None, typer.Option(help="replay one example (the JSON a failure prints)")] = None,
    timeout: Timeout = DEFAULT_TIMEOUT_S,
    as_json: AsJson = False,
) -> None:
    """Search a Model's constructor arguments, shapes and data (or a kernel variant's configs) for a difference
    arithmetic does not explain, and shrink it to a minimal example. Exit 1 when one is found, 3 when the
    candidate's code itself fails (raises, exits, crashes, hangs) on an example."""
    from ..explain.jobs import fuzz_files, replay_files

    if (problem is None) != (solution is None):
        raise ParameterError("give both --problem and --solution, or neither")
    if problem is not None and op is not None:
        raise ParameterError("give OP or --problem/--solution, not both")
    if problem is None and op is None:
        raise ParameterError(f"give OP ({', '.join(PRESET_NAMES)}) or --problem and --solution")
    if op is not None:
        check_op(op)
    if replay is not None and problem is None:
        raise ParameterError("--replay replays an example of a KernelBench pair: give --problem and --solution too")
    check_seconds("timeout", timeout)
    check_seed("seed", seed)
    with WorkerStatus(enabled=not as_json) as status:
        if replay is not None:
            result = replay_files(problem, solution, replay, device=device, timeout=timeout, on_event=status.update)
        elif problem is not None:
            result = fuzz_files(
                problem,
                solution,
                max_examples=max_examples,
                device=device,
                seed=seed,
                timeout=timeout,
                on_event=status.update,
            )
        else:
            from ..fuzz.variants import fuzz_op  # in this process: our own kernels, no user code

            result = fuzz_op(op, max_examples=max_examples, device=device, seed=seed)
    failures = result["failures"]
    user_code = any(f.get("user_code") for f in failures)
    work_done()  # the work is done: a signal now does not cut its output short
    if as_json:
        print(records.dumps(result))
    else:
        shrink = f" (then {result['shrink_steps']} runs to shrink the failure)" if result.get("shrink_steps") else ""
        asked = result.get("max_examples")
        short = (
            f" (of {asked} asked: the rest were refused or too large)" if asked and result["examples"] < asked else ""
        )
        if failures:
            short = ""  # the search stops at the first failure
        tried = f"{result['examples']} example{'s' if result['examples'] != 1 else ''} tried"
        out.print(f"{tried}{short}{shrink}; {len(failures)} failure(s).", highlight=False)
        if result.get("verdicts"):
            seen = ", ".join(
                f"{n} {verdict}" for verdict, n in sorted(result["verdicts"].items(), key=lambda kv: -kv[1])
            )
            out.print(f"  verdicts of the examples: {seen}", highlight=False)
        if result.get("refused"):
            top = result.get("refusals") or [{}]
            most = f" (most often: {shown(top[0]['reason'])})" if top[0] else ""
            out.print(
                f"  {result['refused']} drawn configurations the problem's own Model refused were not examples{most}",
                highlight=False,
            )
        if result.get("drawn"):
            out.print(f"  drawn: {', '.join(result['drawn'])} and the input shapes", highlight=False)
        for note in result.get("notes", []):
            out.print(f"  note: {shown(note)}", highlight=False)
        for f in failures:
            explanation = f.get("explanation") or {}
            verdict = explanation.get("verdict")
            evidence = explanation.get("evidence") or "; ".join(c["evidence"] for c in explanation.get("causes", []))
            out.print(f"[bold red]minimal failing config[/]: {shown(records.dumps(f['config'], indent=None))}")
            for conv in f.get("convs") or []:
                out.print(f"  {shown(conv)}", highlight=False)
            if f.get("not_from_get_init_inputs"):
                out.print(
                    f"  note: {', '.join(f['not_from_get_init_inputs'])} set away from the default, which "
                    "get_init_inputs() never passes (KernelBench does not check such configurations)",
                    highlight=False,
                )
            out.print(f"  {verdict}: {shown(str(evidence))}", highlight=False)
            out.print(f"  reproduce: {shown(f['command'])}", soft_wrap=True, highlight=False)
        if result.get("worker"):
            print_worker(result["worker"])
    if user_code:
        raise typer.Exit(ExitCode.USER_CODE)
    raise typer.Exit(ExitCode.NOT_EXPLAINED if failures else ExitCode.OK)
