"""The home page's verdicts: answers, conditions, targets, data, first published."""
