"""The whole-Model engine: the reference Model interposed op by op, evaluated in fp64 and in each arithmetic a side may
have used, the floor of plain fp32 rounding, and the verdict.

``interpose`` runs a Model as the graph of ATen ops it dispatches; ``engine`` fits every hypothesis to the candidate's
output (``fits``) and ``verdict`` holds the records and the rules that turn a table of fits into causes, as pure
functions. Imports numerics and ops; knows nothing of processes or files.
"""
