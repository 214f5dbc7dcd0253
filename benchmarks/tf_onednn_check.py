"""TensorFlow's forward calls with its oneDNN custom operations forced on
(`TF_ENABLE_ONEDNN_OPTS=1`, what every cell ran under until 2026-12-05, release 2027.03
included) against TensorFlow's own default for this CPU, side by side.

    .venv/bin/python benchmarks/tf_onednn_check.py [--rounds 3]

Each round starts one worker process per setting (their order alternates round by round),
under the cell environment (threads, affinity) the runner gives a TensorFlow cell; each
process times the median forward call of every case below after warm-up calls. Prints the
median of the rounds per setting and the forced/default ratio of each round. Measure alone:
it takes a few minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: (workload, path, batch, timed calls): the real-size models and the small ones, each on
#: TensorFlow's eager path and its tf.function graph (the production path, and the graph a
#: SavedModel serves).
CASES = [("resnet50-synthetic", "eager", 1, 5), ("resnet50-synthetic", "graph", 1, 5),
         ("resnet50-synthetic", "graph", 8, 3), ("bert-base-tokens", "eager", 1, 5),
         ("bert-base-tokens", "graph", 1, 5), ("resnet-synthetic", "graph", 32, 10),
         ("mlp-digits", "eager", 1, 200), ("mlp-digits", "graph", 1, 200)]
SETTINGS = ("forced-on", "tf-default")


def child_environment(setting: str) -> dict[str, str]:
    """The runner's environment for a TensorFlow cell, with oneDNN forced on or left to TF."""
    from dlbench.runner.cell.spec import CellSpec
    from dlbench.runner.cell.environment import cell_environment

    spec = CellSpec(experiment="inference", workload="mlp-digits", framework="tensorflow",
                    backend="", device="cpu", threads=len(os.sched_getaffinity(0)), repeats=1)
    env = cell_environment(spec) | {"PYTHONPATH": str(ROOT)}
    if setting == "forced-on":
        env["TF_ENABLE_ONEDNN_OPTS"] = "1"
    return env


def median_call_ms(forward, x, calls: int) -> float:
    """The median of `calls` forward calls (output to NumPy), each timed by the harness's
    latency loop, after two warm-up calls."""
    import numpy as np

    from dlbench.runner.worker.harness.inference import timed_calls

    def call(inputs) -> None:
        forward(inputs).numpy()

    call(x), call(x)
    return float(np.median(timed_calls(call, [x], calls, budget_s=float("inf"))))


def measure_cases() -> dict[str, float]:
    """In a worker: every case's median call (ms), and what TensorFlow chose for oneDNN."""
    from dlbench.runner.worker.entry import pin_affinity

    pin_affinity()
    import tensorflow as tf

    from dlbench.runner.worker.adapters.tensorflow import input_dtype
    from dlbench.runner.cell.spec import CellSpec
    from dlbench.runner.worker.harness import open_cell

    result: dict[str, float] = {}
    for workload, path, batch, calls in CASES:
        spec = CellSpec(experiment="inference", workload=workload, framework="tensorflow",
                        backend="", device="cpu", threads=len(os.sched_getaffinity(0)),
                        repeats=1, params={"data_size": "small"})
        cell = open_cell(spec)
        data = cell.data
        model = cell.adapter.build_model(data.workload, data.initial_layers(), data.input_shape)
        signature = [tf.TensorSpec([None, *data.input_shape], input_dtype(data.workload))]
        forward = tf.function(model.__call__, input_signature=signature) \
            if path == "graph" else model
        x = tf.constant(data.x_test[:batch])
        result[f"{workload} {path} batch {batch}"] = median_call_ms(forward, x, calls)
        result["onednn"] = float(cell.settings["tf.onednn_custom_ops"] == "True")
    return result


def run_round(setting: str) -> dict[str, float]:
    done = subprocess.run([sys.executable, __file__, "--child"], cwd=ROOT, text=True,
                          capture_output=True, env=child_environment(setting), check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure_cases()))
        return
    rounds: list[dict[str, dict[str, float]]] = []
    for index in range(args.rounds):
        order = SETTINGS if index % 2 == 0 else SETTINGS[::-1]
        rounds.append({setting: run_round(setting) for setting in order})
        print(f"round {index + 1} of {args.rounds} done", file=sys.stderr, flush=True)
    report(rounds)


def report(rounds: list[dict[str, dict[str, float]]]) -> None:
    """One line per case: each setting's median over rounds, and the per-round ratios."""
    import numpy as np

    chose = {s: {bool(r[s]["onednn"]) for r in rounds} for s in SETTINGS}
    print(f"oneDNN custom ops on: forced-on {chose['forced-on']}, tf-default {chose['tf-default']}")
    print(f"{'case':38s} {'forced-on ms':>13s} {'tf-default ms':>14s}  forced/default per round")
    for case in (key for key in rounds[0][SETTINGS[0]] if key != "onednn"):
        forced = [r["forced-on"][case] for r in rounds]
        default = [r["tf-default"][case] for r in rounds]
        ratios = ", ".join(f"{f / d:.2f}x" for f, d in zip(forced, default))
        print(f"{case:38s} {np.median(forced):13.2f} {np.median(default):14.2f}  {ratios}")


if __name__ == "__main__":
    main()
