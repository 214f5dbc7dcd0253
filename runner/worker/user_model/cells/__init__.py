"""A user's own model (`dlbench run --model`): the code each framework's worker runs for the
model-parity, model-inference and model-training cells that dlbench.runner.driver.user_model.plan plans.
No suite plans these cells: only a run given --model does."""
