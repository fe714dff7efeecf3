"""The whole-Model engine: the reference Model interposed op by op, evaluated in fp64 and in each arithmetic a side may
have used, the floor of plain fp32 rounding, and the verdict.

``interpose`` runs a Model as the graph of ATen ops it dispatches; ``rewrites`` lists the arithmetics a side may have
used; ``floor`` measures σ, the spread of fp32 rounding; ``compare`` measures each side's departure from a re-creation
in units of σ; ``judge`` turns the table of those fits into causes (pure functions); ``engine`` runs the whole analysis
and words the evidence; ``twins`` and ``locate`` add the bit-for-bit evidence of an order and where a bug lies;
``verdict`` holds the records and the only spelling of every verdict name; ``assertion`` is ``assert_equivalent``.
Imports numerics and ops; knows nothing of processes or files.
"""
