"""``fpa triage``: many problem/solution pairs, each judged as ``fpa explain`` would, in parallel and resumable.

``pairs`` runs a triage (``triage``): ``discovery`` finds the pairs, ``keys`` says which stored rows are theirs,
``pool`` runs them on the local pool (``ray`` on a Ray cluster), each building ahead the solutions that build an
extension (``builds``; ``headers``: the builders' precompiled torch header), ``rows`` makes each pair's row,
``summary`` adds them up and ``report`` draws the HTML page. Imports explain, run and the store.
"""
