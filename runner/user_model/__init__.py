"""A user's own model (`dlbench run --model`): checked, built once, planned as cells."""
