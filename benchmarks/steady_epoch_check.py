"""Cross-check the runner's timing against hand-written training loops.

For PyTorch, TensorFlow and Keras on JAX, one process per framework alternates the runner's
training cell (mlp-digits, fp32) with an independent loop written the way each framework's
own tutorials write it: its own data handling, model and weights, the same sizes, batch,
optimizer and number of epochs. The runner's steady epoch time over the loop's must be within
1.00 +- 0.05: a larger gap is time the harness adds (or leaves out) around the work. The
ratio is the median over rounds of each round's pair (runner, then loop), so drift between
rounds cancels; the CPU steal over each framework's process is printed beside it.

Run on an idle machine (nothing else running):
    .venv/bin/python benchmarks/steady_epoch_check.py [--epochs 10] [--rounds 5]
Prints one line per framework and exits 1 when a ratio is outside the goal.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dlbench.runner.cell.environment import cell_environment  # noqa: E402
from dlbench.runner.driver.machine.load import assess, read_load  # noqa: E402
from dlbench.runner.cell.spec import CellSpec  # noqa: E402

#: framework name -> (framework, backend) of the runner's cell.
SYSTEMS = {"pytorch": ("pytorch", ""), "tensorflow": ("tensorflow", ""),
           "keras-jax": ("keras", "jax")}
GOAL = 0.05
BATCH, LEARNING_RATE, MOMENTUM, SIZES = 32, 0.02, 0.9, (64, 128, 64, 10)


def digits() -> tuple[np.ndarray, np.ndarray]:
    """The digits training split (80%, stratified), flattened, scaled to [0, 1]."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    bunch = load_digits()
    x, _, y, _ = train_test_split(bunch.images / 16.0, bunch.target, test_size=0.2,
                                  random_state=0, stratify=bunch.target)
    return x.reshape(len(x), -1).astype(np.float32), y.astype(np.int64)


def epoch_orders(n: int, epochs: int) -> list[np.ndarray]:
    return [np.random.default_rng(epoch).permutation(n) for epoch in range(epochs)]


def pytorch_loop(epochs: int) -> list[float]:
    """The PyTorch tutorial loop: nn.Sequential, SGD, one optimizer step per batch."""
    import torch

    x, y = (torch.from_numpy(a) for a in digits())
    layers = []
    for fan_in, fan_out in zip(SIZES, SIZES[1:]):
        layers += [torch.nn.Linear(fan_in, fan_out), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers[:-1])
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE, momentum=MOMENTUM)
    loss_fn = torch.nn.CrossEntropyLoss()
    times = []
    for order in epoch_orders(len(y), epochs):
        start = time.perf_counter()
        index = torch.from_numpy(order)
        xs, ys = x[index], y[index]
        for i in range(0, len(ys), BATCH):
            optimizer.zero_grad()
            loss = loss_fn(model(xs[i:i + BATCH]), ys[i:i + BATCH])
            loss.backward()
            optimizer.step()
        loss.item()
        times.append(time.perf_counter() - start)
    return times


def tensorflow_loop(epochs: int) -> list[float]:
    """The TensorFlow custom-training-loop guide: tf.Variables, GradientTape, tf.function."""
    import tensorflow as tf

    x_np, y_np = digits()
    x, y = tf.constant(x_np), tf.constant(y_np)
    params = []
    for fan_in, fan_out in zip(SIZES, SIZES[1:]):
        limit = np.sqrt(6.0 / (fan_in + fan_out))
        kernel = np.random.default_rng(fan_in).uniform(-limit, limit, (fan_in, fan_out))
        params += [tf.Variable(kernel.astype(np.float32)), tf.Variable(tf.zeros(fan_out))]
    velocities = [tf.Variable(tf.zeros_like(p)) for p in params]

    @tf.function
    def step(xb: tf.Tensor, yb: tf.Tensor) -> tf.Tensor:
        with tf.GradientTape() as tape:
            h = xb
            for k in range(0, len(params), 2):
                h = h @ params[k] + params[k + 1]
                h = tf.nn.relu(h) if k + 2 < len(params) else h
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(yb, h))
        for p, g, v in zip(params, tape.gradient(loss, params), velocities):
            v.assign(MOMENTUM * v + g)
            p.assign_sub(LEARNING_RATE * v)
        return loss

    times = []
    for order in epoch_orders(len(y_np), epochs):
        start = time.perf_counter()
        xs, ys = tf.gather(x, order), tf.gather(y, order)
        for i in range(0, len(y_np), BATCH):
            loss = step(xs[i:i + BATCH], ys[i:i + BATCH])
        float(loss)
        times.append(time.perf_counter() - start)
    return times


