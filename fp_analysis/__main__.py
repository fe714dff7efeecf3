"""``python -m fp_analysis`` is the ``fpa`` command line."""

from .cli import main

main()
