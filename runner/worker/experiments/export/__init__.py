"""The export experiment's code, one module per framework and the protocol they share
(its plan: dlbench.runner.driver.plan.experiments.export)."""
