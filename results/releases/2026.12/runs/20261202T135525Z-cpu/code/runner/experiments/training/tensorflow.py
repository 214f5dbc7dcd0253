"""training in TensorFlow's own API: tf.Variable weights, tf.GradientTape, tf.function."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from runner.experiments.training.protocol import measure_training, training_data, training_fairness
from runner.framework_setup import configure_tensorflow
from runner.outcome import CellOutcome, skipped
from runner.spec import CellSpec
from runner.workloads import Layer


class TfModel(tf.Module):
    """The workload's model as plain variables; canonical layouts are TF's own (NHWC, HWIO).

    Variables are float32; a `compute_dtype` other than float32 (mixed precision) casts
    inputs and weights to it for the computation and returns float32 logits.
    """

    def __init__(self, layers: list[Layer], compute_dtype: tf.DType = tf.float32) -> None:
        super().__init__()
        self.kinds = [layer.kind for layer in layers]
        self.kernels = [tf.Variable(layer.kernel) for layer in layers]
        self.biases = [tf.Variable(layer.bias) for layer in layers]
        self.compute_dtype = compute_dtype

    def __call__(self, x: tf.Tensor) -> tf.Tensor:
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


def mean_cross_entropy(logits: tf.Tensor, labels: tf.Tensor) -> tf.Tensor:
    return tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))


class TfTrainer:
    def __init__(self, spec: CellSpec, learning_rate: float, momentum: float,
                 input_shape: tuple[int, ...]) -> None:
        self.device = "/GPU:0" if spec.device == "cuda" else "/CPU:0"
        self.batch_size = spec.batch_size
        self.learning_rate, self.momentum = learning_rate, momentum
        self.signature = [tf.TensorSpec([None, *input_shape], tf.float32),
                          tf.TensorSpec([None], tf.int64)]

    def reset(self, layers: list[Layer]) -> None:
        with tf.device(self.device):
            self.model = TfModel(layers)
            self.velocities = [tf.Variable(tf.zeros_like(v)) for v in self.model.trainable_variables]
        self.train_step = tf.function(self._train_step, input_signature=self.signature)
        if self.device.startswith("/GPU"):
            tf.config.experimental.reset_memory_stats("GPU:0")

    def _train_step(self, x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
        with tf.GradientTape() as tape:
            loss = mean_cross_entropy(self.model(x), y)
        variables = self.model.trainable_variables
        for variable, velocity, grad in zip(variables, self.velocities,
                                            tape.gradient(loss, variables)):
            velocity.assign(self.momentum * velocity + grad)  # the same rule as torch.optim.SGD
            variable.assign_sub(self.learning_rate * velocity)
        return loss

    def train_epoch(self, x: np.ndarray, y: np.ndarray) -> float:
        with tf.device(self.device):
            inputs, labels = tf.constant(x), tf.constant(y)
            total = tf.constant(0.0)
            for start in range(0, len(y), self.batch_size):
                batch_y = labels[start:start + self.batch_size]
                loss = self.train_step(inputs[start:start + self.batch_size], batch_y)
                total += loss * tf.cast(tf.shape(batch_y)[0], tf.float32)
            return float((total / len(y)).numpy())  # .numpy() waits for the device

    def accuracy(self, x: np.ndarray, y: np.ndarray) -> float:
        with tf.device(self.device):
            predictions = tf.argmax(self.model(tf.constant(x)), axis=1).numpy()
        return float((predictions == y).mean())

    def peak_memory_mib(self) -> float | None:
        if self.device.startswith("/GPU"):
            return tf.config.experimental.get_memory_info("GPU:0")["peak"] / 2**20
        return None


def run(spec: CellSpec) -> CellOutcome:
    settings = configure_tensorflow(spec)
    if spec.device == "cuda" and not tf.config.list_physical_devices("GPU"):
        return skipped("TensorFlow sees no GPU (this TensorFlow build or machine has no CUDA)")
    data = training_data(spec)
    trainer = TfTrainer(spec, data.workload.learning_rate, data.workload.momentum,
                        data.x_train.shape[1:])
    fairness = training_fairness(
        spec, data,
        timer_includes="converting the epoch's arrays to tensors on the device, every "
                       "tf.function train step (traced on the first call), and reading "
                       "the epoch loss (a device sync)",
        compile_mode="tf.function graph (no XLA)",
        data_pipeline="in-memory tensors sliced per batch in the shared epoch order",
        settings=settings,
    )
    return measure_training(spec, trainer, data, fairness)
