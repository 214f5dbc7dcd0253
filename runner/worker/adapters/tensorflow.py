"""The TensorFlow adapter: configuration, the workload model as plain tf.Variables, devices,
memory, and the GradientTape SGD loop every TensorFlow experiment file builds on."""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np
import tensorflow as tf

from dlbench.runner.worker.adapters import Adapter
from dlbench.runner.worker.epochs import EpochClock, EpochData, loop_epochs
from dlbench.runner.models.conventions import CONVENTIONS
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.workloads.catalog import Layer, ModelStart, Workload


def configure_tensorflow(spec: CellSpec) -> dict[str, str]:
    """Threads and TF32 for TensorFlow; returns the settings, with whether TensorFlow runs
    its oneDNN custom operations (its own choice for this CPU: dlbench.runner.cell.environment)."""
    from tensorflow.python.util import _pywrap_util_port

    tf.config.threading.set_intra_op_parallelism_threads(spec.threads)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    tf.config.experimental.enable_tensor_float_32_execution(False)
    build = tf.sysconfig.get_build_info()
    accelerator = {f"tf.build.{key}": str(build[key])
                   for key in ("cuda_version", "cudnn_version") if key in build}
    persistent = "tf_xla_persistent_cache_directory" in os.environ.get("TF_XLA_FLAGS", "")
    return accelerator | {
        "tf.onednn_custom_ops": str(bool(_pywrap_util_port.IsMklEnabled())),
        "tf.intra_op_threads": str(tf.config.threading.get_intra_op_parallelism_threads()),
        "tf.inter_op_threads": "1",
        "tf.tensor_float_32": "False",
        "tf.version": tf.__version__,
        "tf.xla_persistent_cache": "set in TF_XLA_FLAGS" if persistent else "off (default)",
    }


class TfModel(tf.Module):
    """The mlp/cnn model as plain variables; canonical layouts are TF's own (NHWC, HWIO).

    Variables are float32; a `compute_dtype` other than float32 (mixed precision) casts
    inputs and weights to it for the computation and returns float32 logits.
    """

    def __init__(self, layers: list[Layer], compute_dtype: tf.DType = tf.float32) -> None:
        super().__init__()
        self.kinds = [layer.kind for layer in layers]
        self.kernels = [tf.Variable(layer.kernel) for layer in layers]
        self.biases = [tf.Variable(layer.bias) for layer in layers]
        self.compute_dtype = compute_dtype

    def __call__(self, x: tf.Tensor, training: bool = False) -> tf.Tensor:
        last = len(self.kinds) - 1
        dtype = self.compute_dtype
        x = tf.cast(x, dtype)  # tf.cast to the same dtype is the identity: fp32 is untouched
        for index, (kind, kernel, bias) in enumerate(zip(self.kinds, self.kernels, self.biases)):
            kernel, bias = tf.cast(kernel, dtype), tf.cast(bias, dtype)
            if kind == "conv":
                x = tf.nn.relu(tf.nn.conv2d(x, kernel, strides=1, padding="SAME") + bias)
                x = tf.nn.max_pool2d(x, ksize=2, strides=2, padding="VALID")
                continue
            if len(x.shape) > 2:
                x = tf.reshape(x, [tf.shape(x)[0], -1])
            x = tf.matmul(x, kernel) + bias
            if index != last:
                x = tf.nn.relu(x)
        return tf.cast(x, tf.float32)


def layered_model(workload: Workload, layers: list[Layer], input_shape: tuple[int, ...],
                  compute_dtype: tf.DType = tf.float32) -> TfModel:
    """The builder of the mlp and cnn workloads, whose weights are `layers`."""
    return TfModel(layers, compute_dtype)


def family_model(workload: Workload, start: ModelStart, input_shape: tuple[int, ...],
                 compute_dtype: tf.DType = tf.float32) -> tf.Module:
    """The builder of the dlbench.runner.models families: the definition with the shared weights,
    float32 variables computing at `compute_dtype` (until 2026-12-07 float32 only, so
    TensorFlow's own bf16 cell of every family failed)."""
    from dlbench.runner.models import tensorflow as models

    return models.build(start.definition, start.weights, CONVENTIONS, compute_dtype)


#: Workload model kind -> builder(workload, layers, input_shape, compute_dtype): the same
#: signature in every adapter (plus the compute dtype of mixed precision; a dlbench.runner.models
#: family, built by family_model, takes its ModelStart in place of layers).
BUILDERS: dict[str, Callable[..., tf.Module]] = {
    "mlp": layered_model, "cnn": layered_model}


def input_dtype(workload: Workload) -> tf.DType:
    """What the workload's model takes: int32 token ids or float32 images/features."""
    return tf.int32 if workload.dataset == "synthetic-tokens" else tf.float32


def mean_cross_entropy(logits: tf.Tensor, labels: tf.Tensor) -> tf.Tensor:
    return tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))


