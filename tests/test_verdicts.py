"""Home-page verdicts: every question rule reaches each of its outcomes on synthetic data."""

from __future__ import annotations

from dataclasses import replace

import pytest
from tests.judging_fixtures import CPU_ENV, bounded, noisy, tables

from dlbench.core.judging.regime import Regime
from dlbench.core.judging.verdict_engine import QUESTIONS
from dlbench.core.judging.outcomes import Outcome
from dlbench.report.verdicts.answers import answer

Q = {q.key: q for q in QUESTIONS}
#: The accuracy question judged as a verdict (as it was before it became a parity answer),
#: for the rules that still judge accuracy pairs: the claims' and any question on accuracy
#: that is not from the same start.
Q["accuracy-verdict"] = replace(Q["accuracy"], parity=False)


def one(key: str, cells: list[dict], env: dict | None = None):
    [verdict] = answer(Q[key], *tables(cells), environments={"r1": env or CPU_ENV})
    return verdict


def speed(times: dict[str, float], **extra) -> list[dict]:
    return [{"system": s, "values": {"steady_epoch_time": noisy(t, i)}, **extra}
            for i, (s, t) in enumerate(times.items())]


def test_winner_beats_every_other_candidate():
    verdict = one("training-speed", speed({"pytorch": 1.0, "tensorflow": 1.3,
                                           "keras-tensorflow": 1.6}))
    assert verdict.outcome is Outcome.WINNER and verdict.winner == "pytorch"
    assert {p.other for p in verdict.pairings} == {"tensorflow", "keras-tensorflow"}
    assert min(p.advantage for p in verdict.pairings) == pytest.approx(1.3, rel=0.05)


def test_changing_the_data_flips_the_winner():
    verdict = one("training-speed", speed({"pytorch": 1.0, "tensorflow": 0.7,
                                           "keras-tensorflow": 1.6}))
    assert verdict.winner == "tensorflow"


def test_a_runner_up_within_the_threshold_shares_the_lead():
    verdict = one("training-speed", speed({"pytorch": 1.0, "tensorflow": 1.02,
                                           "keras-tensorflow": 1.6}))
    assert verdict.outcome is Outcome.NO_MEANINGFUL_DIFFERENCE and verdict.winner is None
    assert set(verdict.leaders) == {"pytorch", "tensorflow"}


def test_a_large_gap_three_processes_cannot_confirm_is_inconclusive_not_a_tie():
    cells = [{"system": "pytorch", "values": {"steady_epoch_time": noisy(1.0, 1, n=3, spread=0.3)}},
             {"system": "tensorflow",
              "values": {"steady_epoch_time": noisy(1.3, 2, n=3, spread=0.3)}}]
    verdict = one("training-speed", cells)
    assert verdict.outcome is Outcome.INCONCLUSIVE and verdict.winner is None
    assert verdict.reason.startswith("PyTorch against TensorFlow: interval")
    assert "reaches across the 5% threshold" in verdict.reason
    assert "processes cannot tell" in verdict.reason


def test_identical_accuracy_repeats_are_inconclusive():
    cells = [{"system": "pytorch", "values": {"test_accuracy": [0.95] * 5}},
             {"system": "tensorflow", "values": {"test_accuracy": [0.93] * 5}}]
    verdict = one("accuracy-verdict", cells)
    assert verdict.outcome is Outcome.INCONCLUSIVE
    assert "deterministic rerun" in verdict.reason


OWN_SEEDS = {"processes": {"seeds": [7, 8, 9, 10, 11]}}


@pytest.mark.parametrize(("accuracies", "outcome", "winner"), [
    ({"pytorch": 0.99, "tensorflow": 0.99}, Outcome.NO_MEANINGFUL_DIFFERENCE, None),
    ({"pytorch": 0.95, "tensorflow": 0.93}, Outcome.NO_MEANINGFUL_DIFFERENCE, None),
    ({"pytorch": 0.95, "tensorflow": 0.80}, Outcome.WINNER, "pytorch"),
])
def test_identical_accuracy_on_five_different_seeds_is_exact(accuracies, outcome, winner):
    # each process ran a seed of its own: the seed does not move the value, so the per-seed
    # differences are all the same and the ratio is exact
    cells = [{"system": s, "values": {"test_accuracy": [a] * 5}, "details": OWN_SEEDS}
             for s, a in accuracies.items()]
    verdict = one("accuracy-verdict", cells)
    assert verdict.outcome is outcome and verdict.winner == winner
    assert "deterministic rerun" not in verdict.reason


