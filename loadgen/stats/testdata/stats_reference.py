#!/usr/bin/env python3
"""Reference values for loadgen's stats_test.go, computed independently of
stats.go: by brute force over every assignment of the pooled values to the
two samples (exact permutation distribution), and the normal approximation
written out from its formula. Standard library only:

    python3 loadgen/stats/testdata/stats_reference.py
"""
import itertools
import math


def midranks(pooled):
    order = sorted(range(len(pooled)), key=lambda i: pooled[i])
    ranks = [0.0] * len(pooled)
    i = 0
    while i < len(order):
        j = i
        while j < len(order) and pooled[order[j]] == pooled[order[i]]:
            j += 1
        for k in range(i, j):
            ranks[order[k]] = (i + 1 + j) / 2
        i = j
    return ranks


def u_of(x, y):
    """U of x: pairs with x > y, ties counting one half."""
    return sum((a > b) + 0.5 * (a == b) for a in x for b in y)


def mw_exact(x, y):
    """Two-sided exact p: every split of the pooled values, equally likely."""
    pooled = list(x) + list(y)
    ranks = midranks(pooled)
    n1 = len(x)
    w_obs = sum(ranks[:n1])
    lower = upper = total = 0
    for idx in itertools.combinations(range(len(pooled)), n1):
        w = sum(ranks[i] for i in idx)
        total += 1
        lower += w <= w_obs + 1e-9
        upper += w >= w_obs - 1e-9
    # The smaller tail doubled, even at U = n1*n2/2: with ties the
    # distribution need not be symmetric, and p can be under 1 there.
    return u_of(x, y), min(1.0, 2 * min(lower, upper) / total)


def mw_normal(x, y):
    n1, n2 = len(x), len(y)
    pooled = sorted(list(x) + list(y))
    t = sum(c ** 3 - c for c in (pooled.count(v) for v in set(pooled)))
    n = n1 + n2
    u = u_of(x, y)
    mu = n1 * n2 / 2
    sd = math.sqrt(n1 * n2 * ((n + 1) - t / (n * (n - 1))) / 12)
    # The continuity correction never takes |U - mu| past 0 (R's wilcox.test).
    d = max(abs(u - mu) - 0.5, 0)
    return u, min(1.0, math.erfc(d / sd / math.sqrt(2)))


def u_null(n1, n2):
    """Null distribution of U without ties, by enumerating the splits."""
    counts = [0] * (n1 * n2 + 1)
    for idx in itertools.combinations(range(n1 + n2), n1):
        # U of the chosen ranks: each chosen rank r beats r-1 minus the
        # chosen ones below it.
        u = sum(r - k for k, r in enumerate(idx))
        counts[u] += 1
    tot = sum(counts)
    return [c / tot for c in counts]


def hl_interval(frm, to, conf):
    n1, n2 = len(frm), len(to)
    dist = u_null(n1, n2)
    half = (1 - conf) / 2
    cum, q = 0.0, None
    for k, p in enumerate(dist):
        cum += p
        if cum >= half:
            q = k
            break
    q = max(q, 1)
    logs = sorted(math.log(b) - math.log(a) for a in frm for b in to)
    m = n1 * n2
    achieved = 1 - 2 * sum(dist[:q])
    return math.exp(logs[q - 1]), math.exp(logs[m - q]), achieved


cases = {
    "apart 5+5": ([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]),
    "apart 4+4": ([10, 11, 12, 13], [20, 21, 22, 23]),
    "apart 3+3": ([10, 11, 12], [20, 21, 22]),
    "apart 3+4": ([10, 11, 12], [20, 21, 22, 23]),
    "interleaved 5+5": ([12100, 12400, 12900, 13300, 12650], [12500, 13100, 13500, 13900, 12950]),
    "R docs 10+5": ([0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46], [1.15, 0.88, 0.90, 0.74, 1.21]),
    "ties 4+5": ([1, 2, 2, 3], [2, 3, 3, 4, 5]),
    "ties 6+6": ([10, 10, 11, 12, 12, 13], [12, 13, 13, 14, 14, 15]),
    "equal medians": ([1, 3, 5, 7], [2, 4, 6, 8]),
    # Issue 31: U at the centre of a tied distribution that is not symmetric.
    "exact, U at the centre": ([2, 3, 3], [1, 5, 5, 1]),
    # Issue 31: the smaller tail doubled (2/35), not "at least as far" (1/35).
    "exact, the smaller tail doubled": ([2, 2, 2], [0, 1, 1, 0]),
}
for name, (x, y) in cases.items():
    print(f"{name}: U={u_of(x, y)} exact p={mw_exact(x, y)[1]!r}")

# Beyond the exact limits: ties with 10 values a side, 60 a side (17 ties).
big_ties = ([1, 1, 2, 2, 3, 3, 4, 4, 5, 5], [3, 3, 4, 4, 5, 5, 6, 6, 7, 7])
print(f"ties 10+10: U={u_of(*big_ties)} normal p={mw_normal(*big_ties)[1]!r}")
same = [1, 1, 2, 3, 4, 5, 6, 7, 8, 9]
print(f"x = y, 10+10: U={u_of(same, same)} normal p={mw_normal(same, same)[1]!r}")
x60 = [1000 + 3 * i for i in range(60)]
y60 = [1050 + 3 * i + 1 for i in range(60)]
print(f"60+60: U={u_of(x60, y60)} normal p={mw_normal(x60, y60)[1]!r}")

for n in range(1, 10):
    print(f"min p {n}+{n}: {2 / math.comb(2 * n, n)!r}")

hl = {
    "5+5 +8%": ([12100, 12400, 12900, 12650, 12300], [13300, 13500, 13900, 13650, 13100]),
    "6+6 close": ([100, 102, 99, 101, 103, 98], [101, 104, 100, 103, 102, 105]),
    "3+3": ([10, 11, 12], [20, 21, 22]),
    "4+4": ([10, 11, 12, 13], [20, 21, 22, 23]),
    "10+10": ([100 + i for i in range(10)], [105 + 1.5 * i for i in range(10)]),
}
for name, (a, b) in hl.items():
    for conf in (0.95, 0.9):
        lo, hi, ach = hl_interval(a, b, conf)
        print(f"HL {name} @{conf}: low={lo!r} high={hi!r} confidence={ach!r}")

# Uplifts: percent change of the medians, exact p, interval in percent.
def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


uplifts = {
    "gain 6+6": ([12100, 12400, 12900, 12650, 12300, 12500], [13300, 13500, 13900, 13650, 13100, 13400]),
    "loss 6+6": ([13300, 13500, 13900, 13650, 13100, 13400], [12100, 12400, 12900, 12650, 12300, 12500]),
    "inside the band 6+6": ([1000, 1001, 1002, 1003, 1004, 1005], [1006, 1007, 1008, 1009, 1010, 1011]),
    "noise 6+6": ([100, 102, 99, 101, 103, 98], [101, 104, 100, 103, 102, 97]),
}
for name, (a, b) in uplifts.items():
    _, p = mw_exact(a, b)
    lo, hi, ach = hl_interval(a, b, 0.95)
    pc = 100 * (median(b) - median(a)) / median(a)
    print(f"uplift {name}: percent={pc!r} p={p!r} low={100 * (lo - 1)!r} high={100 * (hi - 1)!r}")
