"""How to cite a release: versioned URL, BibTeX, APA and CITATION.cff (CFF 1.2.0)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

import pandas as pd

from dlbench.core.declarations.metrics import METRICS
from dlbench.core.storage.schema import system_label
from dlbench.core.storage.tables import read_json
from dlbench.core.judging.verdict_engine import control_twins
from dlbench.report.inputs.labelled import format_number
from dlbench.report.render.labels import workload_label
from dlbench.report.render.user_text import plain_text

AUTHOR = "dlbench contributors"
PROJECT_TITLE = "dlbench: PyTorch, TensorFlow and Keras compared by measurement"
LICENSE = "MIT"
#: mkdocs.yml's site_url until the project has an address: `dlbench publish` refuses it
#: unless the release is labelled local.
PLACEHOLDER_SITE_URL = "https://dlbench.example.org/"
#: What a release's CITATION.cff lists it under.
KEYWORDS = ("benchmark", "pytorch", "tensorflow", "keras")


class SiteUrlError(ValueError):
    """mkdocs.yml has no usable site_url."""


def configured_site_url(config: Path) -> str:
    """The address the versioned site is published at: mkdocs.yml's site_url, ending in '/'
    (the one setting that citations, frozen releases and the site itself read)."""
    try:
        settings = yaml.safe_load(config.read_text()) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise SiteUrlError(f"cannot read {config}: {getattr(error, 'strerror', None) or error}; "
                           "pass --config with the project's mkdocs.yml") from None
    if not isinstance(settings, dict):
        raise SiteUrlError(f"{config} is not a mkdocs config (a YAML mapping with site_url); "
                           "pass --config with the project's mkdocs.yml")
    value = settings.get("site_url") or ""
    return site_root(value, f"{config}: site_url")


def site_root(value: object, what: str) -> str:
    """An http(s) address as the site's root, ending in '/'; SiteUrlError naming `what`."""
    if not isinstance(value, str) or not value.startswith(("http://", "https://")):
        raise SiteUrlError(f"{what} must be an http(s) address, found {value!r}")
    return value if value.endswith("/") else value + "/"


def bibtex_entry(key: str, title: str, date: str, version: str, url: str, note: str) -> str:
    """A BibTeX @misc entry of the project's authors (date: YYYY-MM-DD)."""
    return (
        f"@misc{{{key},\n"
        f"  author = {{{{{AUTHOR}}}}},\n"
        f"  title = {{{{{title}}}}},\n"
        f"  year = {{{date[:4]}}},\n"
        f"  month = {{{date[5:7]}}},\n"
        f"  version = {{{version}}},\n"
        + (f"  howpublished = {{\\url{{{url}}}}},\n" if url else "")
        + f"  note = {{{note}}}\n"
        f"}}"
    )


def bibtex_key(name: str) -> str:
    """The BibTeX key of a release or result name, e.g. dlbench-2026-12."""
    return "dlbench-" + "".join(c if c.isalnum() else "-" for c in name)


def cff_text(message: str, title: str, version: str, date: str, url: str,
             keywords: tuple[str, ...] = ()) -> str:
    """A CITATION.cff (CFF 1.2.0) of a data set by the project's authors."""
    listed = "keywords:\n" + "".join(f"  - {k}\n" for k in keywords) if keywords else ""
    return (
        "cff-version: 1.2.0\n"
        f'message: "{message}"\n'
        "type: dataset\n"
        f'title: "{title}"\n'
        "authors:\n"
        f'  - name: "{AUTHOR}"\n'
        f'version: "{version}"\n'
        f'date-released: "{date}"\n'
        + (f'url: "{url}"\n' if url else "")
        + f"license: {LICENSE}\n"
    ) + listed


