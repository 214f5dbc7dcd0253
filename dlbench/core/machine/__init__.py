"""The machine: its kind, its CPU's flags, its arithmetic bound and the FLOP/s cells reach."""
