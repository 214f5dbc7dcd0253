"""Answers at a glance: the home page's answer tables (each cell's outcome mark, words
instead of identifiers, tested counts), a release's stored verdicts kept after a rule
change, and citation files served as UTF-8 text."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from tests.judging_fixtures import CPU_ENV, noisy, tables
from tests.site_fixtures import RUN_A, freeze, golden_results

from dlbench.core.text.errors import ResultsFileError
from dlbench.core.storage.releases import ReleaseError, verify_manifest
from dlbench.report.pages.answer_tables import answer_tables, group_label, answer_counts
from dlbench.report.verdicts.answers import QUESTIONS, verdicts
from dlbench.report.verdicts.verdict_table import verdicts_frame
from dlbench.report.verdicts.stored import judged_apart, read_verdicts, store_verdicts

RAW = re.compile(r"\b(keras-\w+|pytorch|tensorflow|mlp-digits|resnet-synthetic|"
                 r"steady_epoch_time|train_throughput)\b")


def _frame(times: dict[str, tuple[float, float]], workload: str = "mlp-digits",
           questions=QUESTIONS) -> pd.DataFrame:
    """The verdicts table of a training run: system -> (centre, spread), 8 processes each."""
    cells = [{"system": s, "workload": workload, "values": {
        "steady_epoch_time": noisy(t, i, spread=spread),
        "train_throughput": [1000 / v for v in noisy(t, i, spread=spread)]}}
             for i, (s, (t, spread)) in enumerate(times.items())]
    found = verdicts(*tables(cells), questions, environments={"r1": CPU_ENV})
    return verdicts_frame(found, [], {})


def _table(frame: pd.DataFrame, key: str = "training-speed") -> dict:
    return next(t for t in answer_tables(frame, {}) if t["key"] == key)


def test_a_decided_best_is_bold_and_every_label_is_words():
    table = _table(_frame({"pytorch": (1.0, 0.01), "tensorflow": (1.4, 0.01),
                           "keras-jax": (2.0, 0.01)}))
    assert table["columns"] == ["Keras on JAX", "PyTorch", "TensorFlow"]
    [row] = table["rows"]
    assert row["label"] == "MLP, 8x8 digits, batch 32, plain mode"
    jax, torch, tf = row["cells"]
    assert torch == "**1.00**"
    assert re.fullmatch(r"1\.\d\d <small>1\.\d\d–1\.\d\d</small>", tf), tf
    assert jax.startswith("2.0") or jax.startswith("1.9")
    assert "PyTorch wins 1 of 1 row" in table["sentence"]
    assert not RAW.search(" ".join([*table["columns"], row["label"], table["sentence"]]))


def test_undecided_and_tied_cells_are_marked_and_the_best_is_not_bold():
    undecided = _table(_frame({"pytorch": (1.0, 0.3), "tensorflow": (1.3, 0.3)}))
    best, other = undecided["rows"][0]["cells"]
    assert best == "1.00" and re.fullmatch(r"[\d.]+ \? <small>.*</small>", other), other
    assert "not decided" in undecided["sentence"]
    tied = _table(_frame({"pytorch": (1.0, 0.002), "tensorflow": (1.01, 0.002)}))
    best, other = tied["rows"][0]["cells"]
    assert best == "1.00" and other.startswith("≈ 1.01")
    assert "no meaningful difference" in tied["sentence"]


def test_a_workload_is_named_with_its_size_on_its_device():
    assert group_label('{"batch_size": "32", "mode_class": "default", '
                       '"workload": "resnet-synthetic"}', "cpu", "system") == \
        "ResNet-20, 32 px, batch 32, plain mode"
    assert group_label('{"batch_size": "128", "workload": "resnet-synthetic"}', "cuda",
                       "system") == "ResNet-50, 224 px, batch 128"
    assert group_label('{"batch_size": "32", "system": "keras-jax", "workload": "mlp-digits"}',
                       "cpu", "precision") == "MLP, 8x8 digits, batch 32, Keras on JAX"


def test_headline_counts_leave_out_a_derived_metric_s_repeat():
    frame = _frame({"pytorch": (1.0, 0.01), "tensorflow": (1.4, 0.01)})
    derived = _table(frame, "training-throughput")
    assert "not counted as an answer of its own" in derived["sentence"]
    answered = frame[(frame["row"] == "answer")
                     & frame["question"].isin(["training-speed", "training-throughput"])]
    assert len(answered) == 2
    assert answer_counts(frame) == {"tested": 1, "winners": 1}


def test_a_stored_verdict_is_shown_unchanged_beside_today_s_different_one():
    decided = _frame({"pytorch": (1.0, 0.01), "tensorflow": (1.4, 0.01)})
    stored = read_verdicts(decided.to_csv(index=False).encode())
    today = decided.copy()  # a later rule that no longer decides the winner
    answer = (today["row"] == "answer") & (today["question"] == "training-speed")
    today.loc[answer, ["outcome", "winner"]] = ["inconclusive", ""]
    apart = judged_apart(stored, today)
    assert len(apart) == 1
    table = next(t for t in answer_tables(stored, {}, apart) if t["key"] == "training-speed")
    [row] = table["rows"]
    assert row["cells"][0] == "**1.00**"  # the stored verdict, unchanged
    assert row["changed"] == {"stored": "PyTorch leads", "today": "inconclusive"}
    assert judged_apart(stored, decided) == {}


def test_verdicts_are_stored_in_a_release_once_and_covered_by_its_manifest(tmp_path):
    results = golden_results(tmp_path)
    root = freeze(results, "2026.12", [RUN_A], "2026-12-01")
    frame = _frame({"pytorch": (1.0, 0.01), "tensorflow": (1.4, 0.01)})
    path = store_verdicts(root, frame)
    verify_manifest(root)  # the added file is listed: the release still checks
    assert read_verdicts(path.read_bytes())["outcome"].tolist() == frame["outcome"].fillna("").tolist()
    with pytest.raises(ReleaseError, match="written once"):
        store_verdicts(root, frame)
    path.write_text(path.read_text().replace("winner", "inconclusive", 1))
    with pytest.raises(ResultsFileError, match="verdicts.csv"):
        verify_manifest(root)


def test_the_committed_releases_store_their_verdicts():
    from tests.site_fixtures import ROOT

    for name in ("2026.12", "2027.01", "2027.02"):
        root = ROOT / "results" / "releases" / name
        verify_manifest(root)
        stored = read_verdicts((root / "verdicts.csv").read_bytes())
        assert (stored["row"] == "answer").sum() > 20
        assert "b717c10" in (root / "errata.yml").read_text()


def test_what_it_would_take_is_said_only_within_ten_times_the_processes_measured():
    from dlbench.report.pages.answer_tables import what_it_would_take

    assert what_it_would_take(30, 3) == "about 30 processes per cell would decide it"
    assert what_it_would_take(31, 3) == "not decidable at this noise"
    assert what_it_would_take(364, 6) == "not decidable at this noise"
    assert what_it_would_take("", 3) == "not decidable at this noise"


def test_citation_files_are_served_as_utf8_text(tmp_path):
    import threading
    import urllib.request

    from dlbench.report.site.static_server import make_server

    (tmp_path / "r.bib").write_text("@misc{x, note = {fp32 · default mode}}\n", encoding="utf-8")
    (tmp_path / "CITATION.cff").write_text("title: dlbench · Zürich\n", encoding="utf-8")
    server = make_server(tmp_path, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        for name in ("r.bib", "CITATION.cff"):
            url = f"http://127.0.0.1:{server.server_address[1]}/{name}"
            with urllib.request.urlopen(url) as got:
                assert got.headers["Content-Type"] == "text/plain; charset=utf-8"
                assert "·" in got.read().decode(got.headers.get_content_charset())
    finally:
        server.shutdown()
        server.server_close()


def test_a_failed_cell_s_reason_is_one_line_without_a_python_error():
    from dlbench.report.render.labels import reason_label

    crash = "Traceback (most recent call last):\n  ...\nAttributeError: 'X' has no attribute 'y'"
    assert reason_label("failed", crash) == ("the worker process crashed (AttributeError); the "
                                             "full error is in the cells table of the downloads")
    assert reason_label("failed", "fp16 needs a GPU\nsecond line") == "fp16 needs a GPU"
    assert reason_label("failed", "") == "(none recorded)"


def test_a_release_page_renders_its_stored_verdicts_unchanged_after_a_rule_change():
    """2027.02's home page, with today's rule replaced by one that decides no winner: every
    stored winner stays bold, and its row says what today's rule judges, after it."""
    import dataclasses

    from dlbench.report.inputs.labelled import labelled_results
    from dlbench.report.pages.cite import release_citation
    from dlbench.core.declarations.experiments import EXPERIMENTS
    from dlbench.report.pages.home import home_page, source_judgement
    from dlbench.report.pages.registry import PageInputs
    from dlbench.report.render.jinja import environment
    from dlbench.report.inputs.source import load_release
    from dlbench.report.verdicts.answers import Outcome, Verdicts
    from dlbench.report.verdicts.verdict_table import Calibration
    from tests.site_fixtures import ROOT, TEMPLATES

    source = load_release(ROOT / "results", "2027.02")
    judged = source_judgement(source)
    stricter = Verdicts([dataclasses.replace(v, outcome=Outcome.INCONCLUSIVE, winner=None)
                         if v.outcome is Outcome.WINNER else v for v in judged.answers],
                        judged.controls)
    inputs = PageInputs(source, labelled_results(source), environment(TEMPLATES),
                        {e.name: {"question": e.question} for e in EXPERIMENTS},
                        stricter, Calibration([], None),
                        release_citation(source.root, source.name, source.date, "http://x/"),
                        None)
    page = home_page(inputs).text
    stored = read_verdicts((source.root / "verdicts.csv").read_bytes())
    winners = stored[(stored["row"] == "answer") & (stored["outcome"] == "winner")]
    changed = [line for line in page.splitlines() if "(published: " in line]
    # every stored winner stays bold; other rows may differ by today's rule on their own
    led = [line for line in changed if " leads; today's rule: " in line]
    assert len(led) == len(winners) > 0
    # today's rule also leaves precision memory undecided where the runtime's overhead
    # dominates the model's own memory (2027.02's digits MLP): those say so
    gated = [line for line in led if "today's rule: not measurable here)" in line]
    memory = winners[winners["question"] == "precision-memory"]
    assert len(gated) == len(memory) > 0
    for line in led:
        assert "**1.00**" in line  # the stored verdict, as published
        if line not in gated:
            assert re.search(r"\(published: [\w ]+ leads; today's rule: inconclusive\)",
                             line), line
    assert "12 with a decided winner (as published with this release)" in page
    assert f"Today's rule judges {len(changed)} answers of this release differently" in page


def test_generated_sentences_name_workloads_systems_and_metrics_in_words():
    from dlbench.report.render.labels import short_sentences

    text = ("workload mlp-digits, batch size 32, system keras-jax: under 10x; "
            "lstm-tokens, batch 32, tensorflow: steady_epoch_time 1.2x")
    assert short_sentences(text) == ["MLP, 8x8 digits, batch 32, Keras on JAX: under 10x",
                                     "LSTM 1x256, seq 64, batch 32, TensorFlow: time per epoch "
                                     "1.2x"]
    assert not RAW.search(" ".join(short_sentences(text)))