@dataclass(frozen=True)
class Citation:
    """The facts a citation of one release needs."""

    release: str
    date: str  # YYYY-MM-DD
    site_url: str  # the site's root, ending in '/'
    local: bool = False  # served on one machine only: its address is not a permanent one
    preview: bool = False  # a quick-suite run: a preview, not citable

    @property
    def caveat(self) -> str:
        """What keeps this release from being cited as usual ('' when nothing does)."""
        parts = []
        if self.preview:
            parts.append("a preview of a quick-suite run, not citable")
        if self.local:
            parts.append("a local release, not published at a permanent address")
        return "; ".join(parts)

    @property
    def has_address(self) -> bool:
        """Whether the site has a public address to cite (not the placeholder)."""
        return bool(self.site_url) and self.site_url != PLACEHOLDER_SITE_URL

    @property
    def url(self) -> str:
        """The release's own, versioned address; '' while the site has no public address
        (a citation then names the release and result IDs, never the placeholder)."""
        return f"{self.site_url}{self.release}/" if self.has_address else ""

    @property
    def title(self) -> str:
        """The cited title, naming the release."""
        return f"{PROJECT_TITLE} (release {self.release})"

    @property
    def key(self) -> str:
        """The BibTeX key, e.g. dlbench-2026-12."""
        return bibtex_key(self.release)

    def bibtex(self) -> str:
        """A BibTeX @misc entry."""
        return bibtex_entry(self.key, self.title, self.date, self.release, self.url,
                            f"Versioned benchmark results, release {self.release}"
                            f"{'; ' + self.caveat if self.caveat else ''}")

    def apa(self) -> str:
        """An APA 7 reference for a data set."""
        kind = f"Data set; {self.caveat}" if self.caveat else "Data set"
        return (f"{AUTHOR}. ({self.date[:4]}). *{plain_text(self.title)}* [{kind}]."
                + (f" {self.url}" if self.url else ""))

    def cff(self) -> str:
        """A CITATION.cff (CFF 1.2.0) for this release."""
        message = ("If you use these measurements, please cite this release as below."
                   if not self.caveat else f"This release is {self.caveat}.")
        return cff_text(message, self.title, self.release, self.date, self.url, KEYWORDS)


def release_citation(release_root: Path | None, name: str, date: str,
                     site_url: str) -> Citation:
    """The citation of a release, with the labels it was frozen with (local, preview) and the
    address it recorded when published (else `site_url`, the configured one)."""
    meta = read_json(release_root / "release.json") if release_root else {}
    return Citation(name, date, str(meta.get("site_url") or site_url),
                    local=bool(meta.get("local")),
                    preview=bool(meta.get("preview")))


@dataclass(frozen=True)
class ResultCitation:
    """The citation of one result: its release's, narrowed to one ID on one page."""

    release: Citation
    result_id: str
    page: str  # the page's path under the version, e.g. experiments/training/
    what: str  # the result in words, e.g. 'mlp-digits, pytorch: time per epoch'

    @property
    def url(self) -> str:
        """The permanent link into the release's version, at the result's row."""
        base = self.release.url
        return f"{base}{self.page}#r-{self.result_id}" if base else ""

    @property
    def key(self) -> str:
        """The BibTeX key, e.g. dlbench-2027-01-0524."""
        return bibtex_key(self.result_id)

    def bibtex(self) -> str:
        """A BibTeX @misc entry for this one result."""
        cite = self.release
        caveat = f"; {cite.caveat}" if cite.caveat else ""
        return bibtex_entry(self.key, f"{PROJECT_TITLE}, result {self.result_id}: {self.what}",
                            cite.date, cite.release, self.url,
                            f"Result {self.result_id} of release {cite.release}{caveat}") + "\n"

    def cff(self) -> str:
        """A CITATION.cff (CFF 1.2.0) for this one result."""
        cite = self.release
        message = (f"If you use result {self.result_id}, please cite it as below."
                   if not cite.caveat else f"This release is {cite.caveat}.")
        return cff_text(message, f"{PROJECT_TITLE}, result {self.result_id}: {self.what}",
                        cite.release, cite.date, self.url)


def machine_words(machine: str) -> str:
    """A summary row's machine ('cpu: Intel Xeon, 2 cores, AMX') as its kind in words."""
    device, _, words = machine.partition(": ")
    return words if device == "cpu" and words else machine


#: The metrics a citation example prefers: a serving or training time a reader quotes.
EXAMPLE_METRICS = ("latency_p50", "steady_epoch_time", "inference_throughput")


def example_row(summary: pd.DataFrame, cells: pd.DataFrame) -> pd.Series | None:
    """The result a page cites as its example: not an A/A control nor the cell it repeats,
    a serving or training time where there is one; None without results."""
    twins = control_twins(cells)
    controls = set(twins) | set(twins.values())
    usable = summary[~summary["cell_id"].astype(str).isin(controls)]
    for metric in EXAMPLE_METRICS:
        found = usable[usable["metric"].astype(str) == metric]
        if not found.empty:
            return found.iloc[0]
    return usable.iloc[0] if not usable.empty else None


def result_citation(row: pd.Series, cite: Citation) -> ResultCitation:
    """The citation of one summary row's result."""
    workload = workload_label(str(row["workload"]), str(row.get("device", "")))
    metric = METRICS.get(str(row["metric"]))
    unit = metric.unit if metric and metric.unit != "fraction" else ""
    what = f"{workload}, {system_label(str(row['system']))} ({row['variant']}): " \
           f"{metric.words if metric else row['metric']} " \
           f"{format_number(float(row['median']))}{' ' + unit if unit else ''}, " \
           f"on {machine_words(str(row.get('machine', '')))}"
    return ResultCitation(cite, str(row["result_id"]), f"experiments/{row['experiment']}/",
                          what)
