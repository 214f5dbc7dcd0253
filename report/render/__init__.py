"""Rendering parts: jinja2 environment, charts, static SVGs, reader's words."""
