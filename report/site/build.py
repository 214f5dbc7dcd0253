"""`dlbench build`: render one release (or draft) into site_src/, deterministically."""

from __future__ import annotations

import io
import json
import os
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from importlib import metadata
from pathlib import Path

import altair as alt
import jinja2
import pandas as pd
import yaml

from dlbench.core.declarations import experiments as declared_experiments
from dlbench.core.storage.releases import ERRATA, release_file
from dlbench.core.storage.tables import write_table
from dlbench.report.render.charts import static_spec
from dlbench.report.render.labels import use_recorded_words
from dlbench.report.render.svg import BackgroundBundle, render_svg, svg_pool
from dlbench.core.storage.history import history
from dlbench.report.render.user_text import inert_frame
from dlbench.report.pages.cite import Citation, release_citation, result_citation
from dlbench.report.site.errata import read_errata, superseded_by
from dlbench.report.site.errata_page import errata_blocks
from dlbench.report.pages.home import source_judgement
from dlbench.report.site.mkdocs_draft import DRAFT_FILE
from dlbench.report.site.mkdocs_errata import BANNER_FILE
from dlbench.report.site.mkdocs_nav import NAV_FILE
from dlbench.report.site.mkdocs_release import RELEASE_FILE
from dlbench.report.pages.registry import (PageInputs, SourceInputs, render_pages,
                                           render_pages_before_verdicts)
from dlbench.report.render.jinja import ChartBlock, environment, render
from dlbench.report.site.cache import BuildReport, SiteCache, site_key, write_tree
from dlbench.report.inputs.source import Source, source_designs
from dlbench.report.verdicts.verdict_table import calibrate, verdict_files
from dlbench.report.verdicts.stored import PUBLISHED_VERDICTS, STORED, stored_verdicts
from dlbench.report.inputs.labelled import hardware_words, labelled_results

VEGA_BUNDLE = "assets/javascripts/vega-bundle.js"


def vega_lite_version() -> str:
    """The Vega-Lite major.minor version altair writes specs for, e.g. '6.4'."""
    return ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])


def renderer_version() -> str:
    """What a static SVG depends on besides its spec: Vega-Lite's and vl-convert's versions."""
    return f"vega-lite {vega_lite_version()}, vl-convert {metadata.version('vl-convert-python')}"


def vega_bundle(script: str) -> bytes:
    """Vega, Vega-Lite and vega-embed's script, wrapped in its own function scope."""
    return f"(function () {{\n{script}\n}})();\n".encode()


def chart_svgs(charts: dict[str, ChartBlock], cache: SiteCache,
               spare_cores: int = 0) -> dict[str, bytes]:
    """The static SVG of each chart by its path: each distinct spec once, those not cached
    rendered in parallel (in worker processes: vl-convert holds the interpreter lock), on
    every core but `spare_cores`."""
    version, vl_version = renderer_version(), vega_lite_version()
    specs = {path: static_spec(block.spec) for path, block in sorted(charts.items())}
    distinct = {json.dumps(spec, sort_keys=True): spec for spec in specs.values()}
    with svg_pool(len(distinct), spare_cores) as renderers, \
            ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        def render(spec: dict) -> bytes:
            return renderers.submit(render_svg, spec, vl_version).result()

        svgs = dict(zip(distinct, pool.map(lambda spec: cache.svg(spec, render, version),
                                           distinct.values()), strict=True))
    return {path: svgs[json.dumps(spec, sort_keys=True)] for path, spec in specs.items()}


class BackgroundCharts:
    """chart_svgs of the charts known early in a build (the experiment pages'), rendered in
    a thread whose renderers are worker processes on every core but one, while the build
    judges the verdicts and claims on that one: the two overlap."""

    def __init__(self, charts: dict[str, ChartBlock], cache: SiteCache) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1)
        self._future = self._executor.submit(chart_svgs, charts, cache, 1)

    def result(self) -> dict[str, bytes]:
        """The SVGs by path, once rendered."""
        try:
            return self._future.result()
        finally:
            self._executor.shutdown()


