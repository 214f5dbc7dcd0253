"""The cell: what a worker process is asked to measure and what it reports back."""
