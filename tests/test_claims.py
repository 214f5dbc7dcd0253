"""Claims checked: the claims file, every rule kind, and missing evidence."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tests.judging_fixtures import CPU_ENV, bounded, noisy, tables

from dlbench.core.judging.regime import Regime
from dlbench.core.judging.outcomes import Outcome
from dlbench.report.claims.check import ClaimsFileError, check_claims, load_claims, parse_claims

#: The list the claims file is built from, kept in the project beside it.
CLAIMS_MD = Path(__file__).resolve().parent.parent / "report" / "claims" / "claims_list.md"


def one_claim(rule: dict, claim_id: str = "c") -> list:
    return parse_claims({"claims": [{"id": claim_id, "claim": "A claim.", "source": "test",
                                     "decides": "test", "evidence": [rule]}]})


def verdict_of(claims: list, observations, cells, claim_id: str, device: str = "cpu"):
    found = [v for v in check_claims(observations, cells, claims)
             if v.claim_id == claim_id and v.device == device]
    assert len(found) == 1
    return found[0]


PROJECT = {claim.id: claim for claim in load_claims()}
#: The equivalence rule kind, as accuracy-equal used it before it read the defaults-accuracy
#: answer (tests/test_claims_defaults.py): every framework within 2 points and above 0.90.
EQUAL_RULE = {"kind": "equivalent", "experiment": "training", "metric": "test_accuracy",
              "where": {"precision": ["fp32"]}, "tolerance": 0.02, "min_value": 0.90}
CLAIMS = {**PROJECT, "equal": one_claim(EQUAL_RULE, "equal")[0]}
TRAIN_ORDER = {"kind": "order", "experiment": "training", "metric": "steady_epoch_time",
               "order": ["tensorflow", "pytorch", "keras"]}


def test_the_claims_file_holds_every_claim_of_the_list():
    listed = set(re.findall(r"^\| ([a-z0-9-]+) \|", CLAIMS_MD.read_text(), re.MULTILINE))
    listed.discard("id")
    assert len(listed) >= 12 and listed <= set(PROJECT)
    assert len(PROJECT) >= 12
    assert all(claim.evidence and claim.source and claim.decides for claim in PROJECT.values())


@pytest.mark.parametrize(("rule", "message"), [
    ({"kind": "ranking", "experiment": "training"}, "kind 'ranking' is not one of: order"),
    ({**TRAIN_ORDER, "oder": ["a"]}, "unknown field 'oder'"),
    ({"kind": "order", "experiment": "training", "metric": "m"}, "needs order"),
    ({"kind": "effect", "experiment": "p", "metric": "m", "contest": "precision",
      "baseline": "fp32", "expect": "within"}, "needs ratio_range"),
    ({"kind": "status", "experiment": "p"}, "needs supported_if or contradicted_if"),
    ({**TRAIN_ORDER, "combine": "most"}, "combine 'most' is not one of: all, any"),
])
def test_a_bad_rule_names_its_claim_and_field(rule, message):
    with pytest.raises(ClaimsFileError, match=re.escape(message)) as error:
        one_claim(rule, "my-claim")
    assert "claim my-claim rule 1" in str(error.value)


LISTING = "import torch\n" + "x = 1\n" * 10


def judge(claim_id: str, cells: list[dict], env: dict | None = None,
          listings: dict | None = None):
    """The project's claim `claim_id` judged on synthetic cells of one CPU machine."""
    observations, frame = tables(cells)
    [verdict] = check_claims(observations, frame, [CLAIMS[claim_id]], machines={"r1": "m"},
                             listings=listings or {}, environments={"r1": env or CPU_ENV})
    return verdict


def _timed(metric: str, times: dict[str, float], spread: float = 0.01, **extra) -> list[dict]:
    return [{"system": s, "values": {metric: noisy(t, i, spread=spread)}, **extra}
            for i, (s, t) in enumerate(times.items())]


ORDER = {"tensorflow": 0.6, "pytorch": 1.0, "keras-tensorflow": 1.6}


