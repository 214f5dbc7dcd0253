"""The one outcome vocabulary: every word a judge can say about a pair, an answer or a claim.

Every judge returns an `Outcome`: the pair rule (dlbench/core/judging/decisions.py), the home
page's answers (report/verdicts/answers.py), defaults-accuracy and precision-accuracy, where an
answer holds across machines, and the claims. A word means one thing wherever it appears
("no meaningful difference" is the same outcome from a pair, an answer and a claim), and each
judge says which of the words it speaks (the tuples below, each in the order a page lists
them). The values are the words the site prints and the tables store (verdicts.csv's
`decision` and `outcome` columns), so they never change without a release note.
"""

from __future__ import annotations

import enum


class Outcome(enum.Enum):
    """What a judge says."""

    # A pair, A against B (decisions.py), and the words every judge shares.
    A_BETTER = "a better"
    B_BETTER = "b better"
    NO_MEANINGFUL_DIFFERENCE = "no meaningful difference"
    DIFFERENT = "different"  # meaningful, for a metric with no better direction
    UNDECIDED = "undecided"  # not significant, yet the interval reaches beyond the threshold
    INCONCLUSIVE = "inconclusive"  # the samples cannot decide (identical repeats, no ratio)
    # An answer to a question on one machine and device.
    WINNER = "winner"
    NOT_MEASURABLE = "not measurable here"
    INSUFFICIENT_DATA = "insufficient data"
    PARITY = "same model from the same start"  # a parity question: no winner, no tie, a figure
    # An A/A control: the rule must never name a winner between a configuration and itself.
    NO_WINNER = "no winner"
    # Defaults-accuracy: the leader against each other system, and the answer.
    LEADER_BETTER = "leader better"
    AT_CEILING = "the task cannot tell them apart"
    AT_CHANCE = "no system learned the task"
    # Precision-accuracy: one system's reduced precision against its fp32.
    LOSES = "loses accuracy"
    GAINS = "gains accuracy"
    MISSED_TARGET = "fp32 missed the target: decides nothing"
    CANNOT_TELL = "cannot tell"  # at the ceiling, at chance, or too few seeds
    # Where an answer holds, read across the machines that answered it.
    ONE_MACHINE = "one machine"
    EVERYWHERE = "everywhere"
    MARGIN_DEPENDS = "margin depends on the machine"
    WINNER_DEPENDS = "winner depends on the machine"
    WHERE_DECIDED = "where decided"
    NO_DIFFERENCE_EVERYWHERE = "no meaningful difference everywhere"
    DECIDED_NOWHERE = "decided nowhere"
    # How B differs from A for one metric of one cell (`dlbench compare`); DIFFERENT is the
    # pair's word, for a metric with no better direction.
    FASTER = "faster"
    SLOWER = "slower"
    BETTER = "better"
    WORSE = "worse"
    NO_SIGNIFICANT_DIFFERENCE = "no significant difference"
    OTHER_MACHINE = "not compared: other machine"  # a speed between machines, not a change
    # A claim on one device.
    SUPPORTED = "supported"
    CONTRADICTED = "contradicted"
    NOT_MEASURED = "not measured in this release"  # no cell of the rule exists: nothing ran


#: What one judged pair says (decisions.py).
PAIR = (Outcome.A_BETTER, Outcome.B_BETTER, Outcome.NO_MEANINGFUL_DIFFERENCE, Outcome.DIFFERENT,
        Outcome.UNDECIDED, Outcome.INCONCLUSIVE)
#: What a home-page answer says (report/verdicts/answers.py).
ANSWER = (Outcome.WINNER, Outcome.NO_MEANINGFUL_DIFFERENCE, Outcome.INCONCLUSIVE,
          Outcome.NOT_MEASURABLE, Outcome.INSUFFICIENT_DATA, Outcome.PARITY)
#: An answer that did not answer the question on its machine.
NOT_ANSWERED = (Outcome.NOT_MEASURABLE, Outcome.INSUFFICIENT_DATA)
#: What an A/A control says (WINNER there is a false winner).
CONTROL = (Outcome.WINNER, Outcome.NO_WINNER)
#: What the defaults-accuracy leader against one other system says.
DEFAULTS_PAIR = (Outcome.LEADER_BETTER, Outcome.NO_MEANINGFUL_DIFFERENCE, Outcome.UNDECIDED)
#: What the defaults-accuracy answer says.
DEFAULTS_ANSWER = (Outcome.WINNER, Outcome.NO_MEANINGFUL_DIFFERENCE, Outcome.UNDECIDED,
                   Outcome.AT_CEILING, Outcome.AT_CHANCE, Outcome.INSUFFICIENT_DATA)
#: What one system's precision-accuracy answer says.
PRECISION_ANSWER = (Outcome.LOSES, Outcome.GAINS, Outcome.NO_MEANINGFUL_DIFFERENCE,
                    Outcome.UNDECIDED, Outcome.MISSED_TARGET, Outcome.CANNOT_TELL)
#: Where an answer holds across machines.
WHERE_IT_HOLDS = (Outcome.ONE_MACHINE, Outcome.EVERYWHERE, Outcome.MARGIN_DEPENDS,
                  Outcome.WINNER_DEPENDS, Outcome.WHERE_DECIDED,
                  Outcome.NO_DIFFERENCE_EVERYWHERE, Outcome.DECIDED_NOWHERE)
#: How B differs from A in `dlbench compare`.
COMPARISON = (Outcome.FASTER, Outcome.SLOWER, Outcome.BETTER, Outcome.WORSE, Outcome.DIFFERENT,
              Outcome.NO_SIGNIFICANT_DIFFERENCE, Outcome.OTHER_MACHINE)
#: What the measurements say of a claim on one device.
CLAIM = (Outcome.SUPPORTED, Outcome.CONTRADICTED, Outcome.INCONCLUSIVE, Outcome.NOT_MEASURABLE,
         Outcome.NOT_MEASURED)
#: Each judge and the words it speaks.
SPOKEN = {"pair": PAIR, "answer": ANSWER, "control": CONTROL, "defaults pair": DEFAULTS_PAIR,
          "defaults answer": DEFAULTS_ANSWER, "precision answer": PRECISION_ANSWER,
          "where it holds": WHERE_IT_HOLDS, "comparison": COMPARISON, "claim": CLAIM}
