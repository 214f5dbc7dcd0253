"""How to cite a release: versioned URL, BibTeX, APA and CITATION.cff (CFF 1.2.0)."""

from __future__ import annotations

from dataclasses import dataclass

AUTHOR = "dlbench contributors"
PROJECT_TITLE = "dlbench: PyTorch, TensorFlow and Keras compared by measurement"
LICENSE = "MIT"


@dataclass(frozen=True)
class Citation:
    """The facts a citation of one release needs."""

    release: str
    date: str  # YYYY-MM-DD
    site_url: str  # the site's root, ending in '/'

    @property
    def url(self) -> str:
        """The release's own, versioned address."""
        return f"{self.site_url}{self.release}/"

    @property
    def title(self) -> str:
        """The cited title, naming the release."""
        return f"{PROJECT_TITLE} (release {self.release})"

    @property
    def key(self) -> str:
        """The BibTeX key, e.g. dlbench-2026-12."""
        return "dlbench-" + "".join(c if c.isalnum() else "-" for c in self.release)

    def bibtex(self) -> str:
        """A BibTeX @misc entry."""
        year, month = self.date[:4], self.date[5:7]
        return (
            f"@misc{{{self.key},\n"
            f"  author = {{{{{AUTHOR}}}}},\n"
            f"  title = {{{{{self.title}}}}},\n"
            f"  year = {{{year}}},\n"
            f"  month = {{{month}}},\n"
            f"  version = {{{self.release}}},\n"
            f"  howpublished = {{\\url{{{self.url}}}}},\n"
            f"  note = {{Versioned benchmark results, release {self.release}}}\n"
            f"}}"
        )

    def apa(self) -> str:
        """An APA 7 reference for a data set."""
        return f"{AUTHOR}. ({self.date[:4]}). *{self.title}* [Data set]. {self.url}"

    def cff(self) -> str:
        """A CITATION.cff (CFF 1.2.0) for this release."""
        return (
            "cff-version: 1.2.0\n"
            'message: "If you use these measurements, please cite this release as below."\n'
            "type: dataset\n"
            f'title: "{self.title}"\n'
            "authors:\n"
            f'  - name: "{AUTHOR}"\n'
            f'version: "{self.release}"\n'
            f'date-released: "{self.date}"\n'
            f'url: "{self.url}"\n'
            f"license: {LICENSE}\n"
            "keywords:\n  - benchmark\n  - pytorch\n  - tensorflow\n  - keras\n"
        )
