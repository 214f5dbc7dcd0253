"""Workloads: model x dataset x hyper-parameters, and the initial weights every framework shares.

Weights are drawn once in NumPy in a canonical layout (dense kernels (in, out), conv
kernels (height, width, in, out), images NHWC) and transferred into each framework, so
every framework starts from the very same function.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dlbench.runner.workloads.datasets import Dataset, load_dataset, synthetic_images, synthetic_tokens
from dlbench.runner.models import definitions as models
from dlbench.runner.models.definitions import ModelDefinition
from dlbench.runner.models.flops import dense_flops, forward_flops, same_conv_pool_flops
from dlbench.runner.models.weights import Weights, initial_weights, parameter_count


@dataclass(frozen=True)
class SizeProfile:
    """A model size and batch size for one kind of device: cpu, gpu, or tiny (tests, parity).
    `small_samples`: the training samples of the "small" data size (a CPU suite's), enough
    for the model to reach its target within that suite's epochs."""

    name: str
    definition: ModelDefinition
    batch_size: int
    small_samples: int = 512
    words: str = ""  # the model at this size as a reader names it, e.g. "ResNet-20, 32 px"


@dataclass(frozen=True)
class Workload:
    """A model on a dataset with fixed hyper-parameters."""

    name: str
    model: str  # mlp | cnn | resnet | transformer | lstm
    dataset: str
    batch_size: int
    learning_rate: float
    momentum: float
    target_accuracy: float
    description: str
    hidden: tuple[int, ...] = ()  # dense widths (mlp)
    channels: tuple[int, ...] = ()  # conv widths (cnn), each followed by 2x2 max-pool
    seed: int = 0
    profiles: tuple[SizeProfile, ...] = ()  # the model families of dlbench.runner.models
    words: str = ""  # a model without size profiles as a reader names it, e.g. "MLP, 8x8 digits"


def _family(name: str, dataset: str, learning_rate: float, target: float, description: str,
            *profiles: SizeProfile) -> Workload:
    cpu = next(p for p in profiles if p.name == "cpu")
    return Workload(name, cpu.definition.family, dataset, cpu.batch_size, learning_rate, 0.9,
                    target, description, profiles=profiles)


WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in [
        Workload("mlp-digits", "mlp", "digits", 32, 0.02, 0.9, 0.95,
                 "MLP 64-128-64-10 on scikit-learn's 8x8 digits", hidden=(128, 64),
                 words="MLP, 8x8 digits"),
        Workload("cnn-digits", "cnn", "digits", 32, 0.05, 0.9, 0.95,
                 "CNN conv16-pool-conv32-pool-dense10 on 8x8 digits", channels=(16, 32),
                 words="CNN, 8x8 digits"),
        Workload("cnn-synthetic", "cnn", "synthetic-images", 64, 0.02, 0.9, 0.9,
                 "CNN conv32-pool-conv64-pool-dense10 on synthetic learnable 32x32x3 images",
                 channels=(32, 64), words="CNN, 32 px"),
        Workload("mlp-mnist", "mlp", "mnist", 128, 0.05, 0.9, 0.95,
                 "MLP 784-256-128-10 on a local MNIST .npz", hidden=(256, 128),
                 words="MLP, MNIST"),
        Workload("cnn-cifar10", "cnn", "cifar10", 64, 0.02, 0.9, 0.5,
                 "CNN conv32-pool-conv64-pool-dense10 on local CIFAR-10 batches",
                 channels=(32, 64), words="CNN, CIFAR-10"),
        _family("resnet-synthetic", "synthetic-images", 0.05, 0.9,
                "ResNet with BatchNorm on synthetic learnable images: ResNet-20 on 32x32x3 "
                "(CPU), ResNet-50 on 224x224x3 (GPU)",
                SizeProfile("cpu", models.RESNET20, 32, small_samples=1024,
                            words="ResNet-20, 32 px"),
                SizeProfile("gpu", models.RESNET50, 128, words="ResNet-50, 224 px"),
                SizeProfile("tiny", models.RESNET_BOTTLENECK_TINY, 4)),
        _family("resnet-cifar10", "cifar10", 0.1, 0.5,
                "ResNet-20 (He et al.) on local CIFAR-10 batches",
                SizeProfile("cpu", models.RESNET20, 32, words="ResNet-20, CIFAR-10"),
                SizeProfile("gpu", models.RESNET20, 256, words="ResNet-20, CIFAR-10"),
                SizeProfile("tiny", models.RESNET_TINY, 4)),
        _family("transformer-tokens", "synthetic-tokens", 0.01, 0.9,
                "Transformer encoder classifier on synthetic token sequences: BERT-mini "
                "(4x256, 4 heads, seq 128) on CPU, BERT-base (12x768, 12 heads, seq 128) on GPU",
                SizeProfile("cpu", models.BERT_MINI, 8, small_samples=256,
                            words="BERT-mini, seq 128"),
                SizeProfile("gpu", models.BERT_BASE, 32, words="BERT-base, seq 128"),
                SizeProfile("tiny", models.TRANSFORMER_TINY, 4)),
        _family("lstm-tokens", "synthetic-tokens", 0.1, 0.9,
                "LSTM classifier on synthetic token sequences: 1x256 seq 64 (CPU), 2x256 seq "
                "128 (GPU)",
                SizeProfile("cpu", models.LSTM_CPU, 32, words="LSTM 1x256, seq 64"),
                SizeProfile("gpu", models.LSTM_GPU, 128, words="LSTM 2x256, seq 128"),
                SizeProfile("tiny", models.LSTM_TINY, 4)),
        # The real-size models people deploy, on the CPU too: the GPU sizes above (same
        # definitions, same weight transfer), beside the small models that train to a target
        # and measure per-call overhead. Their suites time inference, export and training
        # steps on a few samples (dlbench.runner.workloads.real_size); their tiny size is the tests'.
        _family("resnet50-synthetic", "synthetic-images", 0.05, 0.9,
                "ResNet-50 (25.6M parameters) on synthetic 224x224x3 images: the "
                "resnet-synthetic family at its real size, on CPU and GPU",
                SizeProfile("cpu", models.RESNET50, 8, small_samples=32,
                            words="ResNet-50, 224 px"),
                SizeProfile("gpu", models.RESNET50, 128, words="ResNet-50, 224 px"),
                SizeProfile("tiny", models.RESNET_BOTTLENECK_TINY, 4)),
        _family("bert-base-tokens", "synthetic-tokens", 0.01, 0.9,
                "BERT-base (12x768, 12 heads, seq 128, 109M parameters) on synthetic token "
                "sequences: the transformer-tokens family at its real size, on CPU and GPU",
                SizeProfile("cpu", models.BERT_BASE, 8, small_samples=32,
                            words="BERT-base, seq 128"),
                SizeProfile("gpu", models.BERT_BASE, 32, words="BERT-base, seq 128"),
                SizeProfile("tiny", models.TRANSFORMER_TINY, 4)),
    ]
}

