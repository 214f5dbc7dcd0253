"""The driver: the parent process that plans cells, launches a worker process per cell,
reads the machine, stores the records and runs the commands. It never imports the worker side;
the two meet through dlbench.runner.cell."""