def _tables(source: Source, summary: pd.DataFrame) -> dict[str, bytes]:
    """The release's tables as downloads (its stored Parquet, the CSV built from it and checked
    against the published one), or a draft's, written for it."""
    files = {}
    with tempfile.TemporaryDirectory() as tmp:
        for kind, frame in (("cells", source.cells), ("observations", source.observations)):
            for suffix in (".csv", ".parquet"):
                if source.root:
                    data = release_file(source.root, f"{kind}{suffix}")
                else:  # a draft: its runs' tables, together
                    stem = Path(tmp) / kind
                    if not stem.with_suffix(suffix).exists():
                        write_table(frame.drop(columns=["schema_version"]), stem, kind)
                    data = stem.with_suffix(suffix).read_bytes()
                files[f"downloads/{kind}{suffix}"] = data
    buffer = io.BytesIO()
    summary.to_parquet(buffer, index=False)
    files["downloads/results.parquet"] = buffer.getvalue()
    files["downloads/results.csv"] = summary.to_csv(index=False).encode()
    return files


def result_citation_files(summary: pd.DataFrame, cite: Citation) -> dict[str, bytes]:
    """A BibTeX and a CFF file per result ID, under downloads/cite/."""
    files = {}
    for _, row in summary.dropna(subset=["result_id"]).iterrows():
        entry = result_citation(row, cite)
        files[f"downloads/cite/{entry.result_id}.bib"] = entry.bibtex().encode()
        files[f"downloads/cite/{entry.result_id}.cff"] = entry.cff().encode()
    return files


def errata_files(source: Source, env: jinja2.Environment, cite: Citation) -> dict[str, bytes]:
    """The errata page, the banner every page shows and the errata download, when the
    release has errata."""
    errata = read_errata(source.root) if source.root else ()
    if not errata:
        return {}
    newer = superseded_by(errata)
    banner = {"release": source.name, "titles": [e.title for e in errata],
              "superseded_by": newer}
    return {
        "errata.md": render(env, "errata.md.j2", errata=errata_blocks(errata, source),
                            superseded_by=newer, source=source, cite=cite).encode(),
        BANNER_FILE: yaml.safe_dump(banner, sort_keys=False, allow_unicode=True).encode(),
        "downloads/errata.yml": (source.root / ERRATA).read_bytes(),
    }


def release_facts(source: Source) -> bytes:
    """The release's name and the machines it was measured on, in words (each run's devices,
    in run order): the version selector says when another release ran elsewhere."""
    machines = []
    for run in source.runs:
        cells = source.cells[source.cells["run_id"] == run.run_id]
        for device in sorted(set(cells["device"].astype(str))) or ["cpu"]:
            machines.append(hardware_words(run.environment, device))
    facts = {"name": source.name, "machines": list(dict.fromkeys(machines))}
    return yaml.safe_dump(facts, sort_keys=False, allow_unicode=True).encode()


def site_files(source: Source, templates_dir: Path, site_url: str,
               results_dir: Path | None = None, cache: SiteCache | None = None
               ) -> dict[str, bytes]:
    """Every file of site_src/ for `source`, by relative path; `results_dir` (where the other
    releases are) adds the comparison page; `cache` keeps SVGs and the Vega bundle. The
    workload words its runs recorded label its pages only: they are forgotten after it, so a
    later build or label in this process never reads another run's words."""
    try:
        return _site_files(source, templates_dir, site_url, results_dir, cache)
    finally:
        use_recorded_words([])


