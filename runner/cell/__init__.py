"""The cell: what a worker process is asked to measure and what it reports back (spec,
outcome), the environment it runs under, the systems a spec names and a user's model
request: the only runner/ code both the driver and the worker import."""
