"""Harness overhead: the digits MLP's batch-1 latency as dlbench's inference path times it,
against torch.utils.benchmark (PyTorch) or timeit (TensorFlow, Keras) on the same model, the
same predictor and the same input, in the same process, interleaved over rounds.

Each framework runs in its own process started with the cell's environment and core
affinity (dlbench.runner.cell.environment), through the framework's real inference code
(runner/worker/experiments/inference/<framework>.py): its `measure_inference` is replaced by the
comparison, so the model, predictor and warm-up are the ones a run uses. Per round it prints
dlbench's median latency (the timing loop's own cost already subtracted, and that cost), the
reference's median of the same `predictor.predict` call, their ratio (goal: within 3%), and
for PyTorch the bare forward call under inference_mode (what the predictor adds: the context
and the copy to a NumPy array).

Timing taken on a shared machine is no result: run it alone.

Run: .venv/bin/python benchmarks/harness_overhead.py [--framework pytorch tensorflow keras-jax]
         [--rounds 4]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from process_noise import the_cell  # noqa: E402  (a sibling script)

from dlbench.runner.cell.spec import CellSpec  # noqa: E402
from dlbench.runner.cell.environment import cell_environment  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def reference_ms(predictor: object, single: object, framework: str) -> dict[str, float]:
    """The reference timers' median per call (ms) of the same predict call."""
    if framework == "pytorch":
        import torch
        from torch.utils import benchmark

        threads = torch.get_num_threads()  # the cell's, not the Timer's default of 1
        same = benchmark.Timer("predict(x)", globals={"predict": predictor.predict, "x": single},
                               num_threads=threads)
        bare = benchmark.Timer("with torch.inference_mode(): forward(x)",
                               globals={"torch": torch, "forward": predictor.forward,
                                        "x": single}, num_threads=threads)
        return {"reference": same.blocked_autorange(min_run_time=1.0).median * 1e3,
                "bare_forward": bare.blocked_autorange(min_run_time=1.0).median * 1e3}
    timer = timeit.Timer(lambda: predictor.predict(single))
    number, _ = timer.autorange()
    return {"reference": statistics.median(timer.repeat(7, number)) / number * 1e3}


def compare(rounds: int):
    """A stand-in for measure_inference: the comparison, printed as JSON lines."""
    def measure(cell, predictor, fairness):
        from dlbench.runner.worker.harness.inference import InferencePlan, latencies_ms

        plan = InferencePlan.of(cell.spec)
        one = cell.data.x_test[:1]  # the same input for both timers
        single = predictor.prepare(one)
        for _ in range(max(10, plan.warmup_calls)):
            predictor.predict(single)
        for index in range(rounds):
            ours = statistics.median(latencies_ms(cell, predictor, one, plan))
            overhead = cell.sampler.record["inference_latency"]["loop_overhead_ms"]
            theirs = reference_ms(predictor, single, cell.spec.framework_id.name)
            print(json.dumps({"round": index + 1, "dlbench": ours, "loop_overhead": overhead,
                              **theirs}), flush=True)
        return cell.outcome([], fairness)
    return measure


def inner(spec_json: str, rounds: int) -> None:
    """In the cell's process: run the framework's inference code with the comparison."""
    import importlib

    from dlbench.runner.worker.entry import pin_affinity

    pin_affinity()
    spec = CellSpec.from_json(spec_json)
    module = importlib.import_module(f"dlbench.runner.worker.experiments.inference.{spec.framework}")
    module.measure_inference = compare(rounds)
    module.run(spec)


def report(framework: str, lines: list[dict]) -> None:
    """Per round: both medians in microseconds and their ratio."""
    for line in lines:
        extra = (f"  bare forward {line['bare_forward'] * 1e3:7.2f} us"
                 if "bare_forward" in line else "")
        print(f"{framework:16} round {line['round']}: dlbench {line['dlbench'] * 1e3:7.2f} us "
              f"(loop {line['loop_overhead'] * 1e3:.2f} us subtracted)  reference "
              f"{line['reference'] * 1e3:7.2f} us  ratio "
              f"{line['dlbench'] / line['reference']:.3f}{extra}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--framework", nargs="+", default=["pytorch"])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--inner", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:
        inner(args.inner, args.rounds)
        return
    for framework in args.framework:
        spec = the_cell("mlp-latency", framework, 1)
        done = subprocess.run([sys.executable, __file__, "--inner", spec.to_json(),
                               "--rounds", str(args.rounds)], cwd=ROOT,
                              env=cell_environment(spec), capture_output=True, text=True)
        lines = [json.loads(line) for line in done.stdout.splitlines()
                 if line.startswith("{")]
        if done.returncode or not lines:
            raise SystemExit(f"{framework}: the measuring process failed: "
                             f"{done.stderr.strip()[-500:]}")
        report(framework, lines)


if __name__ == "__main__":
    main()
