"""Declarations: what dlbench measures, each declared once (experiments, systems, runtimes,
modes, metrics) and a cell's identity and measured batch."""
