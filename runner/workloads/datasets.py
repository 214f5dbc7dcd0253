"""Datasets: real data shipped in scikit-learn, generated data, and users' local files.

Nothing here downloads: MNIST and CIFAR-10 are read from a folder the user names.
Images are float32 NHWC in [0, 1]; labels int64.
"""

from __future__ import annotations

import io
import os
import pickle
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dlbench.core.storage.atomic import atomic_write_bytes
from dlbench.runner.workloads.cifar_batches import read_batch

DATASETS = ("digits", "synthetic-images", "synthetic-tokens", "mnist", "cifar10")


class DatasetError(ValueError):
    """A dataset that cannot be loaded, with what was expected."""


@dataclass(frozen=True)
class Dataset:
    """A fixed train/test split."""

    name: str
    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    classes: int

    @property
    def input_shape(self) -> tuple[int, ...]:
        return tuple(self.x_train.shape[1:])


def load_dataset(name: str, data_dir: str = "", size: str = "") -> Dataset:
    """Load a dataset by name; local-file datasets need `data_dir`."""
    if name == "digits":
        return load_digits()
    if name == "synthetic-images":
        return synthetic_images(train=8192 if size == "large" else 2048)
    if name in ("mnist", "cifar10"):
        if not data_dir:
            raise DatasetError(f"dataset {name!r} reads local files: pass --data-dir DIR")
        return load_mnist_npz(Path(data_dir)) if name == "mnist" else load_cifar10(Path(data_dir))
    if name == "synthetic-tokens":
        raise DatasetError("synthetic-tokens are generated at a model's sequence length and "
                           "vocabulary: use dlbench.runner.workloads.catalog.profile_data")
    raise DatasetError(f"unknown dataset {name!r}; valid: {', '.join(DATASETS)}")


