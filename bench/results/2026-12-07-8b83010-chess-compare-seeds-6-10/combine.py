"""Pools the per-seed runs of several `whale compare` reports (report.md, same spec, disjoint seeds)
into one table: each schedule's best test mean@8 with the 95 % Student-t interval over all seeds,
and WHALE minus each baseline paired by seed, as whale.report.Interval computes them.
    python combine.py A/report.md B/report.md"""
import math, re, sys
from collections import defaultdict

T975 = [12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
        2.2010, 2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860]

def interval(v):
    n = len(v); m = sum(v) / n
    h = T975[n - 2] * math.sqrt(sum((x - m) ** 2 for x in v) / (n - 1) / n)
    return m, m - h, m + h

best = defaultdict(dict)   # schedule -> seed -> best mean@8 (%)
base = {}
for path in sys.argv[1:]:
    for line in open(path):
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if len(cells) == 8 and re.fullmatch(r'\d+', cells[1]) and '/seed-' in cells[2]:
            best[cells[0]][int(cells[1])] = float(cells[4])
            base[int(cells[1])] = float(cells[3])
seeds = sorted(base)
print(f"seeds {seeds[0]}-{seeds[-1]} ({len(seeds)}), best test mean@8 (%), 95 % Student-t over seeds\n")
print("| schedule | best mean@8 (%) | WHALE minus it, paired (points) |\n|---|---:|---|")
for s in best:
    m, lo, hi = interval([best[s][k] for k in seeds])
    pair = ""
    if s != "whale":
        d = [best["whale"][k] - best[s][k] for k in seeds]
        dm, dlo, dhi = interval(d)
        verdict = "WHALE ahead" if dlo > 0 else "WHALE behind" if dhi < 0 else "no difference shown"
        pair = f"{dm:+.2f} [{dlo:.2f}, {dhi:.2f}]: {verdict}"
    print(f"| {s} | {m:.2f} [{lo:.2f}, {hi:.2f}] | {pair} |")
m, lo, hi = interval([base[k] for k in seeds])
print(f"| (base model) | {m:.2f} [{lo:.2f}, {hi:.2f}] | |")
