"""Per-framework settings applied before first use: threads, TF32, determinism, device.

Each function imports its framework, applies the pinned settings and returns them as
strings for the fairness manifest.
"""

from __future__ import annotations

from runner.cellenv import recorded_settings
from runner.spec import CellSpec


def _base(spec: CellSpec) -> dict[str, str]:
    import os

    return recorded_settings(dict(os.environ)) | {"threads": str(spec.threads)}


def configure_torch(spec: CellSpec) -> dict[str, str]:
    """Threads and TF32 for PyTorch; returns the settings."""
    import torch

    torch.set_num_threads(spec.threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:  # already set in this process (e.g. by Keras on torch)
        pass
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.use_deterministic_algorithms(False)
    accelerator = {}
    if torch.cuda.is_available():
        accelerator = {"torch.cuda": str(torch.version.cuda),
                       "torch.cudnn": str(torch.backends.cudnn.version()),
                       "torch.gpu": torch.cuda.get_device_name(0)}
    return _base(spec) | accelerator | {
        "torch.num_threads": str(torch.get_num_threads()),
        "torch.allow_tf32": "False",
        "torch.version": torch.__version__,
    }


def configure_tensorflow(spec: CellSpec) -> dict[str, str]:
    """Threads and TF32 for TensorFlow; returns the settings."""
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(spec.threads)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    tf.config.experimental.enable_tensor_float_32_execution(False)
    build = tf.sysconfig.get_build_info()
    accelerator = {f"tf.build.{key}": str(build[key])
                   for key in ("cuda_version", "cudnn_version") if key in build}
    return _base(spec) | accelerator | {
        "tf.intra_op_threads": str(tf.config.threading.get_intra_op_parallelism_threads()),
        "tf.inter_op_threads": "1",
        "tf.tensor_float_32": "False",
        "tf.version": tf.__version__,
    }


def configure_keras(spec: CellSpec) -> dict[str, str]:
    """Configure the Keras backend's framework first, then Keras itself."""
    settings = _base(spec)
    if spec.backend == "tensorflow":
        settings |= configure_tensorflow(spec)
    elif spec.backend == "torch":
        settings |= configure_torch(spec)
    elif spec.backend == "jax":
        import jax

        jax.config.update("jax_default_matmul_precision", "float32")
        settings |= {"jax.version": jax.__version__,
                     "jax.default_matmul_precision": "float32",
                     "jax.threads": f"capped by CPU affinity to {spec.threads} cores"}
    import keras

    keras.utils.set_random_seed(0)
    return settings | {"keras.version": keras.__version__, "keras.backend": keras.backend.backend()}
