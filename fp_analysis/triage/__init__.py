"""``fpa triage``: many problem/solution pairs, each judged as ``fpa explain`` would, in parallel and resumable.

``pairs`` finds the pairs and runs them on a local pool (``ray`` on a Ray cluster), ``report`` draws the HTML page.
Imports explain, run and the store.
"""
