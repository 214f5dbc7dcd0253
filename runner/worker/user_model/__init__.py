"""A user's own model in the worker: built once in a process of its own (build_once), then
measured by every backend's worker (cells/). The driver's side: dlbench.runner.driver.user_model."""
