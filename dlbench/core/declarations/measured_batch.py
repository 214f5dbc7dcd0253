"""The batch each value was measured at, from its cell's recorded parameters: the one owner.

A cell names one batch size, but an inference cell times latency one sample per call and
throughput at its serving batch (`throughput_batch` in its parameters), a precision cell
trains at its batch and serves as an inference cell does, and an export cell times its
artifact's latency one sample per call. The runner files each observation under the batch
this module gives, and every page labels a value with it, so a label never names a batch the
value was not measured at (older releases filed every observation under the cell's batch).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

#: Metrics timed one sample per call, whatever the cell's batch.
ONE_SAMPLE = frozenset({"inference_latency", "latency_p50", "latency_p90", "latency_p99",
                        "artifact_latency", "first_call_time"})
#: Metrics measured at the cell's serving batch (its `throughput_batch` parameter).
SERVING_BATCH = frozenset({"inference_throughput"})
#: Experiments whose memory spans both phases: the batch-1 calls and the serving batch.
BOTH_PHASES = {"inference": frozenset({"working_memory", "compile_memory"})}
#: The serving batch an inference plan uses when its parameters name none.
DEFAULT_SERVING_BATCH = 512
#: Experiments that serve a model (latency one sample per call, throughput at a batch).
SERVING_EXPERIMENTS = ("inference", "precision")


def params_of(config_json: object) -> dict:
    """A cell's recorded parameters ({} where its record holds none)."""
    if isinstance(config_json, Mapping):
        return dict(config_json.get("params") or {})
    try:
        record = json.loads(str(config_json or "{}"))
    except ValueError:
        return {}
    return dict(record.get("params") or {}) if isinstance(record, dict) else {}


def serving_batch(params: Mapping) -> int:
    """The batch a cell's throughput was measured at."""
    return int(params.get("throughput_batch", DEFAULT_SERVING_BATCH))


def measured_batch(metric: str, batch_size: int, params: Mapping,
                   experiment: str = "") -> int:
    """The batch `metric` of a cell of `batch_size` with `params` was measured at."""
    if metric in ONE_SAMPLE:
        return 1
    if metric in SERVING_BATCH and (experiment in SERVING_EXPERIMENTS
                                    or "throughput_batch" in params):
        return serving_batch(params)
    return int(batch_size)


def batch_words(metric: str, batch_size: int, params: Mapping, experiment: str = "") -> str:
    """The batch of a value in words: 'batch 8', or 'batches 1 and 8' for an inference
    cell's memory, which spans the batch-1 calls and the serving batch."""
    if metric in BOTH_PHASES.get(experiment, ()):
        batches = sorted({1, int(batch_size), serving_batch(params)})
        if len(batches) > 1:
            return "batches " + ", ".join(map(str, batches[:-1])) + f" and {batches[-1]}"
    return f"batch {measured_batch(metric, batch_size, params, experiment)}"


def cell_batch_words(experiment: str, batch_size: int, params: Mapping) -> str:
    """The batches a whole cell measured at, in words: 'batch 32', or for a serving cell
    'latency at batch 1, throughput at batch 8' (a precision cell's training batch first)."""
    batch = int(batch_size)
    if experiment in SERVING_EXPERIMENTS:
        serving = serving_batch(params)
        parts = [] if experiment == "inference" else [f"training at batch {batch}"]
        return ", ".join(parts + ["latency at batch 1", f"throughput at batch {serving}"])
    if experiment == "export" and batch != 1:
        return f"latency at batch 1, throughput at batch {batch}"
    return f"batch {batch}"
