"""Measurement: plans cells, measures each in worker processes, stores their records."""
