"""A release's factual figures computed from its data, and its published notes read against
them (a note's number that the data contradict is found by a test, not by a reader)."""
