"""Chart builders: a DataFrame in, an altair chart out; no file I/O here."""

from __future__ import annotations

import json
import textwrap

import altair as alt
import pandas as pd

from dlbench.core.declarations.metrics import get_metric
from dlbench.core.storage.schema import system_label
from dlbench.core.declarations.systems import SYSTEMS

#: A fixed colour per system (its declaration's, dlbench.core.declarations.systems), so a system
#: looks the same in every chart.
SYSTEM_COLOURS = {system.name: system.colour for system in SYSTEMS}
CHART_WIDTH = 560  # used for the static SVG; the interactive chart fills its container
MAX_CURVE_POINTS = 100  # per series: keeps pages small for per-call latencies


def _colour(systems: list[str]) -> alt.Color:
    """Each system's fixed colour; the legend names systems in words, two to a row so it
    fits a phone's width."""
    domain = sorted(set(systems), key=lambda s: (s not in SYSTEM_COLOURS, s))
    palette = [SYSTEM_COLOURS.get(s, "#7f8c8d") for s in domain]
    words = " : ".join(f"datum.label === {json.dumps(s)} ? {json.dumps(system_label(s))}"
                       for s in domain)
    return alt.Color("system:N", scale=alt.Scale(domain=domain, range=palette),
                     legend=alt.Legend(title="framework", orient="bottom", columns=2,
                                       labelExpr=f"{words} : datum.label"))


#: Between a series' system and its variant: an axis label breaks its line there.
SERIES_BREAK = ": "


def series_labels(rows: pd.DataFrame) -> list[str]:
    """Framework names in words; with the variant added to all when a framework has
    several."""
    names = [system_label(str(s)) for s in rows["system"]]
    if rows.groupby("system")["variant"].nunique().max() <= 1:
        return names
    return [f"{s}{SERIES_BREAK}{v}" for s, v in zip(names, rows["variant"], strict=True)]


def lines(title: str, width: int = 40) -> list[str]:
    """A chart title as lines of at most about `width` characters (so a phone shows it
    whole), broken at spaces."""
    return textwrap.wrap(title, width) or [title]


#: Characters per line of an axis label: a wrapped label keeps a phone's plot wide enough.
LABEL_CHARS = 22


def label_lines(label: str, width: int = LABEL_CHARS) -> list[str]:
    """An axis label as lines of at most about `width` characters: a series' system and
    variant (SERIES_BREAK) on lines of their own, each broken at spaces."""
    return [line for part in label.split(SERIES_BREAK) for line in lines(part, width)]


def wrapped_axis(labels: list[str], width: int = LABEL_CHARS) -> alt.Axis:
    """A band axis whose labels are drawn as whole lines, never cut short with an ellipsis
    (Vega's labelLimit): each label's lines are looked up by its text."""
    cases = " : ".join(f"datum.label === {json.dumps(label)} ? "
                       f"{json.dumps(label_lines(label, width))}"
                       for label in dict.fromkeys(labels))
    return alt.Axis(labelLimit=0, labelExpr=f"{cases} : datum.label" if cases
                    else "datum.label")


def label_height(labels: list[str], width: int = LABEL_CHARS) -> int:
    """Lines of the longest wrapped label: how tall each band of the axis must be."""
    return max((len(label_lines(label, width)) for label in labels), default=1)


#: Values spanning this factor or more are drawn on a log axis, so one bar cannot flatten
#: every other.
LOG_SPAN = 100.0


def is_accuracy(metric_name: str) -> bool:
    """An accuracy itself (a fraction of 0-1), not a change of one."""
    return metric_name.endswith("accuracy") and get_metric(metric_name).unit == "fraction"


def spans_decades(values: pd.Series) -> bool:
    """True when positive values span LOG_SPAN or more (none zero or negative)."""
    finite = values.dropna()
    return bool(len(finite)) and finite.min() > 0 and finite.max() / finite.min() >= LOG_SPAN


