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


class SaveError(Exception):
    """A file the filesystem would not let us write (no space, read-only, no permission):
    one line naming the path, what was being saved and the free space there; exit status 2."""

    def __init__(self, path: object, reason: str, free: str, what: str = "a file",
                 hint: str = "") -> None:
        self.path, self.reason, self.free, self.what, self.hint = path, reason, free, what, hint
        super().__init__(str(self))

    def __str__(self) -> str:
        line = (f"cannot save {self.what} to {self.path}: {self.reason} "
                f"({self.free} free there)")
        return f"{line}; {self.hint}" if self.hint else line

    def at(self, path: object) -> SaveError:
        """The same error, naming `path` (where a staged file was to end up)."""
        return SaveError(path, self.reason, self.free, self.what, self.hint)

    def about(self, what: str, hint: str = "") -> SaveError:
        """The same error, saying what was being saved (kept when already said) and what to do."""
        said = self.what if self.what != "a file" or not what else what
        return SaveError(self.path, self.reason, self.free, said, hint or self.hint)
