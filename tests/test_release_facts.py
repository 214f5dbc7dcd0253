"""What a release's pages tell the version selector: its name and its machines in words
(report/site/build.py's release_facts, handed to every page's head by mkdocs_release.py)."""

from __future__ import annotations

from pathlib import Path

import yaml

from dlbench.core.machine.machines import machine_kind
from dlbench.report.inputs.source import load_release
from dlbench.report.site import mkdocs_release
from dlbench.report.site.build import release_facts
from tests.site_fixtures import ROOT


def test_a_release_names_the_machine_kinds_its_runs_measured_on() -> None:
    facts = {}
    for name in ("2027.02", "2027.03"):
        source = load_release(ROOT / "results", name)
        facts[name] = yaml.safe_load(release_facts(source))
        assert facts[name]["name"] == name
        assert facts[name]["machines"] == [machine_kind(r.environment).words
                                           for r in source.runs]
    # both 'AMD EPYC, 2 cores': one with AVX-512 BF16, the other without
    assert facts["2027.02"]["machines"] != facts["2027.03"]["machines"]


def test_the_hook_hands_the_facts_to_the_pages_or_none(tmp_path: Path) -> None:
    config = {"docs_dir": str(tmp_path), "extra": {}}
    assert mkdocs_release.on_config(config)["extra"]["release"] is None  # a draft writes none
    (tmp_path / mkdocs_release.RELEASE_FILE).write_text(
        yaml.safe_dump({"name": "2027.03", "machines": ["AMD EPYC, 2 cores, AVX2 only"]}))
    assert mkdocs_release.on_config(config)["extra"]["release"]["machines"] == [
        "AMD EPYC, 2 cores, AVX2 only"]
