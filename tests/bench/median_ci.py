# SPDX-License-Identifier: MIT
"""median_ci.py — the benches' one summary of paired rounds: the median and a
distribution-free ~95% interval of it, from order statistics (no normality
assumed: a loaded VM's rounds are anything but normal)."""
import math
import statistics


def median_ci(xs):
    """(median, lo, hi) of xs; lo and hi None under 6 values (too few for an interval)"""
    xs = sorted(xs)
    if not xs:
        return None, None, None
    med = statistics.median(xs)
    if len(xs) < 6:
        return med, None, None
    k = max(1, int(math.floor((len(xs) - 1.96 * math.sqrt(len(xs))) / 2)))
    return med, xs[k - 1], xs[len(xs) - k]
