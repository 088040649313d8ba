"""Draw a scenario's generated traffic ONCE into a trace CSV that both simulators replay.

Poisson arrivals at `load` of the limiting edge (as ecnlab's generator defines load: payload
bytes over min(sum of sender access rates, sum of receiver access rates)); flow sizes from
an ns-2 packet-format CDF in `workloads/` (linear interpolation, rounded up to whole 1460-byte
packets). Columns: start (seconds), src, dst, size (bytes), class (DSCP).
"""

from __future__ import annotations

import bisect
import random
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load_cdf(name: str) -> list[tuple[float, float]]:
    pts = []
    for line in (ROOT / "workloads" / f"{name}.cdf").read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        f = line.split()
        pts.append((float(f[0]), float(f[-1])))
    return pts


def sample_size(pts, u: float) -> int:
    probs = [p for _, p in pts]
    i = bisect.bisect_left(probs, u)
    if i == 0:
        x = pts[0][0]
    elif i >= len(pts):
        x = pts[-1][0]
    else:
        (x0, p0), (x1, p1) = pts[i - 1], pts[i]
        x = x0 if p1 == p0 else x0 + (x1 - x0) * (u - p0) / (p1 - p0)
    import math
    return max(1, math.ceil(x - 1e-9)) * 1460


def generate(sc: dict) -> list[tuple[float, int, int, int, int]]:
    tr, topo = sc["traffic"], sc["topology"]
    rng = random.Random(tr.get("seed", 1))
    pts = load_cdf(tr["cdf"])
    mrng = random.Random(12345)
    mean = sum(sample_size(pts, mrng.random()) for _ in range(200_000)) / 200_000
    if topo["kind"] == "star":
        hosts = list(range(topo["hosts"]))
        hpl = None
    else:
        hosts = list(range(topo["leaves"] * topo["hosts_per_leaf"]))
        hpl = topo["hosts_per_leaf"]
    senders = tr.get("senders", hosts)
    receivers = tr.get("receivers", hosts)
    rate = topo["link_rate_gbps"] * 1e9
    cap = min(len(senders), len(receivers)) * rate
    lam = tr["load"] * cap / (8 * mean)
    t = 0.0
    rows = []
    for _ in range(tr["flows"]):
        t += rng.expovariate(lam)
        size = sample_size(pts, rng.random())
        while True:
            s = rng.choice(senders)
            d = rng.choice(receivers)
            if d == s:
                continue
            if tr.get("pattern") == "inter_leaf" and hpl and s // hpl == d // hpl:
                continue
            break
        cls = rng.choice(tr["classes"])
        rows.append((round(t, 9), s, d, size, cls))
    return rows


def write_trace(rows, path: Path) -> None:
    with open(path, "w") as f:
        f.write("start,src,dst,size,class\n")
        for r in rows:
            f.write(f"{r[0]:.9f},{r[1]},{r[2]},{r[3]},{r[4]}\n")
