"""`dlbench run` (with its looks), `run --remeasure`, `dlbench reproduce`."""
