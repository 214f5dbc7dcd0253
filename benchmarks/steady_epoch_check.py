"""Cross-check the runner's timing: an independent, hand-written PyTorch loop in the same
process must agree with the runner's steady epoch time for the same cell (goal: within 10%).

Run: .venv/bin/python benchmarks/steady_epoch_check.py [--workload mlp-digits] [--rounds 3]
Prints both medians and their ratio; alternates the two to share the machine's noise.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from runner.experiments.training import pytorch as runner_pytorch
from runner.spec import CellSpec


def hand_written_epoch_times(epochs: int, model_name: str) -> list[float]:
    """A from-scratch loop: its own data loading, model and weights; only sizes are shared."""
    digits = load_digits()
    x, _, y, _ = train_test_split(digits.images / 16.0, digits.target, test_size=0.2,
                                  random_state=0, stratify=digits.target)
    x = torch.tensor(x, dtype=torch.float32)
    y = torch.tensor(y)
    if model_name == "mlp-digits":
        x = x.reshape(len(x), -1)
        model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(),
                                    torch.nn.Linear(128, 64), torch.nn.ReLU(),
                                    torch.nn.Linear(64, 10))
    else:
        x = x[:, None]
        model = torch.nn.Sequential(
            torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
            torch.nn.Flatten(), torch.nn.Linear(128, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    times = []
    for epoch in range(epochs):
        order = torch.from_numpy(np.random.default_rng(epoch).permutation(len(y)))
        start = time.perf_counter()
        xs, ys = x[order], y[order]
        for i in range(0, len(ys), 32):
            optimizer.zero_grad()
            loss = loss_fn(model(xs[i:i + 32]), ys[i:i + 32])
            loss.backward()
            optimizer.step()
        loss.item()
        times.append(time.perf_counter() - start)
    return times


def runner_steady_epoch_time(workload: str, epochs: int, threads: int) -> float:
    spec = CellSpec(experiment="training", workload=workload, framework="pytorch", backend="",
                    device="cpu", batch_size=32, repeats=1, threads=threads,
                    params={"epochs": epochs})
    outcome = runner_pytorch.run(spec)
    return next(o.value for o in outcome.observations if o.metric == "steady_epoch_time")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workload", default="mlp-digits", choices=["mlp-digits", "cnn-digits"])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    runner_times, hand_times = [], []
    for _ in range(args.rounds):
        runner_times.append(runner_steady_epoch_time(args.workload, args.epochs, args.threads))
        hand_times.append(statistics.median(hand_written_epoch_times(args.epochs, args.workload)[1:]))
    runner_median, hand_median = statistics.median(runner_times), statistics.median(hand_times)
    ratio = runner_median / hand_median
    print(f"{args.workload}: runner steady epoch {runner_median * 1e3:.2f} ms, "
          f"hand-written loop {hand_median * 1e3:.2f} ms, ratio {ratio:.3f} "
          f"({'within' if abs(ratio - 1) <= 0.10 else 'OUTSIDE'} 10%)")


if __name__ == "__main__":
    main()