def empty_reason(rows: pd.DataFrame, metric_name: str) -> str:
    """Why a chart of `rows` would show nothing ('' when it would show something)."""
    medians = rows["median"]
    words = get_metric(metric_name).words
    if medians.isna().all():
        return f"No process recorded a {words} here, so there is no chart."
    if (medians.fillna(0) == 0).all() and (rows["high"].fillna(0) == 0).all():
        return (f"Every {words} here is exactly 0, so a chart would be blank: "
                "the table below lists them.")
    return ""


def _scale(metric_name: str, values: pd.Series) -> alt.Scale:
    """0-1 for an accuracy, log when the values span decades, else linear from zero."""
    if is_accuracy(metric_name):
        return alt.Scale(domain=[0, 1])
    if spans_decades(values):
        return alt.Scale(type="log", zero=False)
    return alt.Scale(zero=True)


def reference_rules(marks: pd.DataFrame) -> alt.LayerChart:
    """Dashed vertical rules with their labels, e.g. chance and the target accuracy.

    `marks`: label, value.
    """
    base = alt.Chart(marks)
    rule = base.mark_rule(strokeDash=[4, 3], color="#555").encode(
        x="value:Q", tooltip=[alt.Tooltip("label:N", title="line"),
                              alt.Tooltip("value:Q", format=".3~g")])
    text = base.mark_text(align="left", dx=3, dy=-4, baseline="bottom", color="#555",
                          fontSize=10).encode(x="value:Q", y=alt.value(0), text="label:N")
    return rule + text


def result_chart(rows: pd.DataFrame, metric_name: str, title: str,
                 marks: pd.DataFrame | None = None) -> alt.LayerChart:
    """Median per framework as a bar (a point on a log axis), the range of the repeats as
    a line; `marks` (label, value) adds reference lines such as chance and the target."""
    metric = get_metric(metric_name)
    data = rows.assign(series=series_labels(rows))[
        ["series", "system", "median", "low", "high", "n", "result_id"]
    ]
    order = list(data.sort_values(["median", "series"])["series"])
    if metric.direction.value == "higher":
        order.reverse()
    scale = _scale(metric_name, pd.concat([data["low"], data["high"], data["median"]]))
    log = scale.type == "log"
    axis_title = metric.label + (" · log scale" if log else "")
    axis_x = alt.X("median:Q", title=lines(axis_title, 34), scale=scale,
                   axis=alt.Axis(tickCount=6, labelOverlap=True, format="~g"))
    tall = label_height(order)
    y = alt.Y("series:N", sort=order, title=None, axis=wrapped_axis(order))
    tooltip = [
        alt.Tooltip("series:N", title="framework"),
        alt.Tooltip("median:Q", title=f"median ({metric.unit})", format=".4~g"),
        alt.Tooltip("low:Q", title="min", format=".4~g"),
        alt.Tooltip("high:Q", title="max", format=".4~g"),
        alt.Tooltip("n:Q", title="processes"),
        alt.Tooltip("result_id:N", title="result ID"),
    ]
    base = alt.Chart(data)
    centre = base.mark_point(filled=True, size=70) if log else base.mark_bar()
    bars = centre.encode(x=axis_x, y=y, color=_colour(list(data["system"])), tooltip=tooltip)
    spread = base.mark_rule(color="black", strokeWidth=1.5).encode(
        x=alt.X("low:Q", title=lines(axis_title, 34), scale=scale), x2="high:Q", y=y
    )
    layers = [bars, spread]
    if marks is not None and len(marks):
        layers.append(reference_rules(marks))
    shape = "point" if log else "bar"
    return alt.layer(*layers).properties(
        title=alt.TitleParams(lines(title), subtitle=[
            f"{shape}: median; line: min–max of processes", metric.direction.phrase],
            anchor="start", frame="bounds"),
        width="container", height=max(60, (14 * tall + 12) * len(data)),
    )


