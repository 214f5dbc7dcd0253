"""The harness every experiment runs in: the cell's opening (adapter, configuration,
declarative skip, data, memory baseline), its one repeat, and its closing (the observations
labelled with this process's repeat index, the import footprint, the sampling record).

An experiment's <framework>.py starts with `cell = open_cell(spec)` and ends with
`cell.outcome(...)`; nothing else about the process is its business.
"""

from __future__ import annotations

from dataclasses import dataclass

from dlbench.core.storage.schema import CellStatus
from dlbench.runner.worker.adapters import Adapter, adapter_for
from dlbench.runner.worker.harness.data import CellData, cell_data
from dlbench.runner.worker.harness.sampling import Sampler
from dlbench.runner.worker.measure import process_memory_kib
from dlbench.runner.cell.outcome import CellOutcome, Fairness, Observation
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.workloads.catalog import CONVOLUTIONAL_MODELS, flops_per_sample


#: Arrays of the parameters' size a training step holds: weights, gradients, momentum.
TRAINING_STATES = 3


class CellSkipped(Exception):
    """The cell cannot run here; the message says why (the worker records it as skipped)."""


@dataclass
class Cell:
    """One process's cell: its adapter, settings, data and sampler."""

    spec: CellSpec
    adapter: Adapter
    settings: dict[str, str]
    data: CellData
    sampler: Sampler
    footprint_mib: float  # resident memory after imports, data and first use

    def observe(self, metric: str, value: float, step: int | None = None) -> Observation:
        """An observation of this process's repeat."""
        return Observation(metric, float(value), self.spec.repeat_index, step)

    def outcome(self, observations: list[Observation], fairness: Fairness,
                details: dict | None = None, status: CellStatus = CellStatus.OK,
                reason: str = "") -> CellOutcome:
        """The cell's outcome with the import footprint (and, beside a working memory, the
        user memory: both together), the sampling record and the process's seed (none for a
        reader's own model, which brings its weights) added."""
        extra = [self.observe("import_footprint", self.footprint_mib)]
        extra += [self.observe("user_memory", self.footprint_mib + o.value)
                  for o in observations if o.metric == "working_memory" and o.step is None]
        return CellOutcome(status, [*observations, *extra], fairness, reason=reason,
                           details=(details or {}) | self.sampler.details()
                           | ({"seed": self.data.seed} if self.data.seed is not None else {}))

    def fairness(self, **words: str) -> Fairness:
        """This cell's manifest from its protocol's `words` (those of `cell_manifest`)."""
        return cell_manifest(self.spec, self.settings, **words)

    def model_memory(self) -> Observation:
        """The model's own training state in fp32 (weights, gradients and SGD momentum): a
        lower bound of its parameter and activation memory, activations not counted."""
        return self.observe("model_memory", TRAINING_STATES * 4 * self.data.parameters()
                            / 2**20)

    def workload_details(self) -> dict:
        """What the report needs of the cell's workload: its forward FLOPs per sample at the
        size it runs on this device (the regime of the cell's verdicts rests on it), the
        classes it predicts (chance is 1/classes) and the accuracy its training must reach,
        as they were when it was measured; `convolutions` says its FLOPs count 3x3
        convolutions as direct ones (a Winograd kernel does fewer multiply-adds)."""
        return {"flops_per_sample": flops_per_sample(self.spec.workload, self.spec.device,
                                                     self.data.profile),
                "convolutions": self.data.workload.model in CONVOLUTIONAL_MODELS,
                "classes": self.data.dataset.classes,
                "target_accuracy": self.data.workload.target_accuracy}


def cell_manifest(spec: CellSpec, settings: dict[str, str], *, timer_includes: str,
                  precision_policy: str, compile_mode: str, data_pipeline: str,
                  notes: str) -> Fairness:
    """A cell's fairness manifest: the words of its protocol, and the threads, batch size and
    framework settings that every cell records alike."""
    return Fairness(timer_includes, precision_policy, compile_mode, data_pipeline,
                    threads=spec.threads, batch_size=spec.batch_size, notes=notes,
                    settings=settings)


def configured_adapter(spec: CellSpec) -> tuple[Adapter, dict[str, str]]:
    """The cell's framework adapter, configured, and its settings; CellSkipped when the
    framework cannot run the cell here."""
    adapter = adapter_for(spec)
    settings = adapter.configure()
    reason = adapter.skip_reason()
    if reason:
        raise CellSkipped(reason)
    return adapter, settings


def open_cell(spec: CellSpec) -> Cell:
    """Configure the framework, skip when it cannot run the cell (CellSkipped), load the
    data, and pay the framework's first use before the memory baseline is read."""
    adapter, settings = configured_adapter(spec)
    data = cell_data(spec)
    adapter.warm_up()
    footprint = process_memory_kib()["VmRSS"] / 1024
    return Cell(spec, adapter, settings, data, Sampler(spec), footprint)
