"""A user's own model (`dlbench run --model`), the driver's side: planned as cells (plan),
prepared once in a process of its own (preparation, which runs
dlbench.runner.worker.user_model.build_once), and resumed (resume)."""
