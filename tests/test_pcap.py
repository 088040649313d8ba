"""`ecnlab run --pcap PORT`: nanosecond pcap files of switch ports, read by tshark, which must
count exactly the CE marks summary.json reports for the port (the run has no warm-up, so
both cover the whole run; on a star the switch port is the only marking point); a capture
never changes the run; the size bound and bad port names get clear messages."""

import shutil
import subprocess

import pytest

from conftest import run_cli, summary

# Hosts do not mark (tcn-isolation marks at the NICs too): every CE at a switch port is its own.
SMALL = ["tcn-isolation", "--set", "traffic.0.flows=150", "--set", "host.nic_marking=false"]


def _tshark():
    """tshark, which `.ci/run` installs where it is missing; the test never installs it."""
    path = shutil.which("tshark")
    if not path:
        pytest.skip("tshark is not installed (.ci/run installs it)")
    return path


FIELDS = ("ip.dsfield.ecn", "ip.dsfield.dscp", "tcp.srcport", "tcp.dstport", "tcp.len", "tcp.flags.ack",
          "tcp.flags.push", "tcp.flags.fin")


def _packets(tshark, path):
    """Every packet of a capture as a dict of FIELDS, in one pass of tshark (each pass over
    the bottleneck's 170 k packets takes seconds)."""
    args = [tshark, "-n", "-r", str(path), "-T", "fields", "-E", "separator=,", "-E", "occurrence=f"]
    for f in FIELDS:
        args += ["-e", f]
    r = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return [dict(zip(FIELDS, line.split(","))) for line in r.stdout.splitlines()]


def _flag(p, field):
    # tshark prints a flag as 1/0 or, in newer releases, True/False
    return p[field] in ("1", "True")


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    out = tmp_path_factory.mktemp("pcap") / "run"
    run_cli("run", *SMALL, "--pcap", "all", "--out", out, "-q")
    return out


def test_tshark_counts_the_ce_marks_the_summary_reports(captured):
    tshark = _tshark()
    s = summary(captured)
    assert s["measure_from_s"] == 0
    ports = sorted({q["port"] for q in s["queues"]})
    files = sorted(p.name for p in (captured / "pcap").iterdir())
    assert files == sorted(f"{p}.pcap" for p in ports) or set(f"{p}.pcap" for p in ports) <= set(files)
    checked = 0
    packets = {}
    for port in ports:
        marks = sum(q["marks"] for q in s["queues"] if q["port"] == port)
        packets[port] = _packets(tshark, captured / "pcap" / f"{port}.pcap")
        ce = sum(p["ip.dsfield.ecn"] == "3" for p in packets[port])
        assert ce == marks, port
        checked += marks > 0
    assert checked >= 1  # the bottleneck port marked
    # The headers are real: DSCP = the flow's class, data to port 5001, ACKs back from it.
    bott = packets["s0->h0"]
    data = [p for p in bott if p["tcp.len"] not in ("", "0")]
    classes = {p["ip.dsfield.dscp"] for p in bott}
    assert classes <= {"0", "1", "2", "3"} and len(classes) > 1
    assert any(p["tcp.dstport"] == "5001" for p in data)
    assert any(p["tcp.srcport"] == "5001" and _flag(p, "tcp.flags.ack") for p in packets["s0->h1"])
    # A message's last segment is a PSH (the end of an application write); connections stay
    # open, so no segment is a FIN.
    assert any(_flag(p, "tcp.flags.push") for p in data)
    assert not any(_flag(p, "tcp.flags.fin") for p in bott)


def test_capture_does_not_change_the_run(captured, tmp_path):
    run_cli("run", *SMALL, "--out", tmp_path / "plain", "-q")
    a, b = summary(captured), summary(tmp_path / "plain")
    for s in (a, b):
        s.pop("wall_time_s")
    assert a == b
    assert (captured / "flows.csv").read_text() == (tmp_path / "plain" / "flows.csv").read_text()


def test_capture_size_is_bounded_with_a_message(tmp_path):
    p = run_cli("run", *SMALL, "--pcap", "s0->h0", "--pcap-limit", "100KB", "--out", tmp_path / "t", "-q")
    f = tmp_path / "t" / "pcap" / "s0->h0.pcap"
    assert f.stat().st_size <= 100_000
    assert "--pcap-limit 100KB" in p.stderr and "warning" in p.stderr


def test_unknown_port_is_one_line_exit_2(tmp_path):
    p = run_cli("run", *SMALL, "--pcap", "s9->h0", "--out", tmp_path / "x", check=False)
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert "--pcap: no switch port `s9->h0`" in p.stderr and "s0->h0" in p.stderr
    assert not (tmp_path / "x").exists()