@pytest.mark.parametrize("details", [OWN_SEEDS, {}])
def test_accuracy_at_the_ceiling_on_every_process_says_the_task_cannot_tell_them_apart(details):
    cells = [{"system": s, "values": {"test_accuracy": [1.0] * 5}, "details": details}
             for s in ("pytorch", "tensorflow")]
    verdict = one("accuracy-verdict", cells)
    assert verdict.outcome is Outcome.INCONCLUSIVE and verdict.winner is None
    assert "the task cannot tell them apart" in verdict.reason
    assert "no meaningful difference" not in verdict.reason
    assert "deterministic rerun" not in verdict.reason


@pytest.mark.parametrize(("second", "largest", "ceiling"), [
    ([0.95, 0.93, 0.96, 0.94, 0.95], "0 (process 0", False),
    ([0.95, 0.90, 0.96, 0.94, 0.95], "0.03 (process 1", False),
    ([1.0] * 5, "0 (process 0", True),
])
def test_accuracy_from_the_same_start_is_a_parity_answer_never_a_verdict(second, largest,
                                                                         ceiling):
    first = [0.95, 0.93, 0.96, 0.94, 0.95] if not ceiling else [1.0] * 5
    cells = [{"system": s, "values": {"test_accuracy": v}, "details": OWN_SEEDS}
             for s, v in (("pytorch", first), ("tensorflow", second))]
    verdict = one("accuracy", cells)
    assert verdict.outcome is Outcome.PARITY and verdict.winner is None
    assert not verdict.tested  # not counted among the tested answers
    assert f"the largest difference across systems is {largest}" in verdict.reason
    assert "a parity result, not a verdict" in verdict.reason
    assert ("the task cannot tell them apart" in verdict.reason) is ceiling


def test_a_parity_answer_buys_no_processes_at_a_look():
    from dlbench.core.judging.sequential import three_looks
    from dlbench.core.judging.verdict_engine import undecided_cells

    cells = [{"system": s, "values": {"test_accuracy": noisy(0.95, i, n=3, spread=0.05)},
              "details": OWN_SEEDS} for i, s in enumerate(("pytorch", "tensorflow"))]
    observations, cell_table = tables(cells)
    design = three_looks(3, 6, 12)
    assert undecided_cells(observations, cell_table, None, design, (Q["accuracy"],)) == set()
    assert undecided_cells(observations, cell_table, None, design,
                           (Q["accuracy-verdict"],))


def test_identical_accuracy_against_one_that_varies_by_seed_is_tested_paired():
    cells = [{"system": "pytorch", "values": {"test_accuracy": [1.0] * 5},
              "details": OWN_SEEDS},
             {"system": "tensorflow", "values": {"test_accuracy": [1.0, 0.99, 1.0, 0.6, 1.0]},
              "details": OWN_SEEDS}]
    verdict = one("accuracy-verdict", cells)
    assert verdict.outcome is Outcome.INCONCLUSIVE  # one seed's 0.6: five cannot tell
    assert "deterministic rerun" not in verdict.reason
    assert "processes cannot tell" in verdict.reason


def test_accuracy_over_seeds_names_a_winner():
    cells = [{"system": "pytorch", "values": {"test_accuracy": noisy(0.95, 1, spread=0.002)}},
             {"system": "tensorflow", "values": {"test_accuracy": noisy(0.80, 2, spread=0.002)}}]
    assert one("accuracy-verdict", cells).winner == "pytorch"


def test_memory_from_the_process_peak_is_not_measurable_and_working_memory_is():
    peak = [{"system": s, "values": {"peak_memory": noisy(m, i)}}
            for i, (s, m) in enumerate({"pytorch": 500, "tensorflow": 900}.items())]
    verdict = one("peak-memory", peak)
    assert verdict.outcome is Outcome.NOT_MEASURABLE
    assert "working memory" in verdict.reason
    working = [{"system": s, "values": {"working_memory": noisy(m, i)}}
               for i, (s, m) in enumerate({"pytorch": 50, "tensorflow": 90}.items())]
    assert one("peak-memory", working).winner == "pytorch"


