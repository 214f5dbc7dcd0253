"""Writes tests/data/golden/: a tiny, synthetic results set the site tests build from.

The numbers are invented (a fixture, not a measurement) but shaped like the runner's output:
two runs on one machine, the second adding an experiment. Rerun after a change to the run
directory format: `python tests/data/make_golden.py`.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

from dlbench.core.storage.schema import CellStatus
from dlbench.runner.cell.outcome import CellOutcome, Fairness, Observation
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.driver.store.run_store import CellRecord, RunStore

ROOT = Path(__file__).parent / "golden"
SYSTEMS = [("pytorch", "pytorch"), ("tensorflow", "tensorflow"), ("keras", "tensorflow"),
           ("keras", "torch")]
SPEED = {"pytorch": 1.0, "tensorflow": 0.9, "keras-tensorflow": 1.3, "keras-torch": 1.6}
ENVIRONMENT = {
    "cpu": {"model": "Fixture CPU @ 2.0GHz", "logical_cores": 2},
    "memory_gib": 24.0,
    "os": "Linux 6.1 (fixture)",
    "python": "3.11.2",
    "frameworks": {"torch": "2.13.0", "tensorflow": "2.21.0", "keras": "3.15.1"},
    "git": {"commit": "0" * 40, "dirty": False},
}


def _observations(name: str, workload: str, epochs: int,
                  rng: random.Random) -> list[Observation]:
    base = {"mlp-digits": 0.05, "cnn-digits": 0.4}
    obs = []
    for repeat in range(5):
        steady = base_time = base[workload] * SPEED[name] * rng.uniform(0.95, 1.05)
        obs += [
            Observation("first_epoch_time", round(steady * 3.0, 6), repeat),
            Observation("steady_epoch_time", round(steady, 6), repeat),
            Observation("train_throughput", round(1437 / steady, 3), repeat),
            Observation("test_accuracy", round(rng.uniform(0.955, 0.975), 4), repeat),
            Observation("peak_memory", round(300 + 50 * SPEED[name] + rng.uniform(0, 5), 2),
                        repeat),
        ]
        for step in range(epochs):
            obs.append(Observation("epoch_time", round(base_time * (3 if step == 0 else 1), 6),
                                   repeat, step))
            obs.append(Observation("epoch_loss", round(2.3 / (1 + step), 5), repeat, step))
    return obs


def _record(spec: CellSpec, outcome: CellOutcome) -> CellRecord:
    code_path = f"runner/experiments/{spec.experiment}/{spec.framework}.py"
    return CellRecord(spec, outcome, "2026-12-01T10:00:00+00:00", 5.0, "", code_path, "0" * 64)


def write_run(run_id: str, experiment: str, workloads: list[str], seed: int) -> None:
    """One run: every system on every workload, one of them unsupported."""
    rng = random.Random(seed)
    store = RunStore(ROOT / "runs" / run_id)
    store.save_run_info({"run_id": run_id, "suite": "fixture", "started_at":
                         "2026-12-01T10:00:00+00:00", "device": "cpu"})
    store.save_environment(ENVIRONMENT)
    fairness = Fairness("epoch loop incl. data batching", "fp32", "default", "in-memory arrays",
                        2, 32)
    for workload in workloads:
        for framework, backend in SYSTEMS:
            spec = CellSpec(experiment, workload, framework, backend, "cpu", batch_size=32,
                            repeats=3, threads=2)
            name = spec.framework_id.name
            if workload == "cnn-digits" and name == "keras-torch":
                outcome = CellOutcome(CellStatus.UNSUPPORTED, reason="fixture: not supported")
            else:
                observations = _observations(name, workload, 3, rng)
                outcome = CellOutcome(CellStatus.OK, observations, fairness)
            store.save_record(_record(spec, outcome))
            store.save_code(f"runner/experiments/{experiment}/{framework}.py",
                            f'"""{framework} code of the {experiment} fixture."""\n\n'
                            f"def train(model, data):\n    return '{framework}'  # ``` fence\n")
    store.rebuild_tables()


if __name__ == "__main__":
    shutil.rmtree(ROOT, ignore_errors=True)
    write_run("20261201T100000Z-fixture", "training", ["mlp-digits", "cnn-digits"], 1)
    write_run("20261201T110000Z-fixture", "precision", ["mlp-digits"], 2)
