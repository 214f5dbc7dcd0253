"""Planning: a request turned into cells, controls, processes, order, estimate."""