@pytest.mark.parametrize(("claim", "experiment", "metric", "times", "expected"), [
    ("train-order", "training", "steady_epoch_time", ORDER, SUPPORTED := Outcome.SUPPORTED),
    ("train-order", "training", "steady_epoch_time", {**ORDER, "tensorflow": 1.4},
     Outcome.CONTRADICTED),
    ("train-order", "training", "steady_epoch_time", {"tensorflow": 0.6, "pytorch": 1.0},
     Outcome.INCONCLUSIVE),  # no keras cell
    ("infer-order", "inference", "latency_p50", ORDER, Outcome.SUPPORTED),
    ("infer-order", "inference", "latency_p50", {**ORDER, "pytorch": 2.0},
     Outcome.CONTRADICTED),
])
def test_order_claims_go_each_way(claim, experiment, metric, times, expected):
    cells = _timed(metric, times, experiment=experiment)
    if claim == "infer-order":
        cells = _inference_cells(times, flops=1e9)
    if claim == "train-order":  # its second rule: TensorFlow graph modes against eager
        cells += [{"system": "tensorflow", "experiment": "execution-mode", "mode": m,
                   "values": {"steady_step_time": noisy(t, i), "eager_step_time": noisy(2, i)}}
                  for i, (m, t) in enumerate({"tf.function": 1.0, "xla": 0.9}.items())]
    assert judge(claim, cells, PEAK_ENV).verdict is expected


def _inference_cells(times: dict[str, float], flops: float) -> list[dict]:
    """Inference cells: latency `times` and throughput 1/time, of `flops` per sample."""
    return [{"system": s, "experiment": "inference", "details": {"flops_per_sample": flops},
             "values": {"latency_p50": noisy(t, i), "inference_throughput": noisy(1 / t, i)}}
            for i, (s, t) in enumerate(times.items())]


def test_infer_order_is_judged_on_compute_bound_cells_only():
    """A small model's order (per-call overhead) decides nothing about inference engines;
    the real-size cells beside it decide alone."""
    small = _inference_cells({**ORDER, "pytorch": 0.3}, flops=1e3)  # against the claim
    verdict = judge("infer-order", small, PEAK_ENV)
    assert verdict.verdict is Outcome.NOT_MEASURABLE
    assert "overhead-bound" in verdict.explanation
    real = [{**c, "workload": "resnet50-synthetic"} for c in _inference_cells(ORDER, 1e9)]
    assert judge("infer-order", small + real, PEAK_ENV).verdict is Outcome.SUPPORTED


def test_order_claims_with_noisy_overlapping_data_are_inconclusive():
    cells = _timed("steady_epoch_time", {"tensorflow": 0.95, "pytorch": 1.0,
                                         "keras-tensorflow": 1.05}, spread=0.2)
    assert judge("train-order", cells).verdict is Outcome.INCONCLUSIVE


#: A CPU whose measured peak makes a 1 GFLOP-per-sample cell at 1 sample/s compute-bound.
PEAK_ENV = bounded(2e9)


def _precision(metric: str, values: dict[str, list[float]], system: str = "pytorch",
               model_mib: float | None = 95.0, flops: float = 1e9):
    """Precision cells; a memory cell's model takes `model_mib` of it (None: not recorded);
    `flops` per sample (PEAK_ENV: 1e9 is compute-bound, 1e6 overhead-bound)."""
    def measured(v: list[float]) -> dict:
        if metric == "working_memory" and model_mib is not None:
            return {metric: v, "model_memory": [model_mib] * len(v)}
        if metric != "steady_epoch_time":
            return {metric: v}
        return {metric: v, "inference_throughput": [1 / x for x in v]}

    return [{"system": system, "experiment": "precision", "precision": p,
             "mode": "default" if p == "fp32" else "mixed", "values": measured(v),
             "details": {"flops_per_sample": flops}} for p, v in values.items()]