#: Workloads that need files from the user (--data-dir); never in a suite by default.
LOCAL_DATA_WORKLOADS = {"mlp-mnist", "cnn-cifar10", "resnet-cifar10"}


@dataclass(frozen=True)
class Layer:
    """One parameterised layer in canonical layout: kind is dense or conv."""

    kind: str
    kernel: np.ndarray
    bias: np.ndarray


def model_input(workload: Workload, x: np.ndarray) -> np.ndarray:
    """Flatten images for an MLP; keep NHWC for a CNN."""
    if workload.model == "mlp":
        return x.reshape(len(x), -1)
    return x


def process_seed(workload: Workload, repeat_index: int) -> int:
    """The seed of a cell's process `repeat_index`: process k of every framework starts from
    the same weights k and trains in the same epoch order k."""
    return workload.seed + repeat_index


def initial_layers(workload: Workload, dataset: Dataset, seed: int | None = None) -> list[Layer]:
    """Glorot-uniform weights and zero biases, drawn from `seed` (the workload's own if None)."""
    if workload.profiles:
        raise ValueError(f"workload {workload.name!r} is a {workload.model} of dlbench.runner.models: "
                         "its weights come from dlbench.runner.models.weights.initial_weights")
    rng = np.random.default_rng((workload.seed if seed is None else seed) + 1000)
    layers: list[Layer] = []
    if workload.model == "mlp":
        width = int(np.prod(dataset.input_shape))
        for out in (*workload.hidden, dataset.classes):
            layers.append(_dense(rng, width, out))
            width = out
        return layers
    height, width, depth = dataset.input_shape
    for out in workload.channels:
        limit = np.sqrt(6.0 / (9 * depth + 9 * out))
        kernel = rng.uniform(-limit, limit, size=(3, 3, depth, out)).astype(np.float32)
        layers.append(Layer("conv", kernel, np.zeros(out, np.float32)))
        depth, height, width = out, height // 2, width // 2
    layers.append(_dense(rng, height * width * depth, dataset.classes))
    return layers


