"""The home page's verdicts: answers, data, first published."""
