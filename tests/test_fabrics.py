"""Fabrics through the command line: a topology file and a traffic matrix named relative to
the scenario file, per-tier settings by --set, and a sweep store that keys such runs by the
files' contents."""

import json

from conftest import run_cli, summary
from ecnlab.sweep.store import point_key

FABRIC = """hosts = 4
link_rate = "10Gbps"
link_delay = "2us"
[[switches]]
name = "tor0"
tier = "tor"
[[switches]]
name = "tor1"
tier = "tor"
[[switches]]
name = "spine0"
tier = "spine"
[[switches]]
name = "spine1"
tier = "spine"
[[links]]
ends = ["h0", "tor0"]
[[links]]
ends = ["h1", "tor0"]
[[links]]
ends = ["h2", "tor1"]
[[links]]
ends = ["h3", "tor1"]
[[links]]
ends = ["tor0", "spine0"]
[[links]]
ends = ["tor0", "spine1"]
[[links]]
ends = ["tor1", "spine0"]
[[links]]
ends = ["tor1", "spine1"]
"""

SCENARIO = """name = "fab"
duration = "30ms"
[topology]
kind = "file"
file = "fabric.toml"
[marking]
scheme = "per_queue"
[[traffic]]
kind = "poisson"
cdf = "websearch"
load = 0.5
flows = 60
pattern = "matrix"
matrix = "m.csv"
"""


def _files(d):
    (d / "fabric.toml").write_text(FABRIC)
    (d / "m.csv").write_text("src_rack,dst_rack,fraction\n0,1,0.8\n1,0,0.2\n")
    (d / "s.toml").write_text(SCENARIO)
    return d / "s.toml"


def test_a_file_fabric_runs_from_anywhere_with_tier_settings(tmp_path):
    (tmp_path / "scn").mkdir()
    scn = _files(tmp_path / "scn")
    out = tmp_path / "out"
    run_cli("run", scn, "--out", out, "-q", "--set", "tiers.spine.switch.buffer=200KB")
    s = summary(out)
    assert s["flows"]["total"] == 60
    ports = {q["port"] for q in s["queues"]}
    assert any(p.startswith("spine") for p in ports) and any(p.startswith("tor") for p in ports)
    # The matrix sends between the racks only (hosts 0-1 under tor0, 2-3 under tor1).
    head, *rows = (out / "flows.csv").read_text().splitlines()
    col = head.split(",")
    pairs = [(int(r.split(",")[col.index("src")]), int(r.split(",")[col.index("dst")])) for r in rows]
    assert len(pairs) == 60 and all(s // 2 != d // 2 for s, d in pairs)
    assert 30 < sum(s // 2 == 0 for s, _ in pairs) < 60, "0.8 of the flows from rack 0"
    # The tier's buffer below the marking threshold is refused, naming the tier's keys.
    p = run_cli("run", scn, "--out", tmp_path / "bad", "--set", "tiers.spine.switch.buffer=40KB", check=False)
    assert p.returncode == 2
    assert "tiers.spine.marking.threshold.k: 97500B is not below the port buffer tiers.spine.switch.buffer = 40KB" \
        in p.stderr, p.stderr


def test_the_store_keys_a_fabric_by_its_files_contents(tmp_path):
    d = tmp_path / "scn"
    d.mkdir()
    _files(d)
    doc = {"name": "fab", "duration": "30ms", "topology": {"kind": "file", "file": str(d / "fabric.toml")},
           "traffic": [{"kind": "poisson", "cdf": "websearch", "load": 0.5, "flows": 60, "pattern": "matrix",
                        "matrix": str(d / "m.csv")}]}
    k0 = point_key(json.loads(json.dumps(doc)), 1)
    (d / "fabric.toml").write_text(FABRIC.replace('link_delay = "2us"', 'link_delay = "3us"'))
    k1 = point_key(json.loads(json.dumps(doc)), 1)
    (d / "m.csv").write_text("src_rack,dst_rack,fraction\n0,1,0.5\n1,0,0.5\n")
    k2 = point_key(json.loads(json.dumps(doc)), 1)
    assert len({k0, k1, k2}) == 3


def _starts(out):
    a = json.loads((out / "advice.json").read_text())
    return a["network"]["port_rate_bps"], {s["scheme"]: s["start"] for s in a["schemes"]}


def test_advise_takes_a_fat_tree_and_a_topology_file(tmp_path):
    # The rules' RTT is the longest path's propagation round trip on the simulator's routes and
    # C a receiver's access link: a k = 4 fat-tree of 1 us links with 25 Gbps hosts under a
    # 100 Gbps fabric crosses six links each way (12 us), so K = 25 Gbps x 12 us = 37.5 KB; the
    # file fabric above, four links each way at 2 us (16 us) and 10 Gbps: 20 KB. Both used to
    # stop advise with an internal error (the RTT was computed for a leaf-spine's keys).
    ft = tmp_path / "ft.toml"
    ft.write_text('name = "ft"\nduration = "10ms"\n[topology]\nkind = "fat_tree"\nk = 4\n'
                  'link_rate = "100Gbps"\nlink_delay = "1us"\nhost_rate = "25Gbps"\n'
                  '[[traffic]]\nkind = "poisson"\ncdf = "websearch"\nload = 0.3\nflows = 20\n')
    run_cli("advise", "--scenario", ft, "--validate", "none", "--out", tmp_path / "a", "-q")
    rate, starts = _starts(tmp_path / "a")
    assert rate == 25e9 and starts["per_queue"] == {"marking.threshold.k": "37500B"}
    assert starts["tcn"] == {"marking.tcn.threshold": "12us"}
    (tmp_path / "scn").mkdir()
    scn = _files(tmp_path / "scn")
    run_cli("advise", "--scenario", scn, "--validate", "none", "--out", tmp_path / "b", "-q")
    rate, starts = _starts(tmp_path / "b")
    assert rate == 10e9 and starts["per_queue"] == {"marking.threshold.k": "20000B"}
