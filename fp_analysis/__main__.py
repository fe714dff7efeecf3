"""``python -m fp_analysis`` is the ``fpa`` command line."""

from .command import main

main()
