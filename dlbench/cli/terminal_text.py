"""Text from a run or an archive as a terminal shows it: its control characters (ESC, bidi
overrides, C0/C1) written as escapes, and rich's markup in it not read as markup."""

from __future__ import annotations

from rich.text import Text

from dlbench.core.text.visible import visible_controls


def terminal_text(value: object) -> Text:
    """`value` as rich text that rich prints as it is: no markup, no live control."""
    return Text(visible_controls(str(value)))
