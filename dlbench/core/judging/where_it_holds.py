"""Where an answer holds: one question group's answers on several machine kinds, read
together.

Each run's answer is judged within that run (dlbench/core/judging/verdict_engine.py); this rule only
reads those answers side by side and never pools processes across runs, since absolute times
belong to one machine and ratios to one machine kind. The unit across machines is the kind
(dlbench/core/machine/machines.py): two runs of one kind are replicates of that kind, never two
machines, so run-to-run noise is not read as machine dependence. A kind's answer is its
runs' answer where they agree (the same outcome and winner; each lead the hull of their
intervals); where they disagree the kind decided nothing (its runs disagree: a decided answer
is one a rerun reproduces). The outcomes, across kinds:

- ONE_MACHINE: fewer than two machines answered: too few machines to say.
- EVERYWHERE: every machine that answered decided the same winner, and the winner's lead
  over each other contender is alike on every machine (within noise).
- MARGIN_DEPENDS: the same winner everywhere, but its lead over some contender differs
  beyond noise between two kinds: their adjusted intervals of that lead are disjoint
  and the leads differ by more than the practical threshold. Leads are compared between
  every two kinds that decided the winner, so a WHERE_DECIDED reading names such a
  contender too.
- WINNER_DEPENDS: two machines decided different winners.
- WHERE_DECIDED: one winner, decided on some machines; the others found no meaningful
  difference or could not decide.
- NO_DIFFERENCE_EVERYWHERE: every machine that answered found no meaningful difference.
- DECIDED_NOWHERE: machines answered, none decided (each inconclusive or undecided, or a mix
  with no meaningful difference).

A machine whose answer is "not measurable here" or "insufficient data" did not answer: it is
named apart and counts for none of the outcomes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from dlbench.core.judging.outcomes import NOT_ANSWERED, Outcome



@dataclass(frozen=True)
class Lead:
    """How many times better the machine's best is than one other contender, with the
    adjusted interval of that lead (all >= 1 when the best leads meaningfully)."""

    value: float
    low: float
    high: float


@dataclass(frozen=True)
class MachineAnswer:
    """One machine's answer to one question group, as its verdict recorded it."""

    machine: str  # the machine in words, unique within the release
    outcome: Outcome  # one of outcomes.ANSWER
    best: str  # the contender ranked first (decided or not); empty when none
    winner: str = ""  # the decided winner; empty unless outcome is WINNER
    leads: Mapping[str, Lead] = field(default_factory=dict)  # other contender -> lead
    threshold: float = 0.05  # the family's practical threshold on this machine
    kind: str = ""  # the machine kind in words: runs of one kind are its replicates

    @property
    def kind_name(self) -> str:
        """The kind this answer is a replicate of (the machine itself when not given)."""
        return self.kind or self.machine

    @property
    def answered(self) -> bool:
        """Whether the machine measured the question (it may still be undecided)."""
        return self.outcome not in NOT_ANSWERED


@dataclass(frozen=True)
class WhereItHolds:
    """The reading of one question group across machines."""

    holds: Outcome
    winner: str  # the winner where it is one everywhere it was decided; else empty
    answers: tuple[MachineAnswer, ...]  # every kind's answer, in the release's order
    margin_against: str = ""  # the contender whose lead differs between two kinds
    runs: tuple[MachineAnswer, ...] = ()  # every run's own answer, in the release's order

    @property
    def replicated(self) -> tuple[tuple[str, bool], ...]:
        """(kind, whether its runs agree) for each kind answered by two or more runs."""
        return tuple((kind, agree) for kind, agree in
                     ((kind, _runs_agree([r for r in self.runs if r.kind_name == kind]))
                      for kind in dict.fromkeys(r.kind_name for r in self.runs))
                     if agree is not None)

    @property
    def answered(self) -> tuple[MachineAnswer, ...]:
        """The machines that measured the question."""
        return tuple(a for a in self.answers if a.answered)

    @property
    def not_answered(self) -> tuple[MachineAnswer, ...]:
        """The machines that could not measure it (not measurable, one contender only)."""
        return tuple(a for a in self.answers if not a.answered)


def where_it_holds(answers: Sequence[MachineAnswer]) -> WhereItHolds:
    """Read one question group's per-run answers together: each kind's runs as one answer
    (kind_answer), then across kinds (the module's rule)."""
    runs = tuple(answers)
    kinds = tuple(kind_answer([r for r in runs if r.kind_name == kind])
                  for kind in dict.fromkeys(r.kind_name for r in runs))
    return replace(_across_kinds(kinds), runs=runs)


