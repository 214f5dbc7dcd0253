"""The shared model: metrics, tables, results layout, identity, statistics, verdict rule."""
