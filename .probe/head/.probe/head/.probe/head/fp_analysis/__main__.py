"""``python -m fp_analysis`` is the ``fpa`` command line."""

from .cli.entry import main

main()
