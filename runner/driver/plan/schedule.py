"""The order a run measures its processes in: seeded, random, interleaved.

Every cell is measured by `spec.repeats` independent worker processes. The processes run in
rounds across the whole run: round k holds process k of every cell that has one, every
experiment's together, in a random order drawn from the run's seed. So each cell's processes
are spread over the whole look, and drift, background load or a slow state of the machine
lands on every framework alike instead of on whichever ran last. Rounds by experiment kept a
cell's first three processes within minutes of each other (2027.04's AMD run measured Keras
on TensorFlow's ResNet-50 training processes 0-2 in its first 10 minutes, all in a slow state
its later processes were not in): three draws of one moment, not of the run. The seed and the
order are recorded in run.json, and each process record carries its place in that order.
"""

from __future__ import annotations

import random
from dataclasses import replace

from dlbench.runner.cell.spec import CellSpec


def new_seed() -> int:
    """A fresh seed for a run's order."""
    return random.SystemRandom().randrange(2**31)


def process_order(cells: list[CellSpec], seed: int) -> list[CellSpec]:
    """One spec per process (repeat_index 0..repeats-1 of every cell), in measuring order:
    round by round over every cell of the run, each round shuffled from `seed`."""
    order: list[CellSpec] = []
    for index in range(max((cell.repeats for cell in cells), default=0)):
        round_cells = [cell for cell in cells if cell.repeats > index]
        random.Random(f"{seed}:{index}").shuffle(round_cells)
        order += [replace(cell, repeat_index=index) for cell in round_cells]
    return order


def process_label(spec: CellSpec) -> str:
    """How run.json names one process: CELL_ID#INDEX."""
    return f"{spec.cell_id}#{spec.repeat_index}"
