"""The run directory: process records with their code files, the run's tables."""