@pytest.mark.parametrize(("bf16", "expected"), [
    (0.5, Outcome.SUPPORTED), (1.6, Outcome.CONTRADICTED),
    (1.0, Outcome.CONTRADICTED),  # a tight interval around 1: no meaningful effect
])
def test_fp16_speed_goes_each_way_and_fp16_without_units_is_not_measurable(bf16, expected):
    values = {"fp32": noisy(1.0, 1), "bf16": noisy(bf16, 2), "fp16": noisy(0.4, 3)}
    cells = _precision("steady_epoch_time", values)
    assert judge("fp16-speed", cells, PEAK_ENV).verdict is expected
    only_fp16 = _precision("steady_epoch_time", {"fp32": values["fp32"],
                                                 "fp16": values["fp16"]})
    verdict = judge("fp16-speed", only_fp16, {"cpu": {}})
    assert verdict.verdict is Outcome.NOT_MEASURABLE and "no fp16" in verdict.explanation


def test_fp16_speed_in_an_overhead_bound_regime_is_not_measurable_and_says_its_regime():
    values = {"fp32": noisy(1.0, 1), "bf16": noisy(0.5, 2)}  # 2x faster, but at 0.05% of peak
    verdict = judge("fp16-speed", _precision("steady_epoch_time", values, flops=1e6), PEAK_ENV)
    assert verdict.verdict is Outcome.NOT_MEASURABLE
    assert "overhead-bound" in verdict.explanation
    assert Regime.OVERHEAD_BOUND in verdict.regimes
    noisy_cells = _precision("steady_epoch_time", {"fp32": noisy(1.0, 1, spread=0.3),
                                                   "bf16": noisy(0.97, 2, spread=0.3)})
    assert judge("fp16-speed", noisy_cells).verdict is Outcome.INCONCLUSIVE


@pytest.mark.parametrize(("fp16", "expected"), [
    (noisy(0.80, 2, spread=0.002), Outcome.SUPPORTED),
    (noisy(0.95, 2, spread=0.002), Outcome.CONTRADICTED),
    ([0.80] * 5, Outcome.INCONCLUSIVE),  # identical repeats: a deterministic rerun
])
def test_fp16_accuracy_rests_on_repeats_that_differ_in_seed(fp16, expected):
    fp32 = [0.95] * 5 if expected is Outcome.INCONCLUSIVE else noisy(0.95, 1, spread=0.002)
    verdict = judge("fp16-accuracy", _precision("test_accuracy", {"fp32": fp32, "fp16": fp16}))
    assert verdict.verdict is expected


@pytest.mark.parametrize(("metric", "half", "expected"), [
    ("working_memory", 0.5, Outcome.SUPPORTED),
    ("working_memory", 0.95, Outcome.CONTRADICTED),
    ("peak_memory", 0.5, Outcome.NOT_MEASURABLE),
])
def test_fp16_memory_needs_working_memory(metric, half, expected):
    cells = _precision(metric, {"fp32": noisy(100, 1), "fp16": noisy(100 * half, 2)})
    verdict = judge("fp16-memory", cells)
    assert verdict.verdict is expected
    if expected is Outcome.NOT_MEASURABLE:
        assert "working memory" in verdict.explanation


def test_fp16_memory_where_runtime_overhead_dominates_is_not_measurable_with_the_reason():
    # the digits MLP: 0.2 MiB of weights, gradients and momentum in 0.6-33 MiB of working memory
    cells = _precision("working_memory", {"fp32": noisy(33, 1), "fp16": noisy(16, 2)},
                       model_mib=0.2)
    verdict = judge("fp16-memory", cells)
    assert verdict.verdict is Outcome.NOT_MEASURABLE
    assert "under 10x the runtime overhead" in verdict.explanation
    assert "measures the framework, not the model" in verdict.explanation


def test_fp16_memory_without_the_models_own_memory_recorded_is_not_measurable():
    cells = _precision("working_memory", {"fp32": noisy(100, 1), "fp16": noisy(50, 2)},
                       model_mib=None)
    verdict = judge("fp16-memory", cells)
    assert verdict.verdict is Outcome.NOT_MEASURABLE
    assert "model's own memory was not recorded" in verdict.explanation


