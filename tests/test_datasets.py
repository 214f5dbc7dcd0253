"""Datasets: bundled digits, generated images, and users' local MNIST/CIFAR-10 files."""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest

from dlbench.runner.workloads.datasets import (MARKERS_PER_CLASS, DatasetError, held_out_count, load_cifar10,
                             load_digits, load_mnist_npz, synthetic_images, synthetic_tokens)
from dlbench.runner.workloads.catalog import (WORKLOADS, epoch_order, get_workload, initial_layers, profile_data,
                              size_profile)


def test_digits_split_is_fixed_and_scaled():
    first, second = load_digits(), load_digits()
    assert first.x_train.shape == (1437, 8, 8, 1) and first.x_test.shape == (360, 8, 8, 1)
    assert np.array_equal(first.y_test, second.y_test)
    assert 0.0 <= first.x_train.min() and first.x_train.max() <= 1.0


def test_synthetic_images_have_learnable_labels():
    from sklearn.linear_model import LogisticRegression

    data = synthetic_images(train=600)
    model = LogisticRegression(max_iter=300).fit(data.x_train.reshape(600, -1), data.y_train)
    accuracy = model.score(data.x_test.reshape(len(data.x_test), -1), data.y_test)
    assert accuracy > 0.5  # chance is 0.1


def write_mnist(folder, n=20):
    rng = np.random.default_rng(0)
    np.savez(folder / "mnist.npz",
             x_train=rng.integers(0, 256, (n, 28, 28), dtype=np.uint8),
             y_train=rng.integers(0, 10, n), x_test=rng.integers(0, 256, (5, 28, 28), dtype=np.uint8),
             y_test=rng.integers(0, 10, 5))


def test_mnist_npz_loads(tmp_path):
    write_mnist(tmp_path)
    data = load_mnist_npz(tmp_path)
    assert data.x_train.shape == (20, 28, 28, 1) and data.x_train.dtype == np.float32
    assert data.x_train.max() <= 1.0 and data.classes == 10


def test_mnist_errors_name_the_problem(tmp_path):
    with pytest.raises(DatasetError, match="mnist.npz in --data-dir"):
        load_mnist_npz(tmp_path)
    np.savez(tmp_path / "mnist.npz", x_train=np.zeros((2, 28, 28)))
    with pytest.raises(DatasetError, match="missing array"):
        load_mnist_npz(tmp_path)


def write_cifar(folder, batches=2, n=6):
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(1)
    for name in [f"data_batch_{i + 1}" for i in range(batches)] + ["test_batch"]:
        batch = {b"data": rng.integers(0, 256, (n, 3072), dtype=np.uint8),
                 b"labels": list(rng.integers(0, 10, n))}
        (folder / name).write_bytes(pickle.dumps(batch))


def test_cifar10_batches_load_as_nhwc(tmp_path):
    write_cifar(tmp_path / "cifar-10-batches-py")
    data = load_cifar10(tmp_path)
    assert data.x_train.shape == (12, 32, 32, 3) and data.x_test.shape == (6, 32, 32, 3)
    raw = pickle.loads((tmp_path / "cifar-10-batches-py" / "test_batch").read_bytes())
    red_first_pixel = raw[b"data"][0][0] / 255.0
    assert data.x_test[0, 0, 0, 0] == pytest.approx(red_first_pixel)


def test_cifar10_corrupt_batch_is_reported(tmp_path):
    write_cifar(tmp_path)
    (tmp_path / "test_batch").write_bytes(b"garbage")
    with pytest.raises(DatasetError, match="not a CIFAR-10 python batch"):
        load_cifar10(tmp_path)


def test_epoch_order_is_shared_and_changes_per_epoch():
    assert np.array_equal(epoch_order(100, 3, 0), epoch_order(100, 3, 0))
    assert not np.array_equal(epoch_order(100, 3, 0), epoch_order(100, 4, 0))


def test_initial_weights_are_deterministic_and_shaped():
    workload, data = WORKLOADS["cnn-digits"], load_digits()
    layers = initial_layers(workload, data)
    again = initial_layers(workload, data)
    assert [layer.kernel.shape for layer in layers] == [(3, 3, 1, 16), (3, 3, 16, 32), (128, 10)]
    assert all(np.array_equal(a.kernel, b.kernel) for a, b in zip(layers, again))


def test_synthetic_tokens_have_learnable_labels_and_are_seeded():
    from sklearn.linear_model import LogisticRegression

    data = synthetic_tokens(train=600, sequence=32, vocabulary=200)
    assert data.x_train.dtype == np.int32 and data.x_train.shape == (600, 32)
    assert data.x_train.min() >= 0 and data.x_train.max() < 200
    assert np.array_equal(data.x_test, synthetic_tokens(600, 32, 200).x_test)

    def counts(tokens: np.ndarray) -> np.ndarray:
        return np.stack([np.bincount(row, minlength=200) for row in tokens])

    model = LogisticRegression(max_iter=500).fit(counts(data.x_train), data.y_train)
    assert model.score(counts(data.x_test), data.y_test) > 0.5  # chance is 0.1
    with pytest.raises(DatasetError, match="vocabulary 20 too small"):
        synthetic_tokens(10, 4, 20)


