"""What each flow waited for, counted in `flows.csv` and summed in `summary.json`'s `flows`:
tail loss probes (`tlp_probes`), reductions undone (`undos`), and the host NIC's buffer each
profile starts from."""

import csv
import json

from conftest import run_cli, summary

from ecnlab import _core

# Sixteen 200 KB NewReno flows into one 10 Gbps port with a 100 KB buffer, no marking: the
# incast drops, and some flow loses a segment near its tail with too few after it for three
# duplicate ACKs, which TLP (RFC 8985 §7, tcp_send_loss_probe) repairs with a probe.
INCAST = "\n".join(
    ['name = "incast"', 'duration = "200ms"', "[topology]", 'kind = "star"', "hosts = 17",
     'link_rate = "10Gbps"', 'link_delay = "5us"', "[switch]", 'buffer = "100KB"', "[marking]",
     'scheme = "none"', "[transport]", 'cc = "newreno"', "{transport}"]
    + [f'[[flows]]\nsrc = {1 + i}\ndst = 0\nsize = "200KB"' for i in range(16)]) + "\n"


def _run(tmp_path, name, transport=""):
    f = tmp_path / f"{name}.toml"
    f.write_text(INCAST.replace("{transport}", transport))
    out = tmp_path / name
    run_cli("run", f, "--out", out, "-q")
    with open(out / "flows.csv") as fh:
        return summary(out), list(csv.DictReader(fh))


def test_tail_loss_probes_are_counted_per_flow_and_summed(tmp_path):
    s, rows = _run(tmp_path, "tlp")
    probes = [int(r["tlp_probes"]) for r in rows]
    assert s["drops"] > 0 and sum(probes) > 0, (s["drops"], probes)
    assert s["flows"]["tlp_probes"] == sum(probes)

    # Without TLP there is nothing to count: the key is left out and the column is 0.
    off, rows = _run(tmp_path, "no-tlp", "tlp = false")
    assert off["drops"] > 0 and "tlp_probes" not in off["flows"]
    assert {r["tlp_probes"] for r in rows} == {"0"}


def test_undone_reductions_are_counted_per_flow_and_summed(tmp_path):
    """tcn-isolation's per-queue baseline (Linux 3.18 hosts, 800 flows) drops, and some of
    its reductions prove spurious (all retransmissions reported by D-SACKs, a timestamp
    echo older than the first retransmission, F-RTO): the linux senders undo them
    (tcp_undo_cwnd_reduction), and flows.csv's column sums to the summary's count. The
    textbook hosts have no undo: no key, a zero column."""
    out = tmp_path / "iso"
    run_cli("run", "tcn-isolation", "--out", out, "-q", "--set", "marking.scheme=per_queue",
            "--set", "traffic.0.flows=800")
    s = summary(out)
    with open(out / "flows.csv") as fh:
        undos = [int(r["undos"]) for r in csv.DictReader(fh)]
    assert s["drops"] > 0 and sum(undos) > 0, (s["drops"], sum(undos))
    assert s["flows"]["undos"] == sum(undos)
    f = tmp_path / "textbook.toml"
    f.write_text(INCAST.replace("{transport}", 'profile = "textbook"'))
    run_cli("run", f, "--out", tmp_path / "textbook", "-q")
    assert "undos" not in summary(tmp_path / "textbook")["flows"]
    with open(tmp_path / "textbook" / "flows.csv") as fh:
        assert {r["undos"] for r in csv.DictReader(fh)} == {"0"}


def test_the_nic_buffer_default_follows_the_profile():
    # linux: fq_codel's memory_limit (sch_fq_codel.c: 32 << 20); textbook: 4 MB, as before.
    def nic(transport, host=""):
        doc = {"name": "n", "duration": "1ms", "topology": {"kind": "star", "hosts": 2, "link_rate": "10Gbps", "link_delay": "1us"}, "transport": transport,
               "flows": [{"src": 0, "dst": 1}]}
        if host:
            doc["host"] = {"nic_buffer": host}
        return _core.parse_unit("size", json.loads(_core.resolve_json(json.dumps(doc)))["host"]["nic_buffer"])

    assert nic({"profile": "linux"}) == 32 << 20
    assert nic({"profile": "textbook"}) == 4_000_000
    assert nic({"profile": "linux"}, "1MB") == 1_000_000