def _precision_memory(fp32: float, bf16: float, model_mib: float | None) -> list[dict]:
    """An fp32 and a bf16 cell; the bf16 model takes half the fp32 model's `model_mib`."""
    def measured(mib: float, model: float | None, seed: int) -> dict:
        values = {"working_memory": noisy(mib, seed)}
        return values | ({"model_memory": [model] * 8} if model is not None else {})

    halved = None if model_mib is None else model_mib / 2
    return [{"system": "pytorch", "experiment": "precision", "precision": p,
             "mode": "default" if p == "fp32" else "mixed", "values": measured(mib, model, i)}
            for i, (p, mib, model) in enumerate([("fp32", fp32, model_mib),
                                                 ("bf16", bf16, halved)])]


@pytest.mark.parametrize(("fp32", "bf16", "model_mib", "outcome", "words"), [
    # the digits MLP: 0.2 MiB of its own in tens of MiB of working memory
    (33.0, 16.0, 0.2, Outcome.NOT_MEASURABLE, "measures the framework, not the model"),
    (100.0, 50.0, None, Outcome.NOT_MEASURABLE, "model's own memory was not recorded"),
    # ResNet-50's 300 MiB of weights, gradients and momentum (150 in bf16) dominate its
    # working memory
    (310.0, 160.0, 300.0, Outcome.WINNER, ""),
])
def test_precision_memory_is_decided_only_where_the_model_dominates_its_working_memory(
        fp32, bf16, model_mib, outcome, words):
    verdict = one("precision-memory", _precision_memory(fp32, bf16, model_mib))
    assert verdict.outcome is outcome
    assert words in verdict.reason
    if outcome is Outcome.WINNER:
        assert verdict.winner == "bf16"


TWO_CORES = {"cpu": {"usable_cores": 2, "physical_cores": 2, "logical_cores": 2}, "gpus": []}


@pytest.mark.parametrize(("environment", "measurable", "words"), [
    (TWO_CORES, True, ""),
    ({"cpu": {"usable_cores": 1, "physical_cores": 1}, "gpus": []}, False, "1 physical core"),
    # two logical cores that are one core's SMT siblings share its units: not two devices
    ({"cpu": {"usable_cores": 2, "physical_cores": 1, "logical_cores": 2}, "gpus": []}, False,
     "2 workers would share one"),
    (CPU_ENV, False, "0 physical cores"),  # a record without core counts decides nothing
])
def test_data_parallelism_on_a_cpu_is_measurable_with_a_physical_core_per_worker(
        environment, measurable, words):
    cells = [{"system": s, "experiment": "data-parallel", "workers": 2, "mode": m,
              "values": {"scaling_efficiency": noisy(e, i)}}
             for i, (s, m, e) in enumerate([("pytorch", "ddp", 0.9),
                                            ("tensorflow", "mirrored", 0.5)])]
    verdict = one("scaling-efficiency", cells, environment)
    if measurable:
        assert verdict.winner == "pytorch"
    else:
        assert verdict.outcome is Outcome.NOT_MEASURABLE
        assert "2 real devices" in verdict.reason and words in verdict.reason


def test_data_parallelism_on_one_gpu_is_not_measurable_and_on_two_gpus_is():
    cells = [{"system": s, "experiment": "data-parallel", "workers": 2, "device": "cuda",
              "values": {"scaling_efficiency": noisy(e, i)}}
             for i, (s, e) in enumerate({"pytorch": 0.9, "tensorflow": 0.5}.items())]
    assert one("scaling-efficiency", cells, {"gpus": [{}]}).outcome is \
        Outcome.NOT_MEASURABLE
    assert one("scaling-efficiency", cells, {"gpus": [{}, {}]}).winner == "pytorch"


def _one_or_two_workers(metric: str, one_worker: float, two_workers: float) -> list[dict]:
    """PyTorch's DDP cells at 1 worker (2 threads) and 2 workers (1 thread each)."""
    return [{"system": "pytorch", "experiment": "data-parallel", "mode": "ddp",
             "workers": workers, "values": {metric: noisy(value, workers)}}
            for workers, value in ((1, one_worker), (2, two_workers))]


