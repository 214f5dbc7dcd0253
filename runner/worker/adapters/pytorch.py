"""The PyTorch adapter: configuration, models from canonical weights, devices, memory, and
the plain training loop (torch.optim.SGD) every PyTorch experiment file builds on."""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np
import torch
from torch import nn

from dlbench.runner.worker.adapters import Adapter, cache_files, fresh_cache_dir
from dlbench.runner.worker.epochs import EpochClock, EpochData, loop_epochs
from dlbench.runner.models.conventions import CONVENTIONS
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.workloads.catalog import Layer, ModelStart, Workload


def configure_torch(spec: CellSpec) -> dict[str, str]:
    """Threads, TF32 off, fp32 matmuls and oneDNN (mkldnn) fp32 kernels in fp32 (never
    bf16 or TF32 by a precision default) and a fresh inductor/triton cache; returns the
    settings, read back from torch."""
    torch.set_num_threads(spec.threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:  # already set in this process (e.g. by Keras on torch)
        pass
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    for backend in (torch.backends.mkldnn.matmul, torch.backends.mkldnn.conv):
        backend.fp32_precision = "ieee"
    if torch.are_deterministic_algorithms_enabled():  # off by default: the call imports
        torch.use_deterministic_algorithms(False)  # inductor, 2.5 s in every eager process
    cache = fresh_cache_dir("inductor")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache  # cold compiles: no earlier process's code
    os.environ["TRITON_CACHE_DIR"] = os.path.join(cache, "triton")
    accelerator = {}
    if torch.cuda.is_available():
        accelerator = {"torch.cuda": str(torch.version.cuda),
                       "torch.cudnn": str(torch.backends.cudnn.version()),
                       "torch.gpu": torch.cuda.get_device_name(0)}
    return accelerator | {
        "torch.num_threads": str(torch.get_num_threads()),
        "torch.allow_tf32": "False",
        "torch.float32_matmul_precision": torch.get_float32_matmul_precision(),
        "torch.mkldnn_fp32_precision": f"matmul={torch.backends.mkldnn.matmul.fp32_precision}, "
                                       f"conv={torch.backends.mkldnn.conv.fp32_precision}",
        "torch.version": torch.__version__,
        "torch.inductor_cache": f"fresh per process ({cache_files(cache)} files at start)",
    }


class HwcFlatten(nn.Module):
    """Flatten NCHW activations in NHWC order, the canonical layout of the dense kernel."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.permute(0, 2, 3, 1).flatten(1)


def sequential_model(layers: list[Layer]) -> nn.Sequential:
    """The mlp/cnn workloads' model holding exactly `layers` (canonical layouts converted)."""
    modules: list[nn.Module] = []
    for index, layer in enumerate(layers):
        last = index == len(layers) - 1
        if layer.kind == "conv":
            conv = nn.Conv2d(layer.kernel.shape[2], layer.kernel.shape[3], 3, padding=1)
            conv.weight.data = torch.from_numpy(layer.kernel.transpose(3, 2, 0, 1).copy())
            conv.bias.data = torch.from_numpy(layer.bias.copy())
            modules += [conv, nn.ReLU(), nn.MaxPool2d(2)]
            continue
        if index > 0 and layers[index - 1].kind == "conv":
            modules.append(HwcFlatten())
        dense = nn.Linear(*layer.kernel.shape)
        dense.weight.data = torch.from_numpy(layer.kernel.T.copy())
        dense.bias.data = torch.from_numpy(layer.bias.copy())
        modules.append(dense)
        if not last:
            modules.append(nn.ReLU())
    return nn.Sequential(*modules)


def layered_model(workload: Workload, layers: list[Layer],
                  input_shape: tuple[int, ...]) -> nn.Sequential:
    """The builder of the mlp and cnn workloads, whose weights are `layers`."""
    return sequential_model(layers)


def family_model(workload: Workload, start: ModelStart,
                 input_shape: tuple[int, ...]) -> nn.Module:
    """The builder of the dlbench.runner.models families: the definition with the shared weights."""
    from dlbench.runner.models import pytorch as models

    return models.build(start.definition, start.weights, CONVENTIONS)


#: Workload model kind -> builder(workload, layers, input_shape): the same signature in every
#: adapter; every other kind is a dlbench.runner.models family (dlbench.runner.models.families), built by
#: family_model from its ModelStart in place of layers.
BUILDERS: dict[str, Callable[..., nn.Module]] = {
    "mlp": layered_model, "cnn": layered_model}


def to_tensor(x: np.ndarray, device: torch.device) -> torch.Tensor:
    """NHWC images become NCHW; flat inputs stay as they are."""
    tensor = torch.from_numpy(x)
    if tensor.ndim == 4:
        tensor = tensor.permute(0, 3, 1, 2).contiguous()
    return tensor.to(device)


class TorchAdapter(Adapter):
    """PyTorch on the cell's device."""

    def __init__(self, spec: CellSpec) -> None:
        super().__init__(spec)
        self.device = torch.device("cuda" if spec.device == "cuda" else "cpu")

    accelerators_seen = "PyTorch sees {seen} CUDA devices, the cell needs {needed}"

    def visible_accelerators(self) -> int:
        return torch.cuda.device_count()

    def configure(self) -> dict[str, str]:
        return super().configure() | configure_torch(self.spec)

    def build_model(self, workload: Workload, layers: list[Layer],
                    input_shape: tuple[int, ...]) -> nn.Module:
        return BUILDERS.get(workload.model, family_model)(workload, layers, input_shape)

    def to_device(self, x: np.ndarray) -> torch.Tensor:
        return to_tensor(x, self.device)

    def sync(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize()

    def warm_up(self) -> None:
        model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2)).to(self.device)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        x = torch.zeros(2, 4, device=self.device)
        nn.functional.cross_entropy(model(x), torch.zeros(2, dtype=torch.long,
                                                          device=self.device)).backward()
        optimizer.step()
        with torch.inference_mode():
            model(x).cpu()

    def reset_peak(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.reset_peak_memory_stats()

    def accelerator_peak_mib(self) -> float | None:
        if self.device.type == "cuda":
            return torch.cuda.max_memory_allocated() / 2**20
        return None

    def compile_cache_files(self) -> int | None:
        return cache_files(os.environ["TORCHINDUCTOR_CACHE_DIR"])


class TorchTrainer:
    """The workload's model trained with torch.optim.SGD in a plain loop; `compiled` wraps
    the whole step (zero_grad, forward, loss, backward, optimizer step) in torch.compile."""

    def __init__(self, adapter: TorchAdapter, workload: Workload,
                 input_shape: tuple[int, ...], compiled: bool = False) -> None:
        self.adapter, self.workload, self.input_shape = adapter, workload, input_shape
        self.device = adapter.device
        self.batch_size = adapter.spec.batch_size
        self.loss_fn = nn.CrossEntropyLoss()
        self.compiled = compiled

    def reset(self, layers: list[Layer]) -> None:
        model = self.adapter.build_model(self.workload, layers, self.input_shape)
        self.model = model.to(self.device)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=self.workload.learning_rate,
                                         momentum=self.workload.momentum)
        self.step_fn = self._step
        if self.compiled:
            torch._dynamo.reset()  # a new compilation per model; inductor's caches are kept
            self.step_fn = torch.compile(self._step)
        self.adapter.reset_peak()

    def _step(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """One SGD step; the loss, detached, still on the device."""
        self.optimizer.zero_grad(set_to_none=True)
        loss = self.loss_fn(self.model(x), y)
        loss.backward()
        self.optimizer.step()
        return loss.detach()

    def train_epoch(self, x: np.ndarray, y: np.ndarray) -> float:
        self.model.train()
        inputs, labels = to_tensor(x, self.device), torch.from_numpy(y).to(self.device)
        losses, sizes = [], []  # summed once after the epoch: no extra ops between steps
        for start in range(0, len(labels), self.batch_size):
            batch_y = labels[start:start + self.batch_size]
            losses.append(self.step_fn(inputs[start:start + self.batch_size], batch_y))
            sizes.append(len(batch_y))
        weights = torch.tensor(sizes, dtype=torch.float32, device=self.device)
        total = (torch.stack(losses).float() * weights).sum()
        mean_loss = (total / len(labels)).item()  # .item() synchronises the device
        self.adapter.sync()
        return mean_loss

    def train(self, epochs: int, epoch_data: EpochData, clock: EpochClock) -> None:
        loop_epochs(self, epochs, epoch_data, clock)

    @torch.inference_mode()
    def accuracy(self, x: np.ndarray, y: np.ndarray) -> float:
        """Test accuracy, evaluated at the training batch size without gradients, so that
        evaluating never needs more memory than a training step (working memory's region
        holds the evaluation after each epoch)."""
        self.model.eval()
        with torch.no_grad():
            predictions = np.concatenate([
                self.model(to_tensor(x[i:i + self.batch_size], self.device)).argmax(dim=1)
                .cpu().numpy() for i in range(0, len(x), self.batch_size)])
        return float((predictions == y).mean())

    def peak_memory_mib(self) -> float | None:
        return self.adapter.accelerator_peak_mib()


ADAPTER = TorchAdapter
