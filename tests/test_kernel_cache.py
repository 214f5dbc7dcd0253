"""The frameworks' kernel choices and the CPU peak kept on disk for the processes of one test
session (runner/driver/machine/kernels.py, peak.py): one probe per key, a changed key probes again,
an answer with a failed probe is never kept, without a folder every call probes, and a
`dlbench` process reads the answer kept under its own key."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from dlbench.runner.driver.machine.kernels import (PROBE_CACHE, decisive_facts, kept_answer,
                                            kernel_choices, probe_key)
from tests.conftest import SESSION_FOLDERS

ROOT = Path(__file__).resolve().parent.parent


class Probe:
    """Answers in turn, counting the calls (a probe that costs nothing)."""

    def __init__(self, *answers: dict) -> None:
        self.answers, self.calls = list(answers), 0

    def __call__(self) -> dict:
        self.calls += 1
        return self.answers.pop(0)


AVX512 = {"torch": {"cpu_capability": "AVX512"}, "tensorflow": {"onednn_custom_ops": True}}
AVX2 = {"torch": {"cpu_capability": "AVX2"}, "tensorflow": {"onednn_custom_ops": False}}


def test_the_session_sets_the_variable_the_runner_reads():
    assert PROBE_CACHE in SESSION_FOLDERS and os.environ.get(PROBE_CACHE)


def test_processes_starting_at_once_probe_once(tmp_path):
    """Callers at once take turns on the folder: the first probes, the others read it (each
    thread opens the folder itself, as separate processes do)."""
    import threading
    import time

    calls = []

    def slow_probe() -> dict:
        calls.append(1)
        time.sleep(0.3)
        return AVX512

    answers = []
    threads = [threading.Thread(target=lambda: answers.append(kept_answer(tmp_path, "k",
                                                                          slow_probe)))
               for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == [AVX512] * 3 and len(calls) == 1


def test_the_cpu_record_is_read_once_per_cpu_and_only_what_the_record_needs(tmp_path,
                                                                           monkeypatch):
    from dlbench.runner.driver.machine import kernels

    reads = Probe({"vendor_id_raw": "GenuineIntel", "brand_raw": "kept", "arch": "X86_64",
                   "flags": ["avx2"]})
    monkeypatch.setattr(kernels, "_read_cpu_info", reads)
    monkeypatch.setenv(PROBE_CACHE, str(tmp_path))
    first = kernels.cpu_info.__wrapped__()
    assert kernels.cpu_info.__wrapped__() == first and reads.calls == 1
    assert first["brand_raw"] == "kept"
    assert [p.name.split("-")[1] for p in tmp_path.iterdir()] == ["cpuinfo"]
    monkeypatch.undo()
    read = kernels._read_cpu_info()  # py-cpuinfo's own: no clock, which varies by the call
    assert set(read) <= set(kernels.CPU_INFO_KEYS) and read["flags"]


def test_one_probe_per_key_and_a_changed_key_probes_again(tmp_path):
    probe, key = Probe(AVX512, AVX2), probe_key(decisive_facts())
    assert kept_answer(tmp_path, key, probe) == AVX512
    assert kept_answer(tmp_path, key, probe) == AVX512 and probe.calls == 1
    assert [p.name for p in tmp_path.iterdir()] == [f"probe-{key}.json"]
    other = probe_key(decisive_facts() | {"python": ["/elsewhere/python", "3.12.0"]})
    assert other != key
    assert kept_answer(tmp_path, other, probe) == AVX2 and probe.calls == 2  # never the old one
    assert kept_answer(tmp_path, key, Probe()) == AVX512


def _changed(facts: dict, what: str) -> dict:
    """`facts` with one decisive fact changed."""
    changed = json.loads(json.dumps(facts))
    if what == "version":
        changed["frameworks"]["torch"]["versions"]["torch"] = "0.0.1"
    elif what == "reinstalled":
        changed["frameworks"]["tensorflow"]["changed_ns"] = 1
    elif what == "cpu":
        changed["cpu"][2] = [flag for flag in changed["cpu"][2] if flag != "avx2"] + ["x"]
    elif what == "variable":
        changed["variables"]["DNNL_MAX_CPU_ISA"] = "AVX2"
    else:
        changed["probes"] = {"torch": "print('{}')"}
    return changed


@pytest.mark.parametrize("what", ["version", "reinstalled", "cpu", "variable", "probe code"])
def test_each_decisive_fact_changes_the_key(what):
    facts = decisive_facts()
    assert probe_key(_changed(facts, what)) != probe_key(facts)
    assert probe_key(json.loads(json.dumps(facts))) == probe_key(facts)


def test_the_facts_name_the_installed_frameworks_and_the_steering_variables(monkeypatch):
    monkeypatch.setenv("DNNL_MAX_CPU_ISA", "AVX2")
    monkeypatch.setenv("TF_ENABLE_ONEDNN_OPTS", "1")  # the probes unset it: decides nothing
    facts = decisive_facts()
    assert facts["frameworks"]["torch"]["versions"]["torch"] == metadata.version("torch")
    assert facts["frameworks"]["torch"]["origin"].endswith("__init__.py")
    assert facts["variables"]["DNNL_MAX_CPU_ISA"] == "AVX2"
    assert "TF_ENABLE_ONEDNN_OPTS" not in facts["variables"]
    assert facts["python"][0] == sys.executable


def test_an_answer_with_a_failed_probe_is_not_kept(tmp_path):
    failed = AVX512 | {"openvino": {"error": "no answer in 120 s"}}
    probe, key = Probe(failed, AVX512), probe_key(decisive_facts())
    assert kept_answer(tmp_path, key, probe) == failed and not list(tmp_path.iterdir())
    assert kept_answer(tmp_path, key, probe) == AVX512 and probe.calls == 2


def test_a_folder_that_cannot_keep_the_answer_still_gives_it(tmp_path):
    (tmp_path / "a-file").write_text("")
    probe = Probe(AVX512, AVX2)
    assert kept_answer(tmp_path / "a-file", "k", probe) == AVX512
    assert kept_answer(tmp_path / "a-file", "k", probe) == AVX2 and probe.calls == 2


def test_without_a_folder_every_call_probes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    probe = Probe(AVX512, AVX2)
    assert kernel_choices(None, probe) == AVX512 and kernel_choices("", probe) == AVX2
    assert probe.calls == 2 and not list(tmp_path.iterdir())


def test_a_process_reads_the_answer_kept_under_its_own_key(tmp_path):
    """A fresh process with the folder set: framework_kernels is the kept answer (a probe
    would have given real versions), so `dlbench run` records it."""
    env = os.environ | {PROBE_CACHE: str(tmp_path)}
    key = subprocess.run([sys.executable, "-c", "from dlbench.runner.driver.machine.kernels import "
                          "decisive_facts, probe_key; print(probe_key(decisive_facts()))"],
                         cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    kept = {"torch": {"cpu_capability": "kept"}}
    (tmp_path / f"probe-{key.stdout.strip()}.json").write_text(json.dumps(kept))
    read = subprocess.run([sys.executable, "-c", "import json; from dlbench.runner.driver.machine."
                           "kernels import framework_kernels; "
                           "print(json.dumps(framework_kernels()))"],
                          cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert json.loads(read.stdout) == kept


def test_a_test_session_measures_the_cpu_peak_once_per_key(tmp_path, monkeypatch):
    """The peak a session's runs record is the first one measured there (kept only with
    every probe's rate); the cores it may use or a thread variable make another key."""
    from dlbench.runner.driver.machine.peak import kept_cpu_peak, peak_key

    monkeypatch.setenv(PROBE_CACHE, str(tmp_path))
    cpu = {"vendor": "AMD", "arch": "X86_64", "avx2": True, "usable_cores": 1}
    first = kept_cpu_peak(cpu)
    assert len(first["probes"]) == 5 and first["fp32_flops"] > 0
    assert kept_cpu_peak(cpu) == first  # a second measurement would give other rates
    assert [p.name for p in tmp_path.iterdir()] == [f"probe-{peak_key()}.json"]
    key = peak_key()
    monkeypatch.setenv("OMP_NUM_THREADS", str(os.cpu_count() + 7))
    assert peak_key() != key
    torchless = {"probes": {"numpy_fp32_flops": 1e9}}  # torch could not run its probe
    assert kept_answer(tmp_path / "other", key, Probe(torchless),
                       keep=lambda peak: len(peak["probes"]) == 5) == torchless
    assert not (tmp_path / "other").exists()
