"""A release's errata: what is known to be wrong with it, append-only, beside its frozen data.

    results/releases/<RELEASE>/errata.yml   a YAML list, one entry per problem:
        - date: 'YYYY-MM-DD'        when it was found
          title: ...                the problem in a few words (the banner lists these)
          wrong: ...                what is wrong with the published numbers
          correction: ...           how it is corrected (and where)
          superseded_by: 2027.01    optional: the release that supersedes this one

The manifest's checksums leave this one file out (a release's data never changes, but what
is known about it grows); entries are only ever appended, so the file's earlier bytes stay
as they were and `git diff` of it shows additions only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from dlbench.core.storage.atomic import atomic_write_bytes
from dlbench.core.storage.layout import release_dir, release_names
from dlbench.core.storage.releases import ERRATA
from dlbench.core.storage.tables import ResultsFileError
from dlbench.core.text.typed_text import encodes, is_iso_date
from dlbench.core.text.visible import shown_name

HEADER = (
    "# Errata of this release: what is known to be wrong with its published numbers, and the\n"
    "# correction. Append-only (`dlbench erratum`): never edit or remove an entry. Not covered\n"
    "# by MANIFEST.json; the release's data stays frozen.\n"
)
FIELDS = ("date", "title", "wrong", "correction", "superseded_by")


class ErrataError(ResultsFileError):
    """An errata file or a new erratum that is not well formed (reported as one line)."""


@dataclass(frozen=True)
class Erratum:
    """One known problem of a release and its correction."""

    date: str  # YYYY-MM-DD
    title: str
    wrong: str
    correction: str
    superseded_by: str = ""

    def as_yaml(self) -> str:
        """This entry as one item of the errata list."""
        entry = {"date": self.date, "title": self.title, "wrong": self.wrong,
                 "correction": self.correction}
        if self.superseded_by:
            entry["superseded_by"] = self.superseded_by
        return yaml.safe_dump([entry], sort_keys=False, allow_unicode=True, width=88)


def _entry(item: object, path: Path, number: int) -> Erratum:
    if not isinstance(item, dict) or set(item) - set(FIELDS):
        raise ErrataError(f"{path}: entry {number} must be a mapping of {', '.join(FIELDS)}")
    values = {k: str(item.get(k) or "").strip() for k in FIELDS}
    erratum = Erratum(**values)
    check(erratum, f"{path}: entry {number}")
    return erratum


def check(erratum: Erratum, where: str) -> None:
    """Raise ErrataError unless the entry has an ISO date, a title, what is wrong and its
    correction."""
    if not is_iso_date(erratum.date):
        raise ErrataError(f"{where}: date {shown_name(erratum.date)} is not YYYY-MM-DD")
    for name in FIELDS:
        if not encodes(getattr(erratum, name)):
            raise ErrataError(f"{where}: '{name}' holds bytes that are not text "
                              f"({shown_name(getattr(erratum, name), 40)}); expected UTF-8 text")
    for name in ("title", "wrong", "correction"):
        if not getattr(erratum, name):
            raise ErrataError(f"{where}: '{name}' is empty; an erratum names the problem, "
                              "says what is wrong and gives its correction")


def read_errata(release_root: Path) -> tuple[Erratum, ...]:
    """The errata of the release at `release_root`, oldest first (none when no file)."""
    path = release_root / ERRATA
    if not path.is_file():
        return ()
    try:
        items = yaml.safe_load(path.read_text()) or []
    except yaml.YAMLError as error:
        raise ErrataError(f"{path}: not valid YAML ({error})") from None
    if not isinstance(items, list):
        raise ErrataError(f"{path}: expected a list of entries")
    return tuple(_entry(item, path, i + 1) for i, item in enumerate(items))


def superseded_by(errata: tuple[Erratum, ...]) -> str:
    """The release that supersedes this one, as the newest entry naming one says ('' if none)."""
    return next((e.superseded_by for e in reversed(errata) if e.superseded_by), "")


def append_erratum(results_dir: Path, release: str, erratum: Erratum) -> Path:
    """Add `erratum` at the end of the release's errata file; earlier entries stay byte for byte."""
    root = release_dir(results_dir, release)
    known = release_names(results_dir)
    if release not in known:
        raise ErrataError(f"unknown release {release!r}; releases: {', '.join(known) or 'none'}")
    check(erratum, "new erratum")
    if erratum.superseded_by and (erratum.superseded_by == release
                                  or erratum.superseded_by not in known):
        others = ", ".join(n for n in known if n != release) or "none yet"
        raise ErrataError(f"--superseded-by {erratum.superseded_by!r} is not another published "
                          f"release; releases: {others}")
    path = root / ERRATA
    existing = read_errata(root)  # refuses to append to a file that is not well formed
    if existing and erratum.date < existing[-1].date:
        raise ErrataError(f"date {erratum.date} is before the last erratum's "
                          f"({existing[-1].date}); entries are appended in date order")
    before = path.read_bytes() if path.is_file() else HEADER.encode()
    atomic_write_bytes(path, before + erratum.as_yaml().encode())
    return path