def _dense(rng: np.random.Generator, fan_in: int, fan_out: int) -> Layer:
    limit = np.sqrt(6.0 / (fan_in + fan_out))
    kernel = rng.uniform(-limit, limit, size=(fan_in, fan_out)).astype(np.float32)
    return Layer("dense", kernel, np.zeros(fan_out, np.float32))


def epoch_order(n: int, epoch: int, seed: int) -> np.ndarray:
    """The sample order of one epoch: the same permutation for every framework."""
    return np.random.default_rng([seed, epoch]).permutation(n)


def get_workload(name: str) -> Workload:
    """The workload called `name`, or ValueError listing valid names."""
    try:
        return WORKLOADS[name]
    except KeyError:
        raise ValueError(
            f"unknown workload {name!r}; valid: {', '.join(WORKLOADS)}"
        ) from None


#: Training samples a dlbench.runner.models workload generates, by data size ("small": the size
#: profile's own small_samples, a CPU suite's few dozen steps an epoch).
MODEL_TRAIN_SAMPLES = {"": 2048, "small": 0, "large": 8192}


def load_workload_data(workload: Workload, data_dir: str = "", *, size: str = "",
                       device: str = "cpu", profile: str = "") -> Dataset:
    """The dataset a workload trains on (size selects the synthetic data's sample count; a
    dlbench.runner.models workload's data takes the input size of the device's profile, or of
    `profile`, whose tiny size trains on 256 samples)."""
    if workload.profiles:
        if size not in MODEL_TRAIN_SAMPLES:
            raise ValueError(f"unknown data size {size!r}; valid: "
                             f"{', '.join(repr(s) for s in MODEL_TRAIN_SAMPLES)}")
        chosen = device_profile(workload, device, profile)
        train = 256 if profile == "tiny" else MODEL_TRAIN_SAMPLES[size] or chosen.small_samples
        return profile_data(workload, chosen, data_dir, train)
    return load_dataset(workload.dataset, data_dir=data_dir, size=size)


@dataclass(frozen=True)
class ModelStart:
    """The initial state of a dlbench.runner.models workload: its definition at one size profile and
    the shared initial weights (what the adapters' builders take in place of `layers`)."""

    definition: ModelDefinition
    weights: Weights


def model_start(workload: Workload, profile: SizeProfile, seed: int | None = None) -> ModelStart:
    """The model at `profile` with the weights drawn from `seed` (the workload's own if None:
    the weights parity checks)."""
    seed = workload.seed if seed is None else seed
    return ModelStart(profile.definition, initial_weights(profile.definition, seed))


def size_profile(workload: Workload, name: str) -> SizeProfile:
    """The workload's size profile `name` (cpu, gpu, tiny), or ValueError listing them."""
    for profile in workload.profiles:
        if profile.name == name:
            return profile
    valid = ", ".join(p.name for p in workload.profiles) or "none (not a dlbench.runner.models workload)"
    raise ValueError(f"workload {workload.name!r} has no size profile {name!r}; valid: {valid}")


def device_profile(workload: Workload, device: str, profile: str = "") -> SizeProfile:
    """The size profile a device runs: gpu on cuda, cpu otherwise (`profile` names another,
    e.g. tiny in tests)."""
    return size_profile(workload, profile or ("gpu" if device == "cuda" else "cpu"))


