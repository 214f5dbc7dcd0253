"""dlbench's shared model: metrics, tables, statistics, results layout, cell identity.

The leaf of the project: it imports neither runner/ (measuring) nor report/ (the site).
Its subpackage dlbench.cli is the `dlbench` command, the only top; nothing imports it.
"""
