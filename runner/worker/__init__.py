"""The worker: the measured process. Its entry point (entry) reads each cell's spec, runs the
experiment's framework code through the harness and adapters, and writes the outcome with its
code record. It never imports the driver side; the two meet through dlbench.runner.cell."""
