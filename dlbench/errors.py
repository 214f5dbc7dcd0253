"""Errors shared by every layer: each is reported by the CLI as one line, exit status 2.

Kept apart so that runner/, report/ and the model can raise them without importing the CLI.
"""

from __future__ import annotations


class UsageError(Exception):
    """Bad input from the user: reported as one line, exit status 2."""


class ResultsFileError(ValueError):
    """A results file that is corrupt, not ours, or of a schema we cannot read."""


class CompareError(ValueError):
    """A side of a comparison that cannot be found or read, or that is ambiguous."""


class ReleaseError(ValueError):
    """A release that may not be written: bad name, existing name, unknown or no runs."""


class LayoutError(ValueError):
    """A run or release that does not exist under results/, or a directory that is not one."""
