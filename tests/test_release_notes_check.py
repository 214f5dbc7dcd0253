"""A release's published notes read against its data: busy re-measures, decided shares, A/A
controls and slowdowns between machines (report/notes, `dlbench results facts --check`)."""

from __future__ import annotations

from dataclasses import replace

from dlbench.cli import main
from dlbench.core.storage.releases import release_names
from dlbench.report.inputs.source import load_release
from dlbench.report.notes.check import check_notes
from dlbench.report.notes.facts import run_facts, slowdowns
from tests.site_fixtures import ROOT

AMD, INTEL_1, INTEL_2 = "20261207T022029Z-cpu", "20261206T063453Z-cpu", "20261206T134112Z-cpu"


def test_2027_04_s_facts_are_computed_from_its_runs():
    source = load_release(ROOT / "results", "2027.04")
    facts = {f.run_id: f for f in run_facts(source)}
    assert (facts[AMD].remeasured, facts[AMD].remeasures) == (20, 24)
    assert round(facts[AMD].largest_steal, 3) == 0.086
    assert [facts[r].remeasured for r in (INTEL_1, INTEL_2)] == [4, 3]
    assert [(facts[r].decided, facts[r].testable) for r in (INTEL_1, INTEL_2, AMD)] == [
        (17, 24), (18, 24), (15, 24)]
    assert {round(v, 2) for v in slowdowns(source, AMD, INTEL_1).values()} == {
        1.07, 1.17, 1.20, 1.22, 1.24}
    assert round(facts[AMD].best_real_share, 3) == 0.751  # OpenVINO, 211.5 of 281.6 GFLOP/s


def test_2027_04_s_notes_are_contradicted_by_its_data_on_busy_processes_and_slowdowns():
    source = load_release(ROOT / "results", "2027.04")
    checked, findings = check_notes(source)
    assert checked == 8  # two decided shares and A/A counts per run, one busy, one slowdown
    assert {f.run_id for f in findings} == {AMD}
    claims = [f.claim for f in findings]
    assert claims[0] == "no process re-measured as busy"
    assert "20 processes re-measured as busy" in findings[0].data
    assert [f.data.split(" against")[0] for f in findings[1:]] == ["1.07-1.24x", "1.22-1.41x"]


def test_notes_that_state_the_data_pass_the_check():
    source = load_release(ROOT / "results", "2027.04")
    notes = (f"- `{AMD}`: 20 processes re-measured as busy. Every process ran 1.07-1.24x "
             "longer than the same cell's on the Intel Xeon run 1 (median by experiment). "
             "15 of 24 testable timing answers decided (62%), 0 of 10 A/A controls name a "
             f"winner.\n- `{INTEL_1}`: 17 of 24 testable timing answers decided.\n")
    checked, findings = check_notes(replace(source, notes=notes))
    assert (checked, findings) == (5, [])


def test_every_release_after_2027_04_publishes_notes_its_data_confirm():
    for name in release_names(ROOT / "results"):
        if name > "2027.04":
            assert check_notes(load_release(ROOT / "results", name))[1] == [], name


def test_the_command_prints_the_facts_and_fails_on_contradicted_notes(capsys):
    results = str(ROOT / "results")
    assert main(["results", "facts", "2027.04", "--check", "--results-dir", results]) == 1
    out = capsys.readouterr().out
    assert "re-measured as busy: 20 processes, 24 re-measurements, CPU steal up to 8.6%" in out
    assert "notes: 8 figures checked against the data, 3 contradicted" in out
    assert main(["results", "facts", "2027.03", "--results-dir", results]) == 0
    assert main(["results", "facts", "2099.01", "--results-dir", results]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("dlbench: error: unknown release '2099.01'; "
                                               "releases: 2026.12, ")
