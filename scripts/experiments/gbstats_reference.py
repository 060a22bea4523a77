#!/usr/bin/env python3
"""Writes Tests/Fixtures/experiments/gbstats-0.8.0.json: GrowthBook's gbstats 0.8.0 results
(TwoSidedTTest, SequentialTwoSidedTTest; relative and absolute) on random per-installation
aggregates, and its sample-ratio check (check_srm) on random splits: the reference
EffectTestTests compares ModelDepot's arithmetic with.

    python3 -m venv .build/gbstats && .build/gbstats/bin/pip install gbstats==0.8.0
    .build/gbstats/bin/python scripts/experiments/gbstats_reference.py

The aggregates come from real samples (log-normal latencies, Poisson counts, Bernoulli outcomes)
of 2 to 20,000 installations per arm, plus the cases gbstats reports no effect for (a control
mean of 0, an arm without variance). Seeded: the output is the same on every run."""
import json
import pathlib

import numpy as np
from gbstats.frequentist.tests import (FrequentistConfig, SequentialConfig, SequentialTwoSidedTTest,
                                       TwoSidedTTest)
from gbstats.models.statistics import ProportionStatistic, SampleMeanStatistic
from gbstats.utils import check_srm

rng = np.random.default_rng(20261125)
np.seterr(over="ignore")  # a huge effect overflows the e-value to infinity: p = 0, as intended


def arm(kind, n, effect):
    if kind == "proportion":
        return {"kind": kind, "n": n, "sum": float(rng.binomial(n, min(0.999, 0.05 * effect))), "sumOfSquares": None}
    if rng.random() < 0.5:
        values = rng.lognormal(mean=np.log(40 * effect), sigma=0.6, size=n)
    else:
        values = rng.poisson(lam=3 * effect, size=n).astype(float)
    return {"kind": kind, "n": n, "sum": float(values.sum()), "sumOfSquares": float((values * values).sum())}


def statistic(a):
    if a["kind"] == "proportion":
        return ProportionStatistic(n=a["n"], sum=a["sum"])
    return SampleMeanStatistic(n=a["n"], sum=a["sum"], sum_squares=a["sumOfSquares"])


def case(control, treatment):
    results = []
    for difference in ["relative", "absolute"]:
        for horizon in ["fixed", "sequential"]:
            a, b = statistic(control), statistic(treatment)
            if horizon == "fixed":
                test = TwoSidedTTest(a, b, FrequentistConfig(difference_type=difference))
            else:
                test = SequentialTwoSidedTTest(a, b, SequentialConfig(difference_type=difference))
            result = test.compute_result()
            results.append({"difference": difference, "horizon": horizon, "estimate": result.expected,
                            "lower": result.ci[0], "upper": result.ci[1], "pValue": result.p_value,
                            "problem": result.error_message})
    return {"control": control, "treatment": treatment, "results": results}


cases = []
for _ in range(200):
    kind = "proportion" if rng.random() < 0.4 else "mean"
    n_a = int(rng.integers(2, 20_001))
    n_b = int(rng.integers(2, 20_001)) if rng.random() < 0.7 else n_a
    effect = float(rng.choice([1.0, 1.0 + rng.normal(0, 0.05), 1.0 + rng.normal(0, 0.3)]))
    cases.append(case(arm(kind, n_a, 1.0), arm(kind, n_b, max(0.05, effect))))
cases.append(case({"kind": "mean", "n": 100, "sum": 0.0, "sumOfSquares": 0.0}, arm("mean", 100, 1.0)))
cases.append(case({"kind": "mean", "n": 100, "sum": 500.0, "sumOfSquares": 2500.0}, arm("mean", 100, 1.0)))
cases.append(case({"kind": "proportion", "n": 50, "sum": 50.0, "sumOfSquares": None}, arm("proportion", 50, 1.0)))
cases.append(case(arm("mean", 30, 1.0), {"kind": "mean", "n": 1, "sum": 7.0, "sumOfSquares": 49.0}))

out = pathlib.Path(__file__).resolve().parents[2] / "Tests/Fixtures/experiments/gbstats-0.8.0.json"
# Sample-ratio checks: 2 to 4 arms with shares in basis points, installations drawn with the
# split or slightly off it (check_srm's p-value).
ratios = []
for _ in range(100):
    arms = int(rng.integers(2, 5))
    shares = rng.integers(1, 100, size=arms)
    shares = [int(x) for x in np.floor(shares / shares.sum() * 10_000)]
    shares[0] += 10_000 - sum(shares)
    skew = rng.normal(1, 0.03, size=arms) if rng.random() < 0.5 else np.ones(arms)
    weights = np.array(shares) * skew
    users = [int(x) for x in rng.multinomial(int(rng.integers(200, 200_000)), weights / weights.sum())]
    if min(users) < 10:
        continue
    ratios.append({"shares": shares, "installations": users, "pValue": float(check_srm(users, shares))})

header = json.dumps({"gbstats": "0.8.0", "alpha": 0.05, "sequentialTuning": 5000})[:-1]
out.write_text(header + ', "sampleRatios": [\n' + ",\n".join(json.dumps(r) for r in ratios) + '\n], "cases": [\n'
               + ",\n".join(json.dumps(c) for c in cases) + "\n]}\n")
print(f"{out}: {len(cases)} cases, {sum(len(c['results']) for c in cases)} results, {len(ratios)} sample-ratio checks")
