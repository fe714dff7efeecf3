"""``fpa fuzz``: a user's Model as a search space (``model_space``) and the Hypothesis search over it (``search``),
each example judged by the explain machinery. Imports explain, model, run.
"""