def workload_words(name: str, device: str) -> str:
    """A workload as a reader names it, at the size `device` runs it (its declared words;
    "" for a workload this catalog does not hold, such as a user's model). A run records
    these (run.json "workload_words"), so its pages label a workload declared after them."""
    workload = WORKLOADS.get(name)
    if workload is None:
        return ""
    return device_profile(workload, device).words if workload.profiles else workload.words


def device_batch_size(workload: Workload, device: str) -> int:
    """The batch a workload trains with on `device`: its size profile's for a dlbench.runner.models
    workload (ResNet-50's on a GPU), else the workload's own."""
    return device_profile(workload, device).batch_size if workload.profiles \
        else workload.batch_size


def profile_data(workload: Workload, profile: SizeProfile, data_dir: str = "",
                 train: int = 2048) -> Dataset:
    """The data a model workload trains on at one size profile: generated at the profile's
    input size, or the user's local files."""
    definition = profile.definition
    if workload.dataset == "synthetic-images":
        return synthetic_images(train, size=definition.image_size)
    if workload.dataset == "synthetic-tokens":
        return synthetic_tokens(train, definition.sequence, definition.vocabulary,
                                definition.classes)
    dataset = load_dataset(workload.dataset, data_dir=data_dir)
    if dataset.input_shape != definition.input_shape:
        raise ValueError(f"{workload.dataset} samples have shape {dataset.input_shape}; the "
                         f"{profile.name} model {definition.name} takes {definition.input_shape}")
    return dataset


#: Input shapes (one sample) of the datasets the MLP/CNN workloads use.
DATASET_SHAPES = {"digits": (8, 8, 1), "synthetic-images": (32, 32, 3), "mnist": (28, 28, 1),
                  "cifar10": (32, 32, 3)}


#: Models whose FLOPs include 3x3 convolutions, counted as direct convolutions.
CONVOLUTIONAL_MODELS = ("cnn", "resnet")


def flops_per_sample(name: str, device: str = "cpu", profile: str = "") -> int:
    """Forward FLOPs of one sample of workload `name` at the size it runs on `device`
    (dlbench.runner.models.flops: 2 x MACs of every matrix product)."""
    workload = get_workload(name)
    if workload.profiles:
        return forward_flops(device_profile(workload, device, profile).definition)
    height, width, channels = DATASET_SHAPES[workload.dataset]
    if workload.model == "mlp":
        return dense_flops([height * width * channels, *workload.hidden, 10])
    convs = same_conv_pool_flops(height, width, [channels, *workload.channels])
    size = (height // 2 ** len(workload.channels)) * (width // 2 ** len(workload.channels))
    return convs + dense_flops([size * workload.channels[-1], 10])


@dataclass(frozen=True)
class WorkloadSize:
    """What `dlbench list` shows of one size a workload runs at."""

    profile: str  # cpu | gpu, or "any" for a workload of one size
    model: str
    batch_size: int
    parameters: int
    flops_per_sample: int


def workload_sizes(name: str) -> list[WorkloadSize]:
    """The sizes workload `name` runs at on a CPU and on a GPU (one for the MLP/CNN ones)."""
    workload = get_workload(name)
    if workload.profiles:
        return [WorkloadSize(p.name, p.definition.name, p.batch_size,
                             parameter_count(p.definition), forward_flops(p.definition))
                for p in workload.profiles if p.name != "tiny"]
    return [WorkloadSize("any", workload.model, workload.batch_size, _layer_parameters(workload),
                         flops_per_sample(name))]


def _layer_parameters(workload: Workload) -> int:
    height, width, channels = DATASET_SHAPES[workload.dataset]
    if workload.model == "mlp":
        widths = [height * width * channels, *workload.hidden, 10]
        return sum(a * b + b for a, b in zip(widths, widths[1:]))
    convs = [channels, *workload.channels]
    count = sum(9 * a * b + b for a, b in zip(convs, convs[1:]))
    size = (height // 2 ** len(workload.channels)) * (width // 2 ** len(workload.channels))
    return count + size * convs[-1] * 10 + 10