def test_fp16_memory_with_a_wide_interval_is_inconclusive():
    cells = _precision("working_memory", {"fp32": noisy(100, 1, spread=0.3),
                                          "fp16": noisy(60, 2, spread=0.3)}, model_mib=105)
    assert judge("fp16-memory", cells).verdict is Outcome.INCONCLUSIVE


@pytest.mark.parametrize(("accuracies", "expected"), [
    ({"pytorch": 0.95, "tensorflow": 0.951, "keras-tensorflow": 0.949}, Outcome.SUPPORTED),
    ({"pytorch": 0.95, "tensorflow": 0.80, "keras-tensorflow": 0.949}, Outcome.CONTRADICTED),
])
def test_an_equivalence_rule_goes_each_way(accuracies, expected):
    cells = _timed("test_accuracy", accuracies, spread=0.001)
    assert judge("equal", cells).verdict is expected
    identical = [{"system": s, "values": {"test_accuracy": [a] * 5}}
                 for s, a in accuracies.items()]
    verdict = judge("equal", identical)
    assert verdict.verdict is Outcome.INCONCLUSIVE and "deterministic" in verdict.explanation
    # the same values from processes that each ran a seed of their own are exact
    seeded = [{**cell, "details": {"processes": {"seeds": [0, 1, 2, 3, 4]}}}
              for cell in identical]
    assert judge("equal", seeded).verdict is expected


@pytest.mark.parametrize(("statuses", "fp16_claim", "keras_claim"), [
    (["ok", "unsupported"], Outcome.SUPPORTED, Outcome.CONTRADICTED),
    (["ok", "ok"], Outcome.INCONCLUSIVE, Outcome.CONTRADICTED),
    (["unsupported", "failed"], Outcome.SUPPORTED, Outcome.SUPPORTED),
])
def test_status_claims_follow_the_cells(statuses, fp16_claim, keras_claim):
    for claim, system, expected in (("fp16-coverage", "tensorflow", fp16_claim),
                                    ("keras-fp16", "keras-tensorflow", keras_claim)):
        cells = [{"system": system, "experiment": "precision", "precision": "fp16",
                  "workload": w, "status": s, "values": {}}
                 for w, s in zip(("mlp-digits", "cnn-digits"), statuses, strict=True)]
        assert judge(claim, cells).verdict is expected, claim


def _graph(eager: float, graph: float, flops: float | None) -> list[dict]:
    """A graph-mode cell with its eager baseline measured in the same process, and an
    unpaired eager cell far slower (which a paired comparison must not use)."""
    details = {"flops_per_sample": flops} if flops else {}
    return [{"system": "tensorflow", "experiment": "execution-mode", "mode": "tf.function",
             "details": details, "values": {"steady_step_time": noisy(graph, 1),
                                            "eager_step_time": noisy(eager, 2)}},
            {"system": "tensorflow", "experiment": "execution-mode", "mode": "eager",
             "details": details, "values": {"steady_step_time": noisy(eager * 3, 3)}}]


@pytest.mark.parametrize(("graph", "flops", "expected"), [
    (5.0, 1e8, Outcome.SUPPORTED), (15.0, 1e8, Outcome.CONTRADICTED),
    (5.0, 1e3, Outcome.NOT_MEASURABLE), (5.0, None, Outcome.INCONCLUSIVE),
])
def test_static_graph_claim_decides_on_compute_bound_workloads_only(graph, flops, expected):
    env = bounded(1e11)
    # batch 32, 10 ms per step: 3200 samples/s; x3 x 1e8 FLOPs = 9.6e11: compute-bound
    verdict = judge("static-graph-fast", _graph(10.0, graph, flops), env)
    assert verdict.verdict is expected
    if expected is Outcome.NOT_MEASURABLE:
        assert "overhead-bound" in verdict.explanation


def _dp(device: str) -> list[dict]:
    return [{"system": s, "experiment": "data-parallel", "workers": 2, "device": device,
             "values": {"scaling_efficiency": noisy(e, i)}}
            for i, (s, e) in enumerate({"tensorflow": 0.9, "pytorch": 0.5}.items())]


