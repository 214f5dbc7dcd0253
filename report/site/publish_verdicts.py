"""Storing a release's verdicts inside it: at `dlbench publish`, and once for a release
published before releases stored them (with an erratum naming the code that judged them)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd

from dlbench.core.storage.layout import release_dir
from dlbench.report.inputs.source import Source, load_release
from dlbench.report.inputs.labelled import labelled_results
from dlbench.report.pages.home import source_judgement
from dlbench.report.site.errata import Erratum, append_erratum
from dlbench.report.verdicts.verdict_table import judged_table
from dlbench.report.verdicts.stored import STORED, store_verdicts


def release_verdicts(source: Source) -> pd.DataFrame:
    """The verdicts table of `source` as this code judges it (answers, pairs, the
    answers of their own rules, controls)."""
    return judged_table(source_judgement(source), labelled_results(source),
                        source.observations, source.cells)


def store_release_verdicts(results_dir: Path, name: str) -> Path:
    """Judge release `name` and store its verdicts in it (ReleaseError if it has them)."""
    return store_verdicts(release_dir(results_dir, name),
                          release_verdicts(load_release(results_dir, name)))


def store_staged_verdicts(results_dir: Path, staging: Path, name: str) -> Path:
    """Judge the complete release `name` staged in `staging` (under results/releases, not yet
    renamed into place) and store its verdicts in it: a release is frozen with them or not
    at all."""
    source = replace(load_release(results_dir, staging.name), name=name)
    return store_verdicts(staging, release_verdicts(source))


def backfill_verdicts(results_dir: Path, name: str, code: str, date: str) -> Path:
    """Store the verdicts of a release published before releases stored them, judged by
    this checkout (`code`: its commit), and say so in an erratum."""
    path = store_release_verdicts(results_dir, name)
    append_erratum(results_dir, name, Erratum(
        date, "Verdicts stored after publication",
        "This release was published before a release stored its verdicts: its pages judged "
        "its data again at every build, with whatever rule the site was built with, so a "
        "verdict a reader cited could change without notice.",
        f"Its verdicts, judged by the verdict engine of dlbench commit {code}, are now stored "
        f"in {STORED} (listed in MANIFEST.json); its pages show these, and a later rule's "
        "different judgement beside them. No measurement changed."))
    return path
