"""One worker process: its environment, the worker, timeout, clock, memory, stop."""