def test_data_parallel_claim_needs_two_real_devices():
    verdict = judge("dp-tf-scales", _dp("cpu"))  # a CPU record without its cores
    assert verdict.verdict is Outcome.NOT_MEASURABLE and "2 real devices" in \
        verdict.explanation
    one_core = {"cpu": {"usable_cores": 1, "physical_cores": 1}, "gpus": []}
    assert judge("dp-tf-scales", _dp("cpu"), one_core).verdict is Outcome.NOT_MEASURABLE
    # a physical core per worker: the 2 workers are 2 devices (issue 62)
    two_cores = {"cpu": {"usable_cores": 2, "physical_cores": 2}, "gpus": []}
    assert judge("dp-tf-scales", _dp("cpu"), two_cores).verdict is Outcome.SUPPORTED
    two = {"gpus": [{}, {}]}
    assert judge("dp-tf-scales", _dp("cuda"), two).verdict is Outcome.SUPPORTED
    flipped = [{**c, "values": {"scaling_efficiency": noisy(1.4 - e, i)}}
               for i, (c, e) in enumerate(zip(_dp("cuda"), (0.9, 0.5), strict=True))]
    assert judge("dp-tf-scales", flipped, two).verdict is Outcome.CONTRADICTED


def _exports(tf: list[str], pt: list[str]) -> list[dict]:
    cells = []
    for system, statuses in (("tensorflow", tf), ("pytorch", pt)):
        for i, status in enumerate(statuses):
            reason = ("fails: export needs the openvino package, which is not installed"
                      if status == "missing" else "")
            cells.append({"system": system, "experiment": "export", "export_format": f"f{i}",
                          "status": "failed" if status == "missing" else status,
                          "reason": reason, "values": {}})
    return cells


@pytest.mark.parametrize(("tf", "pt"), [
    (["ok", "ok", "ok", "ok"], ["ok", "ok", "failed"]),
    (["ok", "ok", "failed"], ["ok", "ok", "ok"]),
    (["ok", "ok", "ok"], ["ok", "ok", "missing"]),
])
def test_deploy_claim_describes_the_paths_tried_and_judges_no_count(tf, pt):
    verdict = judge("deploy-tf-wins", _exports(tf, pt))
    assert verdict.verdict is Outcome.NOT_MEASURABLE  # whatever the counts
    assert verdict.explanation.startswith("described, not judged")
    assert "tensorflow: f0 works" in verdict.explanation
    if "missing" in pt:
        assert "f2 skipped (not installed: openvino)" in verdict.explanation
    if "failed" in pt:
        assert "f2 failed" in verdict.explanation
    assert "documented, not tried here: torchscript, torch.export, onnx-dynamo, executorch" \
        in verdict.explanation  # the synthetic cells' formats are f0, f1, ...


def test_deploy_claim_describes_each_working_paths_parity_and_latency():
    cells = _exports(["ok"], ["ok"])
    cells[0]["values"] = {"artifact_max_abs_diff": [1e-6] * 3, "artifact_latency": [0.25] * 3}
    verdict = judge("deploy-tf-wins", cells)
    assert "tensorflow: f0 works (max abs diff 1e-06, latency 0.25 ms)" in verdict.explanation
    assert "pytorch: f0 works" in verdict.explanation


@pytest.mark.parametrize("sizes", [
    {"pytorch": 10, "tensorflow": 20, "keras": 15}, {"pytorch": 10, "tensorflow": 20, "keras": 8}])
def test_concise_claim_describes_the_listings_line_counts_and_judges_none(sizes):
    listings = {f"listings/{f}.py": '"""doc"""\n' + "x = 1\n# comment\n" * n
                for f, n in sizes.items()}
    cells = _timed("steady_epoch_time", {"pytorch": 1.0})
    verdict = judge("pytorch-concise", cells, listings=listings)
    assert verdict.verdict is Outcome.NOT_MEASURABLE
    assert verdict.explanation.startswith("described, not judged")
    assert "pytorch: 10 lines (listings/pytorch.py)" in verdict.explanation
    assert f"keras: {sizes['keras']} lines (listings/keras.py)" in verdict.explanation


