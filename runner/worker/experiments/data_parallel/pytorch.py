"""data-parallel in PyTorch: DistributedDataParallel, one process per replica.

The N replicas are processes spawned with torch.multiprocessing from the cell's worker and
meet on a loopback TCP port (gloo on the CPU, nccl on GPUs); the 1-worker run is a
world of size 1 in the cell's own process.
"""

from __future__ import annotations

import os
from dataclasses import asdict

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from dlbench.runner.worker.adapters.pytorch import TorchAdapter, to_tensor
from dlbench.runner.worker.experiments.data_parallel.protocol import (EpochPlan, TrainingRun, dp_fairness,
                                                       epoch_plan, free_port,
                                                       measure_data_parallel, replica_threads,
                                                       shard)
from dlbench.runner.worker.harness import open_cell
from dlbench.runner.worker.harness.data import CellData
from dlbench.runner.worker.measure import NS_PER_S, clock_ns
from dlbench.runner.cell.outcome import CellOutcome
from dlbench.runner.cell.spec import CellSpec


def train_replica(rank: int, workers: int, port: int, spec: CellSpec, data: CellData,
                  plan: EpochPlan, started, results) -> None:
    """One DDP replica: join the group, train once, rank 0 reports the run."""
    torch.set_num_threads(replica_threads(spec, workers))
    cuda = spec.device == "cuda"
    device = torch.device(f"cuda:{rank}" if cuda else "cpu")
    if cuda:
        torch.cuda.set_device(device)  # nccl's collectives run on the current device
    started.wait()  # every replica is up: the group's setup is timed from here
    start = clock_ns()
    dist.init_process_group("nccl" if cuda else "gloo", init_method=f"tcp://127.0.0.1:{port}",
                            rank=rank, world_size=workers)
    group_s = (clock_ns() - start) / NS_PER_S
    x_train, y_train = to_tensor(data.x_train, device), torch.from_numpy(data.dataset.y_train)
    y_train = y_train.to(device)
    wrap_start = clock_ns()
    module = TorchAdapter(spec).build_model(data.workload, data.initial_layers(), data.input_shape)
    model = DistributedDataParallel(module.to(device), device_ids=[rank] if cuda else None)
    setup_s = group_s + (clock_ns() - wrap_start) / NS_PER_S
    optimizer = torch.optim.SGD(model.parameters(), lr=data.workload.learning_rate,
                                momentum=data.workload.momentum)
    times, loss = _train(model, optimizer, x_train, y_train, plan, rank, workers, device)
    if rank == 0:
        run = TrainingRun(workers, tuple(times), plan.samples_per_epoch,
                          _accuracy(model.module, data, device), loss, setup_s)
        results.put((asdict(run), start))
    del model, optimizer  # DDP's reducer holds the group: release it before the group goes
    leave_group(started)


def leave_group(replicas) -> None:
    """Tear the group down in step with every replica, then wait for all before exiting.

    A replica that leaves early (closing its gloo connections, and on rank 0 the TCP store
    every replica's group was built on) while another is still in its last work or its own
    teardown made gloo abort in the other ("terminate called without an active
    exception", SIGABRT): so a barrier over the group before destroying it, and the
    replicas' own barrier after, so no process exits while a peer still tears down."""
    dist.barrier()
    dist.destroy_process_group()
    replicas.wait()


def _train(model: nn.Module, optimizer, x: torch.Tensor, y: torch.Tensor, plan: EpochPlan,
           rank: int, workers: int, device: torch.device) -> tuple[list[float], float]:
    loss_fn, times = nn.CrossEntropyLoss(), []
    for epoch_batches in plan.batches:
        dist.barrier()  # every replica starts the epoch's clock together
        start = clock_ns()
        total = torch.zeros((), device=device)
        for batch in epoch_batches:
            index = torch.from_numpy(shard(batch, rank, workers)).to(device)
            optimizer.zero_grad(set_to_none=True)
            loss = loss_fn(model(x[index]), y[index])  # DDP averages gradients over replicas
            loss.backward()
            optimizer.step()
            total += loss.detach()
        mean_loss = (total / len(epoch_batches)).item()  # .item() synchronises the device
        times.append((clock_ns() - start) / NS_PER_S)
    return times, mean_loss


@torch.inference_mode()
def _accuracy(model: nn.Module, data: CellData, device: torch.device) -> float:
    model.eval()
    predictions = model(to_tensor(data.x_test, device)).argmax(dim=1).cpu().numpy()
    return float((predictions == data.dataset.y_test).mean())


def train(spec: CellSpec, data: CellData, workers: int) -> TrainingRun:
    """One training with `workers` replicas: in this process for 1, spawned processes else."""
    plan = epoch_plan(len(data.dataset.y_train), spec.batch_size, int(spec.params["epochs"]),
                      data.seed)
    context = mp.get_context("spawn")
    results = context.SimpleQueue()
    args = (workers, free_port(), spec, data, plan, context.Barrier(workers), results)
    start = clock_ns()
    if workers == 1:
        train_replica(0, *args)
        torch.set_num_threads(spec.threads)
    else:
        mp.spawn(train_replica, args=args, nprocs=workers, join=True)
    run, ready = results.get()
    launch_s = (ready - start) / NS_PER_S if workers > 1 else None
    return TrainingRun(**{**run, "epoch_times": tuple(run["epoch_times"]), "launch_s": launch_s})


def run(spec: CellSpec) -> CellOutcome:
    cell = open_cell(spec)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    backend = "nccl" if spec.device == "cuda" else "gloo"
    fairness = dp_fairness(
        cell,
        strategy=f"DistributedDataParallel over {backend}, eager",
        replicas=(f"{spec.workers} process(es) spawned with torch.multiprocessing on loopback "
                  f"TCP, each with {replica_threads(spec, spec.workers)} thread(s)"
                  + (", one GPU each" if spec.device == "cuda" else " on the CPU")
                  + "; dp_setup_time includes the first DistributedDataParallel "
                    "construction, which imports torch._dynamo and sympy once per process"),
        timer_includes="every replica's forward/backward (with DDP's gradient all-reduce) "
                       "and SGD step over its shard of each global batch, timed on rank 0 "
                       "from a barrier at the epoch start to reading the epoch loss",
        settings={"torch.distributed.backend": backend},
    )
    return measure_data_parallel(cell, lambda workers: train(spec, cell.data, workers), fairness)
