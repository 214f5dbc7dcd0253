"""The machine measured on: its environment record, its load, its lock."""
