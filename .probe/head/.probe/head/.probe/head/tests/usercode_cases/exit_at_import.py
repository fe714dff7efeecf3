"""A candidate that exits while it is being imported."""

import sys

sys.exit(0)
