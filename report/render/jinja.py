"""Rendering helpers: the jinja2 environment over templates/ and chart embedding."""

from __future__ import annotations

import hashlib
import html
import json
import re
from dataclasses import dataclass
from pathlib import Path

import altair as alt
import jinja2

from dlbench.core.text.words import plural
from dlbench.report.render.user_text import plain_text, safe_markdown


@dataclass(frozen=True)
class ChartBlock:
    """A chart as the page embeds it, and its spec for the static SVG."""

    chart_id: str
    spec: dict

    @property
    def svg(self) -> str:
        """File name of the static SVG, under site_src/charts/."""
        return f"{self.chart_id}.svg"

    @property
    def html(self) -> str:
        """A div holding the spec in an escaped data attribute (drawn by charts.js)."""
        text = json.dumps(self.spec, sort_keys=True, separators=(",", ":"))
        return (f'<div class="dlbench-chart" id="chart-{self.chart_id}" '
                f'data-spec="{html.escape(text, quote=True)}"></div>')


def chart_block(chart_id: str, chart: alt.TopLevelMixin) -> ChartBlock:
    """Embed an altair chart under a stable ID. Not validated here (a third of a build's
    time): tests/test_site_build.py checks every chart against the Vega-Lite schema."""
    return ChartBlock(slug(chart_id), chart.to_dict(validate=False))


#: Longest slug kept whole (a chart's file name is made of one): a longer one is cut and
#: ends in a hash of the whole, so a machine's long model name still makes a file name.
MAX_SLUG = 120


def slug(text: str) -> str:
    """Lower-case letters, digits and single dashes; at most MAX_SLUG characters."""
    words = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    if len(words) <= MAX_SLUG:
        return words
    return f"{words[:MAX_SLUG - 13].rstrip('-')}-{hashlib.sha256(words.encode()).hexdigest()[:12]}"


def table_cell(value: object) -> str:
    """Text safe inside a Markdown table cell: no pipes, no line breaks."""
    return str(value).replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def attribute(value: object) -> str:
    """Text safe inside a double-quoted HTML attribute of a Markdown table cell: escaped, and
    its pipes as an entity (a bare one would end the cell)."""
    return html.escape(" ".join(str(value).split())).replace("|", "&#124;")


def environment(templates_dir: Path) -> jinja2.Environment:
    """The jinja2 environment: Markdown output, strict about undefined names."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters["cell"] = table_cell
    env.filters["attribute"] = attribute  # a value in an HTML attribute of a table cell
    env.filters["text"] = plain_text  # what a person typed, shown as text
    env.filters["safe_markdown"] = safe_markdown  # what a person wrote in Markdown, sanitised
    env.filters["slug"] = slug
    env.filters["plural"] = plural  # {{ n | plural("cell") }}: "1 cell", "2 cells"
    return env


def render(env: jinja2.Environment, template: str, **context: object) -> str:
    """One template rendered, ending in exactly one newline."""
    return env.get_template(template).render(**context).strip() + "\n"