@pytest.mark.parametrize(("key", "metric", "one_worker", "two_workers", "outcome", "winner"), [
    ("data-parallel-throughput", "train_throughput", 1000.0, 1600.0, Outcome.WINNER,
     "2"),
    ("data-parallel-throughput", "train_throughput", 1000.0, 600.0, Outcome.WINNER, "1"),
    ("data-parallel-throughput", "train_throughput", 1000.0, 1010.0,
     Outcome.NO_MEANINGFUL_DIFFERENCE, None),
    ("data-parallel-time-to-accuracy", "time_to_accuracy", 10.0, 6.0, Outcome.WINNER,
     "2"),
    ("data-parallel-time-to-accuracy", "time_to_accuracy", 10.0, 16.0, Outcome.WINNER,
     "1"),
    ("data-parallel-time-to-accuracy", "time_to_accuracy", 10.0, 10.1,
     Outcome.NO_MEANINGFUL_DIFFERENCE, None),
])
def test_data_parallel_or_one_worker_is_judged_within_each_framework(
        key, metric, one_worker, two_workers, outcome, winner):
    verdict = one(key, _one_or_two_workers(metric, one_worker, two_workers), TWO_CORES)
    assert verdict.outcome is outcome and verdict.winner == winner


def test_data_parallel_or_one_worker_is_not_measurable_where_workers_share_a_core():
    cells = _one_or_two_workers("train_throughput", 1000.0, 600.0)
    verdict = one("data-parallel-throughput", cells,
                  {"cpu": {"usable_cores": 1, "physical_cores": 1}, "gpus": []})
    assert verdict.outcome is Outcome.NOT_MEASURABLE


def test_a_worker_count_reads_as_words():
    from dlbench.report.render.labels import contender_label

    assert contender_label("workers", "2") == "2 workers"
    assert contender_label("workers", "1") == "1 worker"


def test_fp16_on_a_cpu_without_fp16_units_is_left_out_and_said():
    cells = [{"system": "pytorch", "experiment": "precision", "precision": p,
              "values": {"steady_epoch_time": noisy(t, i)}}
             for i, (p, t) in enumerate({"fp32": 1.0, "fp16": 3.0}.items())]
    verdict = one("precision-fp16-speedup", cells)
    assert verdict.outcome is Outcome.NOT_MEASURABLE and "no fp16" in verdict.reason
    with_units = one("precision-fp16-speedup", cells, {"cpu": {"avx512_fp16": True}})
    assert with_units.winner == "fp32"


def test_bf16_and_fp16_are_each_judged_against_fp32_not_against_each_other():
    # a machine with both units measures three precisions: fp16 fastest must not answer
    # the bf16 question, and bf16 faster than fp32 is bf16's answer even beside fp16
    cells = [{"system": "pytorch", "experiment": "precision", "precision": p,
              "values": {"steady_epoch_time": noisy(t, i)}}
             for i, (p, t) in enumerate({"fp32": 2.0, "bf16": 1.0, "fp16": 0.5}.items())]
    units = {"cpu": {"avx512_fp16": True, "avx512_bf16": True}}
    assert one("precision-speedup", cells, units).winner == "bf16"
    assert one("precision-fp16-speedup", cells, units).winner == "fp16"


PEAK_ENV = bounded(1e11)


def flops_cells() -> list[dict]:
    """Two frameworks at 1e4 samples/s of a 1e4-FLOP model: 3e8 FLOP/s when training."""
    return [{"system": s, "details": {"flops_per_sample": 1e4},
             "values": {"steady_epoch_time": noisy(t, i), "train_throughput": noisy(1e4, i)}}
            for i, (s, t) in enumerate({"pytorch": 1.0, "tensorflow": 1.5}.items())]


def test_regime_is_overhead_bound_at_a_small_fraction_of_peak_and_not_recorded_without():
    cells, env = flops_cells(), PEAK_ENV
    verdict = one("training-speed", cells, env)
    assert verdict.regime is Regime.OVERHEAD_BOUND  # 3e8 of 1e11 FLOP/s
    assert verdict.peak_fraction == pytest.approx(0.003, rel=0.05)
    fast = one("training-speed", cells, bounded(1e9))
    assert fast.regime is Regime.COMPUTE_BOUND
    assert one("training-speed", cells).regime is Regime.NOT_RECORDED


def test_a_lone_contender_is_insufficient_data():
    verdict = one("training-speed", speed({"pytorch": 1.0}))
    assert verdict.outcome is Outcome.INSUFFICIENT_DATA


