"""The user-facing listings of claim pytorch-concise are real code: each trains a few steps."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from dlbench.report.claims.counts import code_lines
from dlbench.report.claims.check import load_listings


@pytest.mark.parametrize("framework", ["pytorch", "tensorflow", "keras"])
def test_each_listing_trains_on_tiny_data(framework: str) -> None:
    listing = importlib.import_module(f"listings.{framework}")
    seed = importlib.import_module("torch").manual_seed if framework == "pytorch" else \
        importlib.import_module("keras").utils.set_random_seed
    seed(0)  # initial weights and shuffling fixed: the test cannot flake
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 8)).astype("float32")
    y = (x[:, 0] > 0).astype("int64")
    model = listing.build_model(8, 2)
    first = listing.train(model, x, y, epochs=1, batch_size=16)
    last = listing.train(model, x, y, epochs=5, batch_size=16)
    assert np.isfinite(first) and np.isfinite(last)
    assert last < first  # it learns: the step is a real training step


def test_listings_are_short_user_code_counted_without_docstrings() -> None:
    listings = load_listings()
    assert set(listings) == {"listings/pytorch.py", "listings/tensorflow.py",
                             "listings/keras.py"}
    for text in listings.values():
        assert 5 < code_lines(text) < 60
        assert "runner" not in text and "dlbench" not in text