class TfAdapter(Adapter):
    """TensorFlow on the cell's device."""

    def __init__(self, spec: CellSpec) -> None:
        super().__init__(spec)
        self.device = "/GPU:0" if spec.device == "cuda" else "/CPU:0"

    accelerators_seen = ("TensorFlow sees {seen} GPUs, the cell needs {needed} (this "
                         "TensorFlow build or machine has no CUDA)")

    def visible_accelerators(self) -> int:
        return len(tf.config.list_physical_devices("GPU"))

    def configure(self) -> dict[str, str]:
        return super().configure() | configure_tensorflow(self.spec)

    def build_model(self, workload: Workload, layers: list[Layer],
                    input_shape: tuple[int, ...], compute_dtype: tf.DType = tf.float32):
        builder = BUILDERS.get(workload.model, family_model)
        if tf.distribute.has_strategy():  # the strategy places (and mirrors) the variables
            return builder(workload, layers, input_shape, compute_dtype)
        with tf.device(self.device):
            return builder(workload, layers, input_shape, compute_dtype)

    def to_device(self, x: np.ndarray) -> tf.Tensor:
        with tf.device(self.device):
            return tf.identity(tf.constant(x))

    def sync(self) -> None:
        if self.device.startswith("/GPU"):
            tf.test.experimental.sync_devices()

    def warm_up(self) -> None:
        with tf.device(self.device):
            kernel = tf.Variable(tf.zeros([4, 2]))
            with tf.GradientTape() as tape:
                loss = mean_cross_entropy(tf.matmul(tf.zeros([2, 4]), kernel),
                                          tf.zeros([2], tf.int64))
            kernel.assign_sub(tape.gradient(loss, kernel))
            tf.function(lambda x: tf.matmul(x, kernel))(tf.zeros([2, 4])).numpy()

    def reset_peak(self) -> None:
        if self.device.startswith("/GPU"):
            tf.config.experimental.reset_memory_stats("GPU:0")

    def accelerator_peak_mib(self) -> float | None:
        if self.device.startswith("/GPU"):
            return tf.config.experimental.get_memory_info("GPU:0")["peak"] / 2**20
        return None


class TfForwardCalls:
    """The harness Predictor's two calls for an object with `adapter`, `device` and `forward`
    (the model or its tf.function): inputs to the device, then one forward call."""

    def prepare(self, x: np.ndarray) -> tf.Tensor:
        return self.adapter.to_device(x)

    def predict(self, prepared: tf.Tensor) -> np.ndarray:
        with tf.device(self.device):
            return self.forward(prepared).numpy()  # .numpy() waits for the device


class TfTrainer:
    """The workload's model trained by a tf.function GradientTape step with momentum SGD;
    `jit_compile` compiles the step with XLA."""

    def __init__(self, adapter: TfAdapter, workload: Workload,
                 input_shape: tuple[int, ...], jit_compile: bool = False) -> None:
        self.jit_compile = jit_compile
        self.adapter, self.workload, self.input_shape = adapter, workload, input_shape
        self.device = adapter.device
        self.batch_size = adapter.spec.batch_size
        self.learning_rate, self.momentum = workload.learning_rate, workload.momentum
        self.signature = [tf.TensorSpec([None, *input_shape], input_dtype(workload)),
                          tf.TensorSpec([None], tf.int64)]

    def reset(self, layers: list[Layer]) -> None:
        self.model = self.adapter.build_model(self.workload, layers, self.input_shape)
        with tf.device(self.device):
            self.velocities = [tf.Variable(tf.zeros_like(v)) for v in self.model.trainable_variables]
        self.train_step = tf.function(self._train_step, input_signature=self.signature,
                                      jit_compile=self.jit_compile)
        self.adapter.reset_peak()

    def _train_step(self, x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
        with tf.GradientTape() as tape:
            loss = mean_cross_entropy(self.model(x, training=True), y)
        variables = self.model.trainable_variables
        for variable, velocity, grad in zip(variables, self.velocities,
                                            tape.gradient(loss, variables)):
            grad = tf.convert_to_tensor(grad)  # an embedding's gradient comes as slices
            velocity.assign(self.momentum * velocity + grad)  # the same rule as torch.optim.SGD
            variable.assign_sub(self.learning_rate * velocity)
        return loss

    def train_epoch(self, x: np.ndarray, y: np.ndarray) -> float:
        """One epoch of steps; the losses are weighted and summed once at the end. Summing
        them per step took four eager TensorFlow ops a step, which made this loop 1.4-1.7x
        slower than the custom-training-loop guide's (benchmarks/steady_epoch_check.py)."""
        with tf.device(self.device):
            inputs, labels = tf.constant(x), tf.constant(y)
            starts = range(0, len(y), self.batch_size)
            losses = [self.train_step(inputs[start:start + self.batch_size],
                                      labels[start:start + self.batch_size]) for start in starts]
            sizes = [min(self.batch_size, len(y) - start) for start in starts]
            # .numpy() waits for the device
            return sum(float(loss.numpy()) * size for loss, size in zip(losses, sizes)) / len(y)

    def train(self, epochs: int, epoch_data: EpochData, clock: EpochClock) -> None:
        loop_epochs(self, epochs, epoch_data, clock)

    def accuracy(self, x: np.ndarray, y: np.ndarray) -> float:
        """Test accuracy, evaluated at the training batch size, so that evaluating never
        needs more memory than a training step (nor grows TensorFlow's oneDNN pool)."""
        with tf.device(self.device):
            predictions = np.concatenate([
                tf.argmax(self.model(tf.constant(x[i:i + self.batch_size])), axis=1).numpy()
                for i in range(0, len(x), self.batch_size)])
        return float((predictions == y).mean())

    def peak_memory_mib(self) -> float | None:
        return self.adapter.accelerator_peak_mib()


ADAPTER = TfAdapter
