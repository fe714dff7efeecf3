"""``fpa explain`` as a job: KernelBench's check on a problem/solution pair (``kernelbench``), the explanation of
its worst trial by the engine (``job``), and the parent-side launchers that check options and run a job in a
worker (``jobs``: explain, fuzz, replay). Imports model and run.
"""