def _across_kinds(answers: tuple[MachineAnswer, ...]) -> WhereItHolds:
    answered = [a for a in answers if a.answered]
    if len(answered) < 2:
        return WhereItHolds(Outcome.ONE_MACHINE, _only_winner(answered), answers)
    winners = list(dict.fromkeys(a.winner for a in answered if a.outcome is Outcome.WINNER))
    if len(winners) > 1:
        return WhereItHolds(Outcome.WINNER_DEPENDS, "", answers)
    if not winners:
        ties = all(a.outcome is Outcome.NO_MEANINGFUL_DIFFERENCE for a in answered)
        return WhereItHolds(Outcome.NO_DIFFERENCE_EVERYWHERE if ties else Outcome.DECIDED_NOWHERE,
                            "", answers)
    winner = winners[0]
    against = margin_differs([a for a in answered if a.outcome is Outcome.WINNER])
    if any(a.outcome is not Outcome.WINNER for a in answered):
        return WhereItHolds(Outcome.WHERE_DECIDED, winner, answers, against)
    if against:
        return WhereItHolds(Outcome.MARGIN_DEPENDS, winner, answers, against)
    return WhereItHolds(Outcome.EVERYWHERE, winner, answers)


def kind_answer(runs: Sequence[MachineAnswer]) -> MachineAnswer:
    """One kind's answer from its runs' (its replicates'): theirs where every run that
    answered agrees on the outcome and winner, each lead the hull of their intervals; where
    they disagree, undecided on the kind."""
    kind = runs[0].kind_name
    answered = [r for r in runs if r.answered]
    if len(answered) < 2:
        return replace((answered or list(runs))[0], machine=kind, kind=kind)
    if not _runs_agree(answered):
        bests = {r.best for r in answered}
        return MachineAnswer(kind, Outcome.INCONCLUSIVE, bests.pop() if len(bests) == 1 else "",
                             threshold=max(r.threshold for r in answered), kind=kind)
    others = set.intersection(*(set(r.leads) for r in answered))
    leads = {other: _hull([r.leads[other] for r in answered]) for other in sorted(others)}
    first = answered[0]
    return MachineAnswer(kind, first.outcome, first.best, first.winner, leads,
                         max(r.threshold for r in answered), kind)


def _runs_agree(runs: Sequence[MachineAnswer]) -> bool | None:
    """Whether a kind's runs that answered agree on the outcome and winner (None for fewer
    than two such runs)."""
    answered = [r for r in runs if r.answered]
    if len(answered) < 2:
        return None
    return len({(r.outcome, r.winner) for r in answered}) == 1


def _hull(leads: Sequence[Lead]) -> Lead:
    """The replicates' leads as one: their geometric mean, inside the hull of their
    intervals (a margin compared between kinds must differ beyond every replicate)."""
    values = [lead.value for lead in leads]
    centre = (math.exp(sum(math.log(v) for v in values) / len(values))
              if all(v > 0 for v in values) else math.nan)
    return Lead(centre, min(lead.low for lead in leads), max(lead.high for lead in leads))


def _only_winner(answered: Sequence[MachineAnswer]) -> str:
    return answered[0].winner if answered and answered[0].outcome is Outcome.WINNER else ""


def margin_differs(answered: Sequence[MachineAnswer]) -> str:
    """The first contender (in name order) whose lead differs beyond noise between two
    machines that both decided the same winner; empty when every lead is alike."""
    others = sorted({other for a in answered for other in a.leads})
    for other in others:
        leads = [(a.leads[other], a.threshold) for a in answered if other in a.leads]
        for i, (first, first_threshold) in enumerate(leads):
            for second, second_threshold in leads[i + 1:]:
                threshold = max(first_threshold, second_threshold)
                if _apart(first, second, threshold) or _apart(second, first, threshold):
                    return other
    return ""


def _apart(smaller: Lead, larger: Lead, threshold: float) -> bool:
    """Whether `larger`'s lead is beyond `smaller`'s: disjoint intervals and a lead more
    than the practical threshold larger."""
    values = (smaller.value, smaller.high, larger.value, larger.low)
    if any(math.isnan(v) or v <= 0 for v in values):
        return False
    return larger.low > smaller.high and larger.value > smaller.value * (1 + threshold)


def lead_range(reading: WhereItHolds) -> tuple[float, float] | None:
    """The smallest and largest lead of the winner over its closest contender, across the
    machines that decided it; None when no machine decided a winner."""
    closest = [min(a.leads.values(), key=lambda lead: lead.value).value
               for a in reading.answered if a.outcome is Outcome.WINNER and a.leads]
    closest = [value for value in closest if not math.isnan(value)]
    return (min(closest), max(closest)) if closest else None