def cache_dir() -> Path:
    """Where derived copies of bundled data are kept ($XDG_CACHE_HOME/dlbench)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dlbench"


def load_digits() -> Dataset:
    """scikit-learn's 8x8 digits, pixel values scaled to [0, 1], stratified 80/20 split.

    The split is cached as .npz: every cell is a fresh process, and importing scikit-learn
    costs each of them more than a second.
    """
    cached = cache_dir() / f"digits-split-sklearn-{sklearn_version()}.npz"
    if cached.is_file():
        with np.load(cached) as arrays:
            return Dataset("digits", *(arrays[k] for k in _SPLIT_KEYS), classes=10)
    dataset = _split_digits()
    buffer = io.BytesIO()
    np.savez(buffer, **{key: getattr(dataset, key) for key in _SPLIT_KEYS})
    atomic_write_bytes(cached, buffer.getvalue())
    return dataset


_SPLIT_KEYS = ("x_train", "y_train", "x_test", "y_test")


def sklearn_version() -> str:
    from importlib.metadata import version

    return version("scikit-learn")


def _split_digits() -> Dataset:
    from sklearn.datasets import load_digits as sk_load_digits
    from sklearn.model_selection import train_test_split

    bunch = sk_load_digits()
    images = (bunch.images / 16.0).astype(np.float32)[..., None]
    labels = bunch.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(
        images, labels, test_size=0.2, random_state=0, stratify=labels
    )
    return Dataset("digits", x_train, y_train, x_test, y_test, classes=10)


#: The fewest test samples generated data holds: one sample is 0.4% of the test accuracy.
MIN_HELD_OUT = 256


def held_out_count(train: int) -> int:
    """How many test samples generated data holds beside `train` training samples."""
    return max(MIN_HELD_OUT, train // 4)


def synthetic_images(train: int, test: int | None = None, seed: int = 7,
                     size: int = 32) -> Dataset:
    """size x size x 3 images (size a multiple of 4) of 10 classes: each class's own coarse
    4x4 colour pattern, upscaled, plus strong pixel noise, so labels are learnable.
    `test` defaults to held_out_count(train)."""
    if size % 4:
        raise DatasetError(f"synthetic image size {size} is not a multiple of 4")
    rng = np.random.default_rng(seed)
    coarse = rng.normal(size=(10, 4, 4, 3)).astype(np.float32)
    prototypes = coarse.repeat(size // 4, axis=1).repeat(size // 4, axis=2)
    total = train + (held_out_count(train) if test is None else test)
    labels = rng.integers(0, 10, size=total).astype(np.int64)
    noise = rng.normal(scale=1.5, size=(total, size, size, 3)).astype(np.float32)
    images = 0.5 + 0.15 * (prototypes[labels] + noise)
    images = np.clip(images, 0.0, 1.0).astype(np.float32)
    return Dataset("synthetic-images", images[:train], labels[:train], images[train:],
                   labels[train:], classes=10)


#: Marker tokens each class owns (ids 0 .. classes x MARKERS_PER_CLASS - 1).
MARKERS_PER_CLASS = 2
#: The share of a sequence's positions that hold its class's markers.
MARKER_SHARE = 0.25


def synthetic_tokens(train: int, sequence: int, vocabulary: int, classes: int = 10,
                     test: int | None = None, seed: int = 11) -> Dataset:
    """Token sequences (int32 ids) whose label is which class's marker tokens they hold:
    noise tokens drawn from the ids no class owns, with a quarter of the positions (one at
    least), anywhere in the sequence, replaced by the class's own markers. Attention finds
    them at any position, recurrence carries them to the last step. `test` defaults to
    held_out_count(train)."""
    markers = classes * MARKERS_PER_CLASS
    if vocabulary <= markers:
        raise DatasetError(f"vocabulary {vocabulary} too small for {classes} classes of "
                           f"{MARKERS_PER_CLASS} marker tokens and noise tokens")
    rng = np.random.default_rng(seed)
    total = train + (held_out_count(train) if test is None else test)
    labels = rng.integers(0, classes, size=total).astype(np.int64)
    tokens = rng.integers(markers, vocabulary, size=(total, sequence))
    marked = rng.random(size=(total, sequence)) < MARKER_SHARE
    marked[np.arange(total), rng.integers(0, sequence, size=total)] = True  # one at least
    chosen = rng.integers(0, MARKERS_PER_CLASS, size=(total, sequence))
    tokens = np.where(marked, labels[:, None] * MARKERS_PER_CLASS + chosen, tokens)
    tokens = tokens.astype(np.int32)
    return Dataset("synthetic-tokens", tokens[:train], labels[:train], tokens[train:],
                   labels[train:], classes=classes)


def load_mnist_npz(folder: Path) -> Dataset:
    """MNIST in Keras' mnist.npz layout: x_train, y_train, x_test, y_test (uint8 28x28)."""
    path = folder / "mnist.npz"
    if not path.is_file():
        raise DatasetError(f"{path}: not found; expected Keras' mnist.npz in --data-dir")
    try:
        with np.load(path) as arrays:
            parts = [arrays[key] for key in ("x_train", "y_train", "x_test", "y_test")]
    except KeyError as error:
        raise DatasetError(f"{path}: missing array {error}; expected x_train, y_train, "
                           "x_test, y_test") from None
    except (OSError, ValueError) as error:
        raise DatasetError(f"{path}: not a readable .npz file ({error})") from None
    x_train, y_train, x_test, y_test = parts
    if x_train.ndim != 3 or x_train.shape[1:] != x_test.shape[1:]:
        raise DatasetError(f"{path}: expected images of shape (N, 28, 28), got {x_train.shape}")
    return Dataset("mnist", _scale(x_train)[..., None], y_train.astype(np.int64),
                   _scale(x_test)[..., None], y_test.astype(np.int64), classes=10)


def load_cifar10(folder: Path) -> Dataset:
    """CIFAR-10 python batches (data_batch_1..5, test_batch), in DIR or DIR/cifar-10-batches-py."""
    if (folder / "cifar-10-batches-py").is_dir():
        folder = folder / "cifar-10-batches-py"
    train_files = sorted(folder.glob("data_batch_*"))
    test_file = folder / "test_batch"
    if not train_files or not test_file.is_file():
        raise DatasetError(f"{folder}: expected CIFAR-10 files data_batch_1..5 and test_batch")
    train = [_cifar_batch(path) for path in train_files]
    x_test, y_test = _cifar_batch(test_file)
    return Dataset("cifar10", np.concatenate([x for x, _ in train]),
                   np.concatenate([y for _, y in train]), x_test, y_test, classes=10)


def _cifar_batch(path: Path) -> tuple[np.ndarray, np.ndarray]:
    try:
        batch = read_batch(path)
        data = np.asarray(batch[b"data"], dtype=np.uint8)
        labels = np.asarray(batch[b"labels"], dtype=np.int64)
    except (pickle.UnpicklingError, EOFError, KeyError, TypeError, ValueError,
            AttributeError, IndexError, OverflowError, RecursionError) as error:
        raise DatasetError(f"{path}: not a CIFAR-10 python batch "
                           f"({' '.join(str(error).split())})") from None
    if data.ndim != 2 or data.shape[1] != 3072 or len(data) != len(labels):
        raise DatasetError(f"{path}: expected data of shape (N, 3072), got {data.shape}")
    images = data.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
    return _scale(images), labels


def _scale(images: np.ndarray) -> np.ndarray:
    return (images.astype(np.float32) / 255.0).astype(np.float32)