def test_release_2026_12_says_which_of_its_first_published_answers_changed():
    from pathlib import Path

    from dlbench.report.pages.claims import changed_claims
    from dlbench.report.pages.home import changed_answers, source_verdicts
    from dlbench.report.inputs.source import load_release

    source = load_release(Path(__file__).parents[1] / "results", "2026.12")
    changes = changed_answers("2026.12", source_verdicts(source))
    # first published: "fp32 has 1.00x lower peak memory than fp16" and accuracy from
    # identical reruns; now not measurable / inconclusive
    assert any(c["title"] == Q["accuracy"].title
               and c["after"] == Outcome.PARITY.value for c in changes)
    assert any(c["after"] == "not measurable here" for c in changes)
    assert not [c for c in changes if "_" in c["before"] + c["after"]]  # modes in words
    assert changed_answers("1999.01", []) is None
    blocks = [{"id": "c", "claim": "C.", "rows": [{"machine": "m", "device": "cpu",
                                                  "verdict": "inconclusive",
                                                  "before": "supported"}]}]
    assert changed_claims(blocks, "2026.12") == [{"id": "c", "claim": "C.", "machine": "m",
                                                  "device": "cpu", "before": "supported",
                                                  "after": "inconclusive"}]


def test_chart_builders_take_a_frame_and_return_a_chart():
    import pandas as pd

    from dlbench.report.render.charts import ratio_chart

    ratios = pd.DataFrame({"label": ["a/b"], "ratio": [0.8], "low": [0.7], "high": [0.9]})
    assert len(ratio_chart(ratios, "claim").to_dict()["layer"]) == 3


def test_release_2027_01_says_its_undecided_answers_first_read_no_meaningful_difference():
    from pathlib import Path

    from dlbench.report.verdicts.first_published import rules_changed
    from dlbench.report.pages.home import changed_answers, source_verdicts
    from dlbench.report.inputs.source import load_release

    source = load_release(Path(__file__).parents[1] / "results", "2027.01")
    changes = changed_answers("2027.01", source_verdicts(source))
    erratum = [c for c in changes if c["before"] == "no meaningful difference"]
    after = {c["after"] for c in erratum}
    assert "inconclusive" in after and {"PyTorch", "Keras on JAX"} <= after  # winners named now, in words
    assert any("mode" in c["group"] for c in erratum)  # matched within mode classes
    # issue 22's mode classes: Keras' model(x) no longer stands for its plain inference, so
    # those groups change beyond the erratum; issue 50: accuracy from the same start is a
    # parity answer; issue 62: a CPU with a physical core per worker is two devices, so the
    # scaling answer 2027.01 left not measurable is judged now
    assert all(c["title"].startswith(("Which framework answers", "Which framework serves",
                                      "Does reduced precision need less memory",
                                      "Which framework's data parallelism"))
               or c["after"] == Outcome.PARITY.value
               for c in changes if c not in erratum)
    assert "undecided" in rules_changed("2027.01") and rules_changed("1999.01") == ""
    assert "one family per question group" in rules_changed("2027.01")


def test_one_a_a_twin_far_off_is_one_estimate_of_many_not_the_threshold():
    cells = speed({"pytorch": 1.0, "tensorflow": 1.15})
    twin = {"system": "pytorch", "control": "aa",
            "values": {"steady_epoch_time": noisy(1.25, 9)}}  # its A/A twin came out 25% off
    from dlbench.report.verdicts.answers import judge_page

    judged = judge_page(*tables([*cells, twin]), (Q["training-speed"],),
                        environments={"r1": CPU_ENV})
    [verdict] = judged.answers
    [control] = judged.controls
    assert control.named_winner  # the rule flags this A/A pair: a false winner shown as such
    assert verdict.threshold == 0.05  # three cells' halves agree: the median estimate is small
    assert verdict.winner == "pytorch"
    assert all(p.other != "pytorch" for p in verdict.pairings)  # the twin is no contender


def test_a_noise_floor_above_five_percent_raises_the_family_s_threshold():
    # every cell's processes alternate fast and slow: each split half is 30% apart
    def alternating(centre: float) -> list[float]:
        return [centre * (1.3 if i % 2 else 1.0) * (1 + 0.001 * i) for i in range(8)]

    cells = [{"system": s, "values": {"steady_epoch_time": alternating(t)}}
             for s, t in (("pytorch", 1.0), ("tensorflow", 1.15), ("keras-torch", 1.2))]
    verdict = one("training-speed", cells)
    # halves 1.3x apart, scaled by 1/sqrt(2) to two whole cells of 8: exp(log(1.3)/sqrt(2))
    assert verdict.threshold == pytest.approx(1.3 ** (1 / 2 ** 0.5) - 1, abs=0.01)
    assert verdict.outcome is not Outcome.WINNER