def _site_files(source: Source, templates_dir: Path, site_url: str,
                results_dir: Path | None, cache: SiteCache | None) -> dict[str, bytes]:
    cache = cache or SiteCache(None)
    use_recorded_words([(str(run.info.get("device", "")), run.info.get("workload_words") or {})
                        for run in source.runs])
    bundle = BackgroundBundle(vega_lite_version(),
                              start=not cache.has("assets", renderer_version(), ".js"))
    env = environment(templates_dir)
    questions = {e.name: {"question": e.question} for e in declared_experiments.EXPERIMENTS}
    summary = labelled_results(source)
    cite = release_citation(source.root, source.name, source.date, site_url)
    past = inert_frame(history(results_dir)) if results_dir is not None else None  # any run
    early = render_pages_before_verdicts(SourceInputs(source, summary, env, past))
    charts = {f"charts/{block.svg}": block for done in early.values() for block in done.charts}
    experiment_svgs = BackgroundCharts(charts, cache)
    judged = source_judgement(source)
    calibration = calibrate(judged.answers, source_designs(source))
    inputs = PageInputs(source, summary, env, questions, judged, calibration, cite, results_dir)
    pages = render_pages(inputs)
    files = {path: done.text.encode() for path, done in pages.items()}
    files |= errata_files(source, env, cite)
    files |= {path: done.text.encode() for path, done in early.items()}
    late_charts = {f"charts/{block.svg}": block
                   for done in pages.values() for block in done.charts
                   if f"charts/{block.svg}" not in charts}
    files |= chart_svgs(late_charts, cache)
    files |= experiment_svgs.result()
    files |= _tables(source, summary)
    files |= verdict_files(inputs.verdicts)
    if stored_verdicts(source) is not None:  # the verdicts as published, as stored
        files[PUBLISHED_VERDICTS] = (source.root / STORED).read_bytes()
    if not source.draft:
        files["downloads/CITATION.cff"] = cite.cff().encode()
        files[RELEASE_FILE] = release_facts(source)
        files |= result_citation_files(summary, cite)
    else:
        files[DRAFT_FILE] = b"a draft: no version selector (report/site/mkdocs_draft.py)\n"
    assets = templates_dir / "assets"
    for path in sorted(p for p in assets.rglob("*") if p.is_file()):
        files[f"assets/{path.relative_to(assets).as_posix()}"] = path.read_bytes()
    files[VEGA_BUNDLE] = cache.blob("assets", renderer_version(),
                                    lambda: vega_bundle(bundle.result()), ".js")[0]
    files[NAV_FILE] = yaml.safe_dump(navigation(files, list(questions)),
                                     sort_keys=False).encode()
    return files


#: Pages after the experiments, in reading order; any other page follows alphabetically.
TAIL_PAGES = ("claims.md", "compare.md", "methodology.md", "environment.md", "downloads.md",
              "cite.md")


def _title(page: bytes) -> str:
    """The page's first level-1 heading."""
    heading = next((line for line in page.decode().splitlines() if line.startswith("# ")),
                   "# Untitled")
    return heading.removeprefix("# ").strip()


def navigation(files: dict[str, bytes], experiment_order: list[str]) -> list:
    """The site's navigation: home, the experiments, then the other pages."""
    pages = sorted(p for p in files if p.endswith(".md"))
    experiments = sorted(
        (p for p in pages if p.startswith("experiments/")),
        key=lambda p: (experiment_order.index(Path(p).stem) if Path(p).stem in
                       experiment_order else len(experiment_order), p))
    others = [p for p in pages if p != "index.md" and p not in experiments]
    others.sort(key=lambda p: (TAIL_PAGES.index(p) if p in TAIL_PAGES else -1, p))
    nav: list = [{"Home": "index.md"}] if "index.md" in files else []
    if experiments:
        nav.append({"Experiments": [{_title(files[p]): p} for p in experiments]})
    return nav + [{_title(files[p]): p} for p in others]


def source_dirs(source: Source) -> list[Path]:
    """The directories a source is read from: a release's, or a draft's runs'."""
    return [source.root] if source.root else [run.root for run in source.runs]


def build_site(source: Source, out_dir: Path, templates_dir: Path, site_url: str,
               results_dir: Path | None = None, cache_dir: Path | None = None) -> BuildReport:
    """Render `source` into `out_dir` (site_src/); with `cache_dir`, a build whose inputs did
    not change reuses the files of the last one, and unchanged charts reuse their SVGs."""
    cache = SiteCache(cache_dir)
    key = site_key(source_dirs(source), templates_dir, site_url, results_dir) \
        if cache_dir else ""
    files = cache.load(key) if cache_dir else None
    if files is not None:
        return replace(write_tree(out_dir, files), cached=True)
    files = site_files(source, templates_dir, site_url, results_dir, cache)
    report = write_tree(out_dir, files)  # the site first: a full cache must not cost it
    cache.store(key, files)
    return replace(report, svgs_rendered=cache.rendered, svgs_reused=cache.reused)
