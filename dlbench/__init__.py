"""The shared model (dlbench.core) and the `dlbench` command (dlbench.cli)."""