def test_every_sequence_holds_its_own_classes_markers_and_no_others():
    data = synthetic_tokens(train=300, sequence=5, vocabulary=50)
    markers = 10 * MARKERS_PER_CLASS
    owner = np.where(data.x_train < markers, data.x_train // MARKERS_PER_CLASS, -1)
    assert ((owner == data.y_train[:, None]) | (owner == -1)).all()  # no other class's marker
    assert (owner == data.y_train[:, None]).any(axis=1).all()  # one at least, even in 5 tokens


def test_generated_test_sets_hold_hundreds_of_samples():
    assert held_out_count(256) == held_out_count(512) == 256  # one sample is 0.4%
    assert held_out_count(8192) == 2048
    assert len(synthetic_images(512).y_test) == 256
    assert len(synthetic_tokens(256, 8, 50).y_test) == 256
    assert len(synthetic_images(8, test=3).y_test) == 3


def test_synthetic_images_take_the_profile_size():
    workload = get_workload("resnet-synthetic")
    data = profile_data(workload, size_profile(workload, "tiny"), train=8)
    assert data.x_train.shape == (8, 16, 16, 3)
    with pytest.raises(DatasetError, match="not a multiple of 4"):
        synthetic_images(4, size=30)


def test_local_cifar10_feeds_the_resnet_through_data_dir(tmp_path):
    from dlbench.runner.models.reference_forward import forward
    from dlbench.runner.models.weights import initial_weights

    write_cifar(tmp_path / "cifar-10-batches-py")
    workload = get_workload("resnet-cifar10")
    profile = size_profile(workload, "cpu")
    data = profile_data(workload, profile, data_dir=str(tmp_path))
    assert data.x_train.shape[1:] == profile.definition.input_shape == (32, 32, 3)
    logits, _ = forward(profile.definition, initial_weights(profile.definition), data.x_test[:2])
    assert logits.shape == (2, 10) and np.isfinite(logits).all()
    with pytest.raises(DatasetError, match="pass --data-dir"):
        profile_data(workload, profile)
    with pytest.raises(ValueError, match="takes \\(16, 16, 3\\)"):
        profile_data(workload, size_profile(get_workload("resnet-synthetic"), "tiny"),
                     data_dir=str(tmp_path))


def test_model_workload_data_takes_the_device_profiles_input_size():
    from dlbench.runner.workloads.catalog import load_workload_data

    tokens = load_workload_data(get_workload("transformer-tokens"), device="cpu")
    assert tokens.x_train.shape == (2048, 128) and tokens.classes == 10
    images = load_workload_data(get_workload("resnet-synthetic"), device="cpu", size="large")
    assert images.x_train.shape == (8192, 32, 32, 3)


def test_the_small_data_size_is_each_cpu_profiles_own():
    from dlbench.runner.workloads.catalog import load_workload_data

    def small(name: str) -> int:
        return len(load_workload_data(get_workload(name), device="cpu", size="small").y_train)

    assert small("transformer-tokens") == 256  # BERT-mini learns in 32 steps of 8
    assert small("resnet-synthetic") == 1024 and small("lstm-tokens") == 512


class _RunsACommand:
    """A pickle whose loading calls os.system (what a hostile batch file holds)."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.mark.parametrize("where", ["whole file", "inside the dict", "as the labels"])
def test_a_cifar10_batch_that_would_run_code_is_refused_without_running_it(tmp_path, where):
    write_cifar(tmp_path)
    marker = tmp_path / "ran"
    hostile = _RunsACommand(marker)
    batch = {"whole file": hostile, "inside the dict": {b"data": hostile, b"labels": []},
             "as the labels": {b"data": np.zeros((1, 3072), np.uint8), b"labels": hostile}}
    (tmp_path / "test_batch").write_bytes(pickle.dumps(batch[where], protocol=2))
    with pytest.raises(DatasetError) as error:
        load_cifar10(tmp_path)
    assert not marker.exists()
    message = str(error.value)
    assert "\n" not in message and "not a CIFAR-10 python batch" in message
    assert "asks for posix.system" in message, message


@pytest.mark.parametrize("hostile", [
    b"cbuiltins\neval\n(S'1'\ntR.", b"c__builtin__\nexec\n(S'1'\ntR.",
    b"\x80\x02c_codecs\nencode\nX\x01\x00\x00\x00aX\x05\x00\x00\x00rot13\x86R.",
    b"\x80\x02cnumpy\ndtype\nX\x02\x00\x00\x00O8\x85R.", b"(P1\nt.", b"\x80\x05\x95",
])
def test_a_cifar10_batch_asking_for_anything_else_is_one_line(tmp_path, hostile):
    write_cifar(tmp_path)
    (tmp_path / "test_batch").write_bytes(hostile)
    with pytest.raises(DatasetError, match="not a CIFAR-10 python batch") as error:
        load_cifar10(tmp_path)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("numpy_module", [b"numpy._core.multiarray", b"numpy.core.multiarray"])
def test_a_real_format_cifar10_batch_still_loads(tmp_path, numpy_module):
    """As the CIFAR-10 site's batches are pickled (protocol 2, byte keys, a uint8 array, a
    list of ints), under numpy 2's and numpy 1's module names."""
    write_cifar(tmp_path)
    data = np.arange(2 * 3072, dtype=np.uint8).reshape(2, 3072)
    batch = {b"batch_label": b"testing batch 1 of 1", b"labels": [3, 7], b"data": data,
             b"filenames": [b"a.png", b"b.png"]}
    raw = pickle.dumps(batch, protocol=2).replace(b"numpy._core.multiarray", numpy_module)
    (tmp_path / "test_batch").write_bytes(raw)
    loaded = load_cifar10(tmp_path)
    assert list(loaded.y_test) == [3, 7]
    assert loaded.x_test[1, 0, 0, 0] == pytest.approx(data[1, 0] / 255.0)
