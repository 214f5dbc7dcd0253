#!/usr/bin/env bash
# Errata on release 2027.02 for each of its problems release 2027.03 corrects (issue 38).
#
# Run once, AFTER `dlbench publish 2027.03 ...`: `dlbench erratum --superseded-by` refuses a
# release that is not published yet (report/site/errata.py, append_erratum). Errata are
# append-only, so running this twice appends every entry twice: the guard below refuses a
# second run. Then rebuild and deploy 2027.02 (`dlbench deploy 2027.02`) and commit its
# errata.yml.
#
#   scripts/errata_2027_02.sh            (RESULTS_DIR=DIR: another results folder; DLBENCH="CMD ARGS")
set -euo pipefail

DLBENCH="${DLBENCH:-.venv/bin/dlbench}"
RESULTS_DIR="${RESULTS_DIR:-results}"
ERRATA="$RESULTS_DIR/releases/2027.02/errata.yml"

if grep -q "superseded_by: '\?2027.03" "$ERRATA" 2>/dev/null; then
  echo "errata_2027_02.sh: $ERRATA already names 2027.03; not appending twice" >&2
  exit 2
fi

erratum() {  # title wrong correction
  $DLBENCH erratum 2027.02 --results-dir "$RESULTS_DIR" --title "$1" --wrong "$2" --correction "$3" \
      --superseded-by 2027.03
}

erratum "The headline counted training throughput as answers" \
  "The home page's headline counted 42 answers and 16 winners. Five of those answers (four \
winners) were training throughput, which is derived from the steady epoch time and repeats \
its test, so they were counted twice." \
  "Counting tested answers only, 2027.02 answers 37 questions and names 12 winners. From \
2027.03 a derived metric is shown but not counted as a test of its own. No measurement changed."

erratum "A leader chosen by the median, its ratio by the geometric mean" \
  "An answer's leader was picked by the median of its processes while its ratio was the \
ratio of geometric means, so answers read 'fp32 leads bf16 by 0.995x' and 'bf16 leads fp32 by \
0.879x': the side named as leading was the slower by the ratio printed." \
  "From 2027.03 the leader is chosen by the geometric mean, the estimator its ratio and its \
test use. In 2027.02 a ratio below 1 means the other side led."

erratum "Words that said more than the numbers" \
  "The ResNet accuracy answers said 'a deterministic rerun' although every process had its \
own seed (every process scored 1.000); answers said 'about 15 processes would decide it' \
where accuracy was identical on every seed, and 'about 364 processes per cell would decide \
it', far beyond any run of this project." \
  "2027.03 tests accuracy paired by seed (a difference identical on every seed is exact, not \
a rerun), and says how many processes would decide an answer only within ten times those \
measured; beyond that it says the answer is not decidable at this noise."

erratum "One A/A pair set every threshold" \
  "The practical threshold of each experiment and metric was the noise floor of one A/A \
control pair: the digits MLP's twin, 1.29x apart, set 29% for every inference latency answer, \
the ResNet's included, so a difference under 29% could not be decided anywhere." \
  "From 2027.03 the noise floor is the median of many estimates: the A/A control pairs and a \
split-half pseudo A/A of every cell with 4 or more processes, per run, experiment and metric; \
the threshold is 5% or that floor where larger."

erratum "Throughput filed under batch size 1" \
  "Inference throughput was measured at a serving batch of 128 but shown under 'batch size \
1', the cell's latency batch, so 'which framework serves the most samples per second' read as \
a question about single requests; exported artifacts' latency was filed the same way." \
  "From 2027.03 every value is labelled with the batch it was measured at: throughput under \
its serving batch, latency under batch 1. The values of 2027.02 are unchanged; only their \
batch label was wrong."

erratum "The claims page judged by another rule than the home page" \
  "The claims page judged with its own rule (the ratio of medians, a bootstrap interval, a \
fixed 5% threshold, significance after Holm's correction over every comparison on the page), \
not the home page's, so a pair could win on the claims page and be undecided on the home page." \
  "From 2027.03 the claims page, dlbench compare, dlbench reproduce and the home page judge \
with one rule (dlbench/core/decisions.py: the ratio of geometric means, a minimum-effect test \
at each pair's threshold, one Holm step-down); on the claims page the family is the page."