def curve_points(observations: pd.DataFrame, max_points: int = MAX_CURVE_POINTS) -> pd.DataFrame:
    """Median over repeats per step and series; long curves are cut into at most
    `max_points` equal buckets of steps, each shown at its first step with its median."""
    frame = observations.assign(series=series_labels(observations),
                                step=observations["step"].astype(int))
    span = int(frame["step"].max()) + 1
    width = max(1, -(-span // max_points))  # ceiling division
    frame = frame.assign(step=frame["step"] // width * width)
    data = frame.groupby(["series", "system", "variant", "step"])["value"].median().reset_index()
    return data.rename(columns={"value": "median"})


def curve_chart(observations: pd.DataFrame, metric_name: str, title: str) -> alt.Chart:
    """Median over repeats per step (epoch, call or training step), one line per series."""
    metric = get_metric(metric_name)
    data = curve_points(observations)
    unit = "epoch" if metric_name.startswith("epoch_") else "step"
    bucket = int(data["step"].drop_duplicates().sort_values().diff().max() or 1) \
        if data["step"].nunique() > 1 else 1
    subtitle = f"median of repeats · {metric.direction.phrase}"
    if bucket > 1:
        subtitle += f" · each point: median of {bucket} {unit}s"
    return alt.Chart(data).mark_line(point=True).encode(
        x=alt.X("step:Q", title=f"{unit} (0 is the first)", axis=alt.Axis(tickMinStep=1)),
        y=alt.Y("median:Q", title=metric.label),
        color=_colour(list(data["system"])),
        # one variant a line, whole: an A/A twin's label ends in 'A/A control' (issue 53)
        strokeDash=alt.StrokeDash("variant:N", legend=alt.Legend(title="variant", orient="top",
                                                                 columns=1, labelLimit=300))
        if data["series"].ne(data["system"]).any() else alt.Undefined,
        detail="series:N",
        tooltip=[alt.Tooltip("series:N", title="framework"),
                 alt.Tooltip("step:Q", title=unit),
                 alt.Tooltip("median:Q", title=f"median ({metric.unit})", format=".4~g")],
    ).properties(title=alt.TitleParams(lines(title), subtitle=lines(subtitle, 50),
                                       anchor="start", frame="bounds"),
                 width="container", height=240)


def static_spec(spec: dict) -> dict:
    """The same spec with a fixed width, for rendering to a static SVG."""
    fixed = dict(spec)
    fixed["width"] = CHART_WIDTH
    return fixed


def ratio_chart(frame: pd.DataFrame, title: str) -> alt.LayerChart:
    """A claim's ratios with their 95% intervals; the band marks the practical threshold.

    `frame`: label, ratio, low, high (ratio of the claimed-better side over the other).
    """
    order = list(frame["label"])
    x = alt.X("ratio:Q", title="ratio (1 = no difference)", scale=alt.Scale(type="log"))
    y = alt.Y("label:N", sort=order, title=None, axis=wrapped_axis(order))
    base = alt.Chart(frame)
    band = alt.Chart(pd.DataFrame({"low": [1 / 1.05], "high": [1.05]})).mark_rect(
        opacity=0.15, color="grey").encode(x="low:Q", x2="high:Q")
    intervals = base.mark_rule(strokeWidth=1.5).encode(
        x=alt.X("low:Q", title="ratio (1 = no difference)"), x2="high:Q", y=y)
    points = base.mark_point(filled=True, size=45).encode(
        x=x, y=y, tooltip=[alt.Tooltip("label:N", title="compared"),
                           alt.Tooltip("ratio:Q", format=".3~g"),
                           alt.Tooltip("low:Q", title="95% CI low", format=".3~g"),
                           alt.Tooltip("high:Q", title="95% CI high", format=".3~g")])
    return (band + intervals + points).properties(
        title=alt.TitleParams(lines(title), subtitle=[
            "point: ratio of medians (first / second)", "line: 95% interval",
            "grey band: within 5%, no meaningful difference"], anchor="start", frame="bounds"),
        width="container", height=max(40, (14 * label_height(order) + 8) * len(order)))
