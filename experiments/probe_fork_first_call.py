"""Does a forward in a child forked from a one-thread torch process give the bits later forwards give?

`fpa triage --device cpu` verdicts flip between runs (2 torch threads a job: `accumulation_order`, `approximation`
or `nondeterministic`, the check's max_abs 5.7e-6 … 6.6e-4 on one pair), and with OMP_NUM_THREADS=1 they do not.
The jobs are forked from the fork server, which runs torch on one thread (``run/forkserver_warmup``) and sets each
child's count after the fork (``run/forkserver_loop._become``). This imitates that: a parent on one thread runs a
convolution, then forks children that set 2 threads and run a LayerNorm → tanh → cumsum → logsumexp Model three
times on the same input. It prints, per outcome, how many children saw it: "first call differs" means the
child's first forward gave other bits than its later ones. ``--warm`` runs a parallel sum in each child first.
On a 2-core machine (2026-12-03): 3 to 11 of 24 children differ over four runs, 5 to 6 of 24 with --warm (so a
warm-up of the thread pool is not the fix); 10 fresh interpreters running the same Model all gave one set of bits.
On 2026-12-04, another 2-core machine (AMD EPYC, AVX-512; torch 2.13.0 CPU): 0 of 24 and 0 of 48 children differ
in six runs, with and without --warm, under ATEN_CPU_CAPABILITY=avx2 and default, and with three busy loops beside
it; the triage pair of 2026-12-03 gave accumulation_order with the same max_abs in ten runs. So the flip depends on
the machine; its cause is not known. The line it prints first names the machine it ran on.

    python experiments/probe_fork_first_call.py [--warm] [--children 24]
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import os

import torch


class _Model(torch.nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.norm = torch.nn.LayerNorm(features)

    def forward(self, x):
        return torch.logsumexp(torch.cumsum(torch.tanh(self.norm(x)), dim=-1), dim=-1)


def _child(warm: bool) -> str:
    torch.set_num_threads(2)
    if warm:
        torch.ones(1 << 20).sum()
    torch.manual_seed(0)
    x, model = torch.randn(64, 512), _Model(512)
    with torch.no_grad():
        digests = [hashlib.sha256(model(x).numpy().tobytes()).hexdigest()[:12] for _ in range(3)]
    return "all calls the same" if len(set(digests)) == 1 else "first call differs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warm", action="store_true")
    parser.add_argument("--children", type=int, default=24)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.nn.Conv2d(2, 3, 3)(torch.rand(1, 2, 6, 6))  # as the fork server's warm-up
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    print(f"{cpu}, {os.cpu_count()} CPUs, torch {torch.__version__} ({torch.backends.cpu.get_cpu_capability()})")
    seen = collections.Counter()
    for _ in range(args.children):
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            os.write(write, _child(args.warm).encode())
            os._exit(0)
        os.close(write)
        seen[os.read(read, 100).decode()] += 1
        os.close(read)
        os.waitpid(pid, 0)
    for outcome, count in sorted(seen.items()):
        print(f"{count:3d} of {args.children} children: {outcome}")


if __name__ == "__main__":
    main()