def test_an_a_a_pair_of_one_configuration_names_no_winner():
    cells = [*speed({"pytorch": 1.0, "tensorflow": 1.6}),
             {"system": "pytorch", "control": "aa",
              "values": {"steady_epoch_time": noisy(1.0, 5)}}]
    from dlbench.report.verdicts.answers import judge_page

    judged = judge_page(*tables(cells), (Q["training-speed"],), environments={"r1": CPU_ENV})
    [control] = judged.controls
    assert not control.named_winner and control.noise < 0.05
    assert judged.answers[0].threshold == 0.05 and judged.answers[0].winner == "pytorch"


def test_groups_that_measured_one_system_are_counted_in_one_line_below_the_answers():
    from pathlib import Path

    from dlbench.report.pages.home import one_sided_groups, question_blocks
    from dlbench.report.render.jinja import environment

    cells = [*speed({"pytorch": 1.0, "tensorflow": 1.3}),
             *speed({"pytorch": 1.0}, workload="cnn-digits")]
    found = answer(Q["training-speed"], *tables(cells), environments={"r1": CPU_ENV})
    lonely = one_sided_groups(found)
    assert lonely["line"] == "1 question group measured one system only"
    assert [row["only"] for row in lonely["rows"]] == ["PyTorch"]
    assert "CNN, 8x8 digits" in lonely["rows"][0]["group"]
    assert one_sided_groups([v for v in found if v.pairings]) is None
    # the answers keep the group with two systems only
    import pandas as pd

    empty = pd.DataFrame(columns=["run_id", "cell_id", "metric", "result_id"])

    class Source:  # a release of one run: question_blocks reads its environment and cells
        cells = pd.DataFrame(columns=["run_id", "cell_id", "experiment", "batch_size",
                                      "config_json"])
        runs = (type("Run", (), {"run_id": "r1", "environment": CPU_ENV})(),)

        def run(self, run_id):
            return type("Run", (), {"environment": CPU_ENV})()

    [block] = question_blocks(Source(), empty, found)
    assert len(block["rows"]) == 1 and "CNN" not in block["rows"][0]["group"]
    page = environment(Path(__file__).parents[1] / "templates").from_string(
        '{% if one_sided %}??? note "{{ one_sided.line }}"{% endif %}').render(one_sided=lonely)
    assert page == '??? note "1 question group measured one system only"'


def test_the_calibration_simulates_answers_with_a_spread_and_leaves_out_exact_ones():
    from dlbench.core.judging.sequential import single_look
    from dlbench.report.verdicts.verdict_table import calibrate, simulated

    exact = one("accuracy-verdict", [{"system": s, "values": {"test_accuracy": [1.0] * 5},
                              "details": OWN_SEEDS} for s in ("pytorch", "tensorflow")])
    varied = one("accuracy-verdict", [
        {"system": s, "values": {"test_accuracy": noisy(0.95, i, n=5, spread=0.01)},
         "details": OWN_SEEDS} for i, s in enumerate(("pytorch", "tensorflow"))])
    assert exact.tested and not simulated(exact)  # no sampling error to simulate
    assert simulated(varied)
    designs = {"r1": single_look(5)}
    assert calibrate([exact], designs, replications=50).risk is None
    assert calibrate([exact, varied], designs, replications=50).risk.tested == 1


def test_an_evidence_row_shows_the_value_it_ranks_by():
    from dlbench.report.pages.home import _evidence

    # keras-tensorflow's median is the higher (12 against 10), its geometric mean the lower
    cells = [{"system": "tensorflow", "values": {"train_throughput": [10.0, 10.0, 30.0]}},
             {"system": "keras-tensorflow", "values": {"train_throughput": [12.0, 12.0, 12.0]}}]
    verdict = one("training-throughput", cells)
    text = _evidence(verdict, "training", {}, {})
    assert text.startswith("TensorFlow: 14.4 samples/s (geometric mean of 3 processes)")
    assert "Keras on TensorFlow: 12.0 samples/s (geometric mean of 3 processes)" in text
    assert "10.0" not in text and "median" not in text


def test_an_answer_row_s_best_value_is_the_geometric_mean_it_ranks_by():
    from dlbench.report.pages.answer_values import centres_of

    observations, _ = tables([{"system": "tensorflow",
                               "values": {"train_throughput": [10.0, 10.0, 30.0]}}])
    [(key, value)] = centres_of(observations).items()
    assert key[0] == "r1" and key[2] == "train_throughput"
    assert value == pytest.approx(3000 ** (1 / 3))  # 14.4, not the median's 10
