"""Pages in the reader's words (issue 53): no raw identifier where a word exists, no wall of
text, A/A twins labelled, one count of tested answers."""

from __future__ import annotations

import json

import markdown
import pandas as pd

from dlbench.report.inputs.labelled import variant_label
from dlbench.report.pages.answer_tables import answer_outcomes
from dlbench.report.render.labels import (cell_id_words, environment_key, environment_value,
                                          differences_sentences, ids_in_words,
                                          settings_as_code)
from dlbench.report.render.paragraphs import short_paragraphs

LONG_ITEM = "- **What it leaves out.** " + " ".join(
    f"Sentence {i} says what was left out and why it was left out of this run." for i in range(20))


def _longest(text: str) -> int:
    html = markdown.markdown(text)
    import re

    return max(len(re.sub(r"<[^>]+>", "", body)) for body in re.findall(r"<p>(.*?)</p>", html,
                                                                         flags=re.S))


def test_a_long_list_item_becomes_paragraphs_of_the_same_item_with_every_word_kept():
    text = "Intro.\n\n" + LONG_ITEM + "\n- **Short.** One line."
    out = short_paragraphs(text)
    assert _longest(out) <= 500 < len(LONG_ITEM)
    assert markdown.markdown(out).count("<li>") == 2
    assert out.split() == text.split()  # the words, in order, unchanged


def test_short_text_tables_and_code_are_left_as_written():
    for text in ("- a\n- b", "| a | b |\n| --- | --- |\n| " + "x" * 600 + " | y |",
                 "```\n" + "x. " * 300 + "\n```"):
        assert short_paragraphs(text) == text


def test_names_in_pairs_and_runtimes_are_words():
    assert ids_in_words("ResNet-50: tensorflow/pytorch: 1.9x") == "ResNet-50: TensorFlow/PyTorch: 1.9x"
    assert ids_in_words("jit_compile/predict, onnx-dynamo and tflite") == \
        "jit-compiled/predict, ONNX Runtime and LiteRT"


def test_a_cell_id_and_its_settings_are_said_in_words():
    assert cell_id_words("training:resnet-synthetic:keras-torch:fp32-jit_compile-b32:cpu") == \
        "ResNet-20, 32 px, Keras on torch · fp32 · jit-compiled · batch 32"
    assert cell_id_words("export:resnet50-synthetic:pytorch:fp32-default-b8-onnx-dynamo-aa:cpu") \
        .endswith("ONNX (dynamo) · A/A control")
    changes = json.dumps([["params.epochs", 3, 4], ["params.learning_rate", None, 0.025]])
    assert differences_sentences(changes) == ("A and B differ in epochs: 3 in A, 4 in B. "
                                              "A and B differ in learning rate: not set in A, "
                                              "0.025 in B.")


def test_a_cell_not_measured_on_a_side_reads_as_a_sentence_not_a_status_key():
    """Issue 66: a not comparable row began with 'not_measured not measured on this device
    ...→...', the parameter's raw key before its two values."""
    why = "not measured on this device in the machine suite: minutes of cold compiles"
    for a, b, start in ((None, why, "Measured in A; not measured on this device in B: in the "
                                    "machine suite"),
                        (why, None, "Measured in B; not measured on this device in A: in the "
                                    "machine suite"),
                        (why.replace("machine", "standard"), why,
                         "Not measured on this device on either side (A: in the standard suite:"
                         " minutes of cold compiles; B: in the machine suite:")):
        sentence = differences_sentences(json.dumps([["params.not_measured", a, b]]))
        assert sentence.startswith(start) and sentence.endswith(".") and "_" not in sentence


def test_an_environment_difference_is_a_setting_in_words_with_its_value_in_units():
    assert environment_key("compute_peak.fp32_flops") == \
        "compute peak · fp32 peak (GFLOP/s)"
    assert environment_value("compute_peak.fp32_flops", "158659548727.5") == "158.7"
    assert environment_value("cpu.avx512f", "False") == "no"


def test_api_settings_in_recorded_text_are_shown_as_code():
    assert settings_as_code("default on jax: run_eagerly=False, jit_compile=True") == \
        "default on jax: `run_eagerly=False`, `jit_compile=True`"


def test_an_aa_twin_is_labelled_as_such():
    cell = {"experiment": "training", "precision": "fp32", "mode": "default", "batch_size": 32,
            "workers": 1, "export_format": "", "config_json": json.dumps({"control": "aa"})}
    assert variant_label(cell, "steady_epoch_time").endswith("batch 32 · A/A control")
    assert "A/A" not in variant_label(cell | {"config_json": "{}"}, "steady_epoch_time")


def test_the_page_states_one_count_of_tested_answers_and_its_split():
    frame = pd.DataFrame([
        {"row": "answer", "question": "q", "run_id": "r", "device": "cpu", "group": g,
         "outcome": o, "derived_from": d}
        for g, o, d in (("a", "winner", ""), ("b", "inconclusive", ""), ("c", "winner", "q0"),
                        ("d", "same model from the same start", ""))
    ] + [{"row": "pair", "question": "q", "run_id": "r", "device": "cpu", "group": g,
          "outcome": "", "derived_from": ""} for g in ("a", "b", "c", "d")])
    # a parity answer (same model from the same start) tests nothing: not a tested answer
    assert answer_outcomes(frame) == {"total": 2, "winner": 1, "tied": 0, "inconclusive": 1}


def test_2027_04_s_parity_answers_are_not_counted_as_tested_answers():
    from pathlib import Path

    from dlbench.report.pages.answer_tables import answer_counts
    from dlbench.report.verdicts.stored import read_verdicts

    root = Path(__file__).parents[1] / "results" / "releases" / "2027.04"
    frame = read_verdicts((root / "verdicts.csv").read_bytes())
    assert (frame["outcome"] == "same model from the same start").sum() == 3
    assert answer_counts(frame) == {"tested": 81, "winners": 53}  # the page said 84


def test_recorded_reasons_name_modes_in_words_and_notes_show_identifiers_as_code():
    from dlbench.report.render.labels import reason_label
    from dlbench.report.render.paragraphs import identifiers_as_code

    assert reason_label("skipped", "Keras' jit_compile on TensorFlow: 50 s") == \
        "Keras' jit-compiled on TensorFlow: 50 s"
    assert identifiers_as_code("Keras' jit_compile, not `run_eagerly`; TF_X=1") == \
        "Keras' `jit_compile`, not `run_eagerly`; TF_X=1"


def test_an_environment_value_one_side_lacks_stays_as_the_comparison_marks_it():
    assert environment_value("compute_peak.bf16_flops", "—") == "—"
