"""The question each experiment answers: the one place it is written.

The runner's experiments and the site (page titles, navigation, home page) read it here;
the order is the suite order, which the site's navigation follows.
"""

from __future__ import annotations

QUESTIONS: dict[str, str] = {
    "training": (
        "Which framework trains the same model fastest, and do they reach the same accuracy?"
    ),
    "inference": (
        "Which framework predicts fastest, per sample and in bulk, on its plain and its fast "
        "path?"
    ),
    "precision": (
        "Does mixed precision (bf16, fp16) make training and inference faster or leaner, what "
        "does it cost in accuracy, and does each framework support it?"
    ),
    "execution-mode": (
        "Do graph and compiled modes train faster than eager execution, and after how many "
        "steps has compilation paid for itself?"
    ),
    "parity": (
        "Do the frameworks compute the same function from the same weights, before and after "
        "one optimizer step?"
    ),
    "data-parallel": (
        "How well does each framework's data parallelism scale across workers, and does it "
        "reach the 1-worker accuracy?"
    ),
    "export": (
        "Which export formats work in each framework, do the artifacts compute the same "
        "function, and how fast do they run in their own runtimes?"
    ),
}
