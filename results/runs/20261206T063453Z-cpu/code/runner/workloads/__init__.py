"""What a cell runs: workloads (model x dataset x hyper-parameters), datasets."""