def keras_loop(epochs: int) -> list[float]:
    """The Keras guide: Sequential, compile, one fit(epochs=N) with a timing callback."""
    import keras

    x, y = digits()
    model = keras.Sequential([keras.Input((SIZES[0],))]
                             + [keras.layers.Dense(n, activation="relu") for n in SIZES[1:-1]]
                             + [keras.layers.Dense(SIZES[-1])])
    model.compile(optimizer=keras.optimizers.SGD(LEARNING_RATE, momentum=MOMENTUM),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    times: list[float] = []

    class EpochTimer(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
            self.start = time.perf_counter()

        def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
            times.append(time.perf_counter() - self.start)

    model.fit(x, y, batch_size=BATCH, epochs=epochs, shuffle=True, verbose=0,
              callbacks=[EpochTimer()])
    return times


HAND_WRITTEN: dict[str, Callable[[int], list[float]]] = {
    "pytorch": pytorch_loop, "tensorflow": tensorflow_loop, "keras-jax": keras_loop}


def cell_spec(name: str, epochs: int, threads: int) -> CellSpec:
    framework, backend = SYSTEMS[name]
    return CellSpec(experiment="training", workload="mlp-digits", framework=framework,
                    backend=backend, device="cpu", batch_size=BATCH, repeats=1,
                    threads=threads, params={"epochs": epochs})


def runner_steady_epoch_s(spec: CellSpec) -> float:
    from importlib import import_module

    module = import_module(f"dlbench.runner.worker.experiments.training.{spec.framework}")
    outcome = module.run(spec)
    return next(o.value for o in outcome.observations if o.metric == "steady_epoch_time")


def measure_one(name: str, epochs: int, rounds: int, threads: int) -> dict:
    """In this process: the runner's cell and the hand-written loop, alternated."""
    spec = cell_spec(name, epochs, threads)
    runner_s, hand_s = [], []
    for _ in range(rounds):
        runner_s.append(runner_steady_epoch_s(spec))
        hand_s.append(statistics.median(HAND_WRITTEN[name](epochs)[1:]))
    ratios = sorted(r / h for r, h in zip(runner_s, hand_s))
    return {"framework": name, "runner_s": statistics.median(runner_s),
            "hand_s": statistics.median(hand_s), "ratio": statistics.median(ratios),
            "ratio_range": [ratios[0], ratios[-1]]}


def run_in_own_process(name: str, args: argparse.Namespace) -> dict:
    """One framework per process, with the environment the runner gives its cell."""
    spec = cell_spec(name, args.epochs, args.threads)
    command = [sys.executable, __file__, "--one", name, "--epochs", str(args.epochs),
               "--rounds", str(args.rounds), "--threads", str(args.threads)]
    env = cell_environment(spec) | {"PYTHONPATH": str(ROOT)}
    before = read_load()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True,
                          check=False)
    load = assess(before, read_load(), args.threads)
    if done.returncode != 0:
        raise SystemExit(f"{name}: the check failed:\n{done.stderr[-2000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return result | {"steal_percent": 100 * load["steal_share"], "busy": load["busy"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--framework", action="append", choices=list(SYSTEMS))
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--one", choices=list(SYSTEMS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure_one(args.one, args.epochs, args.rounds, args.threads)))
        return 0
    outside = 0
    for name in args.framework or list(SYSTEMS):
        result = run_in_own_process(name, args)
        ratio, (low, high) = result["ratio"], result["ratio_range"]
        verdict = "within" if abs(ratio - 1) <= GOAL else "OUTSIDE"
        outside += verdict == "OUTSIDE"
        print(f"{name:<11} mlp-digits: runner steady epoch {result['runner_s'] * 1e3:7.2f} ms, "
              f"hand-written loop {result['hand_s'] * 1e3:7.2f} ms, ratio {ratio:.3f} "
              f"(rounds {low:.3f}-{high:.3f}; {verdict} 1.00 +- {GOAL:.2f}); CPU steal "
              f"{result['steal_percent']:.1f}%", flush=True)
        for reason in result["busy"]:
            print(f"{'':<11} not quiet: {reason}; re-run when the machine is idle", flush=True)
    return 1 if outside else 0


if __name__ == "__main__":
    sys.exit(main())
