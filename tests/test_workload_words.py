"""A workload's words are declared with it, recorded by the run, and label its pages; the
environment page counts the run's identifier lists instead of printing them."""

from __future__ import annotations

import pytest

from dlbench.report.pages.info import run_settings
from dlbench.report.render import labels
from dlbench.runner.driver.commands.run import planned_words
from dlbench.runner.driver.plan.cells import plan_cells
from dlbench.runner.driver.plan.request import RunRequest
from dlbench.runner.workloads.catalog import WORKLOADS, workload_words


@pytest.fixture(autouse=True)
def no_recorded_words():
    labels.use_recorded_words([])
    yield
    labels.use_recorded_words([])


@pytest.mark.parametrize(("suite", "device"), [("quick", "cpu"), ("standard", "cpu"),
                                               ("full", "cpu"), ("standard", "cuda")])
def test_every_planned_workload_has_words_at_its_device(suite, device):
    cells = plan_cells(RunRequest(suite=suite, device=device), device)
    words = planned_words(cells, device)
    assert set(words) == {cell.workload for cell in cells}
    assert all(text and text != name for name, text in words.items())


def test_a_model_family_is_named_at_the_size_its_device_runs():
    assert workload_words("resnet-synthetic", "cpu") == "ResNet-20, 32 px"
    assert workload_words("resnet-synthetic", "cuda") == "ResNet-50, 224 px"
    assert workload_words("mlp-digits", "cuda") == "MLP, 8x8 digits"
    assert workload_words("a-users-model", "cpu") == ""
    assert all(workload_words(name, "cpu") for name in WORKLOADS)


def test_recorded_words_label_a_workload_the_fallback_table_does_not_know():
    assert "vit-patches" not in labels.WORKLOAD_LABELS
    assert labels.workload_label("vit-patches") == "vit patches"
    labels.use_recorded_words([("cpu", {"vit-patches": "ViT-Tiny, 32 px"}),
                               ("cuda", {"vit-patches": "ViT-Base, 224 px"})])
    assert labels.workload_label("vit-patches") == "ViT-Tiny, 32 px"
    assert labels.workload_label("vit-patches", "cpu") == "ViT-Tiny, 32 px"
    assert labels.workload_label("vit-patches", "cuda") == "ViT-Base, 224 px"
    assert labels.ids_in_words("vit-patches on system keras-jax") == \
        "ViT-Tiny, 32 px on Keras on JAX"
    labels.use_recorded_words([])  # a later build of another release starts afresh
    assert labels.workload_label("vit-patches") == "vit patches"


def test_recorded_words_come_before_the_fallback_table():
    labels.use_recorded_words([("cpu", {"mlp-digits": "MLP 64-128-64-10, 8x8 digits"})])
    assert labels.workload_label("mlp-digits") == "MLP 64-128-64-10, 8x8 digits"
    assert labels.workload_label("lstm-tokens", "cuda") == "LSTM 2x256, seq 128"


def test_the_environment_page_counts_cells_and_processes_instead_of_listing_them():
    info = {"planned_cells": ["training:mlp-digits:pytorch:fp32-default-b32:cpu"] * 3,
            "process_order": ["a", "b"], "order_seed": 7}
    shown = run_settings(info)
    assert shown["planned_cells"].startswith("3 cells (listed in the run's run.json")
    assert shown["process_order"].startswith("2 processes")
    assert shown["order_seed"] == 7 and info["planned_cells"][0].startswith("training:")
