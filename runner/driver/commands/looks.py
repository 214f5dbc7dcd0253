"""The looks of a run's design (dlbench/core/judging/sequential.py): after each look but the last,
the cells of pairs still undecided get the next look's processes, measured in interleaved rounds
like the first. run.json records each look (its processes per cell and the cells topped up),
so `--resume` goes on where the run stopped."""

from __future__ import annotations

from dataclasses import replace

from dlbench.core.storage.layout import read_environment
from dlbench.core.judging.sequential import Design
from dlbench.core.judging.verdict_engine import QUESTIONS, Question, undecided_cells
from dlbench.runner.driver.plan.repeats import SINGLE_PROCESS_EXPERIMENTS
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.driver.store.run_store import RunStore
from dlbench.runner.driver.store.run_frames import cells_frame, observations_frame, processes_frame


def recorded_looks(info: dict) -> list[dict]:
    """The looks run.json records as decided: [{"look": 2, "processes": 6, "cells": [...]}]."""
    return list(info.get("looks") or [])


def with_recorded_looks(cells: list[CellSpec], info: dict) -> list[CellSpec]:
    """The cells with the processes the recorded looks gave them."""
    processes: dict[str, int] = {}
    for look in recorded_looks(info):
        processes |= {cell_id: look["processes"] for cell_id in look["cells"]}
    return [replace(cell, repeats=max(cell.repeats, processes.get(cell.cell_id, 0)))
            for cell in cells]


def next_look(info: dict) -> int:
    """The index (0-based) of the next look to decide: 1 after the first look's processes."""
    return 1 + len(recorded_looks(info))


def cells_to_top_up(store: RunStore, cells: list[CellSpec], design: Design,
                    look: int, questions: tuple[Question, ...] = QUESTIONS) -> list[CellSpec]:
    """The cells the design's look `look` (0-based, >= 1) gives more processes: those of
    `questions`' pairs still undecided on what the store holds now (none the device cannot
    decide, by the run's environment record: a look buys no processes for those)."""
    records = store.load_records()
    if not records:
        return []
    run_id = store.run_id
    open_cells = undecided_cells(observations_frame(records, run_id),
                                 cells_frame(records, run_id),
                                 processes_frame(records, run_id), design, questions,
                                 {run_id: read_environment(store.root)})
    processes = design.looks[look]
    return [replace(cell, repeats=processes) for cell in cells
            if cell.cell_id in open_cells and cell.repeats < processes
            and cell.experiment not in SINGLE_PROCESS_EXPERIMENTS]


def look_record(look: int, design: Design, topped: list[CellSpec], decided_at: str) -> dict:
    """run.json's entry for a look: its processes per cell and the cells topped up."""
    return {"look": look + 1, "processes": design.looks[look], "alpha": design.alphas[look],
            "cells": [cell.cell_id for cell in topped], "decided_at": decided_at}


def most_processes_added(cells: list[CellSpec], design: Design) -> list[CellSpec]:
    """Every process the later looks could add if every pair stayed undecided (the bound the
    runner states before it starts)."""
    return [replace(cell, repeat_index=index, repeats=design.last) for cell in cells
            if cell.experiment not in SINGLE_PROCESS_EXPERIMENTS
            for index in range(cell.repeats, design.last)]
