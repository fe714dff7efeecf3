"""A file that defines no ModelNew."""
