"""Running untrusted user code apart from fpa: the fork server and its workers, the candidate's own process, the wire
format (no pickle from a user process), tensors across processes, the sandbox, file snapshots and signals.

A job is a function name and JSON-able options; what comes back is a checked record, a fate and an exit code.
Imports numerics and ops only for the fork server's warm-up; knows nothing of verdicts.
"""
