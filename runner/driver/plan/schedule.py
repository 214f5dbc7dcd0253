"""The order a run measures its processes in: seeded, random, interleaved.

Every cell is measured by `spec.repeats` independent worker processes. Within each
experiment, the processes run in rounds: round k holds process k of every cell that has
one, in a random order drawn from the run's seed. So each cell's processes are spread over
the whole experiment, and drift or background load lands on every framework alike instead
of on whichever ran last. Experiments keep their suite order. The seed and the order are
recorded in run.json, and each process record carries its place in that order.
"""

from __future__ import annotations

import random
from dataclasses import replace

from dlbench.runner.cell.spec import CellSpec


def new_seed() -> int:
    """A fresh seed for a run's order."""
    return random.SystemRandom().randrange(2**31)


def process_order(cells: list[CellSpec], seed: int) -> list[CellSpec]:
    """One spec per process (repeat_index 0..repeats-1 of every cell), in measuring order."""
    experiments = list(dict.fromkeys(cell.experiment for cell in cells))
    order: list[CellSpec] = []
    for experiment in experiments:
        mine = [cell for cell in cells if cell.experiment == experiment]
        for index in range(max(cell.repeats for cell in mine)):
            round_cells = [cell for cell in mine if cell.repeats > index]
            random.Random(f"{seed}:{experiment}:{index}").shuffle(round_cells)
            order += [replace(cell, repeat_index=index) for cell in round_cells]
    return order


def process_label(spec: CellSpec) -> str:
    """How run.json names one process: CELL_ID#INDEX."""
    return f"{spec.cell_id}#{spec.repeat_index}"
