"""A claim's verdicts across the machines of a release read as one line (claim_holds)."""

from __future__ import annotations

from dlbench.report.pages.claims import claim_holds

AMX, AVX2 = "Intel Xeon, 2 cores, AMX", "AMD EPYC 7B13, 2 cores, AVX2"


def _row(machine: str, verdict: str, device: str = "cpu") -> dict:
    return {"machine": machine, "device": device, "verdict": verdict}


def test_one_machine_says_nothing_about_where_a_claim_holds():
    assert claim_holds([_row(AMX, "supported")]) == ""


def test_one_verdict_on_every_machine_holds_on_all():
    assert claim_holds([_row(AMX, "contradicted"), _row(AVX2, "contradicted")]) == \
        "contradicted on both machine kinds"


def test_machines_that_could_not_measure_are_left_out_and_said_so():
    assert claim_holds([_row(AMX, "supported"), _row(AVX2, "not measurable here")]) == \
        f"supported on {AMX}; not measured on {AVX2}"


def test_different_verdicts_make_the_claim_depend_on_the_machine():
    line = claim_holds([_row(AMX, "supported"), _row(AVX2, "contradicted")])
    assert line == f"depends on the machine kind: supported on {AMX}; contradicted on {AVX2}"


def test_no_machine_that_measured_it_gives_no_line():
    assert claim_holds([_row(AMX, "not measurable here"),
                        _row(AVX2, "not measurable here")]) == ""


def test_runs_of_one_kind_from_two_hosts_are_one_machine_kind():
    """Two runs of one CPU kind, measured on two hosts, are that kind's replicates: one label
    (the claims judge them as one kind), never a second machine."""
    from types import SimpleNamespace

    from dlbench.report.claims.check import machines_of

    cpu = {"vendor": "Intel", "model": "Intel Xeon Processor", "usable_cores": 2, "amx": True}
    runs = [SimpleNamespace(run_id=f"r{n}", environment={"cpu": cpu, "hostname_sha256": host})
            for n, host in ((1, "aaaaaa"), (2, "bbbbbb"))]
    labels = machines_of(runs)
    assert labels["r1"] == labels["r2"] == "Intel Xeon, 2 cores, AMX"