def test_concise_claim_says_which_listing_is_missing():
    listings = {"listings/pytorch.py": "x = 1\n"}
    verdict = judge("pytorch-concise", _timed("steady_epoch_time", {"pytorch": 1.0}),
                    listings=listings)
    assert "tensorflow: no listing" in verdict.explanation


def test_the_project_listings_are_described_for_the_concise_claim():
    verdict = check_claims(*tables(_timed("steady_epoch_time", {"pytorch": 1.0})),
                           [PROJECT["pytorch-concise"]])[0]
    assert verdict.verdict is Outcome.NOT_MEASURABLE
    assert "listings/keras.py" in verdict.explanation


def test_keras_on_jax_default_cell_answers_for_its_jit_compile_in_a_mode_effect():
    """static-graph-fast names jit_compile; on JAX the default cell is that configuration."""
    cells = [{"system": "keras-jax", "experiment": "execution-mode", "mode": "default",
              "values": {"steady_step_time": noisy(1.0, 1), "eager_step_time": noisy(3.0, 2)},
              "details": {"flops_per_sample": 1e9}},
             {"system": "keras-torch", "experiment": "execution-mode", "mode": "default",
              "values": {"steady_step_time": noisy(1.0, 3), "eager_step_time": noisy(1.0, 4)},
              "details": {"flops_per_sample": 1e9}}]
    verdict = judge("static-graph-fast", cells, PEAK_ENV)
    assert verdict.evidence == ("execution-mode:mlp-digits:keras-jax:fp32-default:cpu",)
    assert "jit_compile/eager" in verdict.explanation
    assert not any("keras-torch" in cell for cell in verdict.evidence)  # its default is eager


def _serving(experiment: str, rates: dict[tuple[str, str], float], **extra) -> list[dict]:
    """Real-size ResNet-50 cells of (system, mode or export format) serving `rates`
    samples/s at batch 8 (1e9 FLOPs a sample: compute-bound on PEAK_ENV)."""
    metric = "inference_throughput" if experiment == "inference" else "artifact_throughput"
    column = "mode" if experiment == "inference" else "export_format"
    return [{"system": s, "experiment": experiment, column: m, "batch_size": 8,
             "workload": "resnet50-synthetic", "details": {"flops_per_sample": 1e9},
             "values": {metric: noisy(rate, i)}, **extra}
            for i, ((s, m), rate) in enumerate(rates.items())]


@pytest.mark.parametrize(("compiled", "expected"), [
    (1.8, Outcome.SUPPORTED), (0.5, Outcome.CONTRADICTED)])
def test_static_graph_claim_is_judged_on_real_size_production_inference(compiled, expected):
    small = _graph(10.0, 5.0, 1e3)  # a small model's execution-mode cell: overhead-bound
    cells = small + _serving("inference", {("pytorch", "inference_mode"): 1.0,
                                           ("pytorch", "compiled"): compiled})
    verdict = judge("static-graph-fast", cells, PEAK_ENV)
    assert verdict.verdict is expected, verdict.explanation
    assert judge("static-graph-fast", small, PEAK_ENV).verdict is Outcome.NOT_MEASURABLE


@pytest.mark.parametrize(("tensorflow", "expected"), [
    (1.5, Outcome.SUPPORTED), (0.6, Outcome.CONTRADICTED)])
def test_deploy_claim_is_judged_on_the_real_size_runtimes(tensorflow, expected):
    cells = _serving("export", {("tensorflow", "savedmodel"): tensorflow,
                                ("pytorch", "onnx-dynamo"): 1.0,
                                ("pytorch", "onnx-openvino"): 0.9})
    verdict = judge("deploy-tf-wins", cells, PEAK_ENV)
    assert verdict.verdict is expected, verdict.explanation
    small = [{**c, "workload": "cnn-digits"} for c in cells]
    assert judge("deploy-tf-wins", small, PEAK_ENV).verdict is Outcome.NOT_MEASURABLE
