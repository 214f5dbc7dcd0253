"""The split-cell rule: when a cell's processes form two clusters, for each outcome."""

from __future__ import annotations

import pytest

from dlbench.core.judging.clusters import SPLIT_FACTOR, smallest_cluster, split_of


def test_the_2027_04_keras_on_tensorflow_cell_splits():
    split = split_of([17.6, 16.9, 17.2, 6.66, 6.42])
    assert split is not None
    assert (split.low_count, split.high_count) == (2, 3)
    assert split.low_range == (6.42, 6.66) and split.high_range == (16.9, 17.6)
    assert split.gap == pytest.approx(16.9 / 6.66)


@pytest.mark.parametrize("values", [
    [1.0, 1.05, 1.1, 1.02, 1.08],  # one spread
    [1.0, 1.01, 1.02, 1.03, 2.5],  # a lone slow process: an outlier, not a cluster
    [1.0, 1.01, 1.5],  # three processes cannot hold two clusters of two
    [1.0, 1.2, 1.44, 1.73, 2.07],  # a wide spread with every step within the factor
])
def test_what_is_not_a_split(values):
    assert split_of(values) is None


def test_the_gap_must_exceed_the_factor():
    assert split_of([1.0, 1.0, SPLIT_FACTOR, SPLIT_FACTOR]) is None
    assert split_of([1.0, 1.0, SPLIT_FACTOR * 1.01, SPLIT_FACTOR * 1.01]) is not None


def test_more_processes_settle_a_small_cluster():
    """Two slow processes split five; among twelve they are outliers a fifth cannot reach."""
    assert smallest_cluster(5) == 2 and smallest_cluster(12) == 3
    assert split_of([1.0] * 3 + [2.0] * 2) is not None
    assert split_of([1.0, 1.01] * 5 + [2.0] * 2) is None


def test_the_words_name_the_side_and_both_clusters():
    words = split_of([17.6, 16.9, 17.2, 6.66, 6.42]).words("the second side")
    assert words.startswith("the second side's processes split into two clusters (2 at "
                            "6.42-6.66, 3 at 16.9-17.6, 2.54x apart)")
