"""Moved to dlbench.releases, so compare and reproduce share the release layout; this name
stays until the tests that import it from here switch."""

from dlbench.releases import assign_result_ids, freeze_release  # noqa: F401
