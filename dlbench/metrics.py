"""The registry of metrics: the single source of names, units and directions.

The runner validates every observation against it; the site labels every axis from it;
the downloads page turns it into the data dictionary.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Direction(enum.Enum):
    """Which way is better for a metric."""

    LOWER = "lower"
    HIGHER = "higher"
    NEITHER = "neither"

    @property
    def phrase(self) -> str:
        """A reader's phrase such as "lower is better"."""
        if self is Direction.NEITHER:
            return "informational"
        return f"{self.value} is better"


@dataclass(frozen=True)
class Metric:
    """One measurable quantity with its unit and better direction."""

    name: str
    unit: str
    direction: Direction
    description: str

    @property
    def label(self) -> str:
        """An axis label: name, unit and direction."""
        return f"{self.name} ({self.unit}, {self.direction.phrase})"


def _m(name: str, unit: str, direction: str, description: str) -> Metric:
    return Metric(name, unit, Direction(direction), description)


_ALL = [
    # training
    _m("first_epoch_time", "s", "lower",
       "Wall time of the first training epoch, including tracing/compilation."),
    _m("steady_epoch_time", "s", "lower",
       "Median wall time of the training epochs after the first one."),
    _m("epoch_time", "s", "lower",
       "Wall time of one training epoch (step = epoch index, 0 is the first)."),
    _m("train_throughput", "samples/s", "higher",
       "Training samples processed per second in steady state."),
    _m("time_to_target", "s", "lower",
       "Cumulative training time until the test accuracy first reached the workload's target."),
    _m("test_accuracy", "fraction", "higher",
       "Accuracy on the held-out test split after the last epoch."),
    _m("epoch_loss", "loss", "lower",
       "Mean training loss over one epoch (step = epoch index)."),
    _m("peak_memory", "MiB", "lower",
       "Peak memory during the timed region: process RSS on CPU, allocator peak on GPU."),
]

METRICS: dict[str, Metric] = {metric.name: metric for metric in _ALL}


class UnknownMetricError(ValueError):
    """A metric name that is not in the registry."""


def get_metric(name: str) -> Metric:
    """The registered metric called `name`, or a clear error listing valid names."""
    try:
        return METRICS[name]
    except KeyError:
        raise UnknownMetricError(
            f"unknown metric {name!r}; registered metrics: {', '.join(sorted(METRICS))}"
        ) from None
