"""Launching one worker process per cell (or per shared batch): the parent's side of a
process: its scratch folder, timeout, the machine read around it, and stop requests."""
