"""The platform files of `ecnlab advise`, checked against the platforms' own documentation:

- SONiC: the rules of its YANG models (sonic-buildimage src/sonic-yang-models/yang-models/),
  transcribed here: sonic-wred-profile (revision 2026-06-23: name pattern and length,
  uint64 byte thresholds, 0-100 probabilities, max >= min, the ecn_* leaves' must
  statements), sonic-scheduler (type DWRR/WRR/STRICT, weight 1-100), sonic-dscp-tc-map
  (DSCP pattern, tc_type 0-15), sonic-tc-queue-map (qindex [0-9]?), sonic-queue and
  sonic-port-qos-map (leafrefs to the tables), and config_db's rule that the top level holds
  tables only.
- tc: tc's own parser where the `tc` binary is installed (a qdisc command is parsed in full
  before tc looks the device up, so a nonexistent device means the parser accepted it; a
  filter's device is looked up first, so filters go to `lo` under a parent that does not
  exist, which the kernel refuses after the parser accepted them), and the grammar of
  tc-ets(8), tc-red(8) (iproute2 tc_red.c's EWMA rule), tc-codel(8) (whole microseconds;
  the kernel's ticks of 1.024 us, sch_codel.c) encoded below, because this machine's kernel
  lacks the ets, red and codel qdiscs.
- Junos: the class-of-service grammar of Juniper's documentation (latency-ecn XOR
  explicit-congestion-notification per scheduler, threshold 1-1,000,000,000 ns, no ECN and
  no transmit-rate on a strict-high queue, a scheduler-map naming every forwarding class).
- NVUE: the Cumulus Linux 5 command reference (nv set qos ... traffic-class 0-7,
  probability 1-100, bw-percent 1-100 summing to at most 100, thresholds in bytes)."""

import json
import re
import shutil
import subprocess

import pytest

from ecnlab.advise.platforms import Switch, render, write_configs
from ecnlab.advise.platforms.tc import codel_us

# An operator's 100 Gbps leaf: SP + DWRR over 8 queues (queue 0 strict), weights 4,2,1..., EF
# to the strict queue, AF31 and AF11 to queues 1 and 2, everything else to queue 3.
DSCP = [3] * 64
DSCP[46], DSCP[26], DSCP[10] = 0, 1, 2
SW = Switch(queues=8, scheduler="sp_dwrr", strict=(0,), weights={1: 4, 2: 2, 3: 1, 4: 1, 5: 1, 6: 1, 7: 1},
            ecn_queues=(1, 2, 3, 4, 5, 6, 7), dscp_to_queue=DSCP, default_queue=3, buffer_bytes=2_000_000,
            rate_bps=100_000_000_000, ports=("Ethernet0", "Ethernet4"))
TCN = ("tcn", {"marking.tcn.threshold": "15360ns"})
PER_QUEUE = ("per_queue", {"marking.threshold.k": "250000B"})
RED = ("red", {"marking.red.min_th": "100000B", "marking.red.max_th": "300000B", "marking.red.max_p": 0.1,
               "marking.red.w": 0.002})
ECN_SHARP = ("ecn_sharp", {"marking.ecn_sharp.ins_target": "80us", "marking.ecn_sharp.pst_target": "53600ns",
                           "marking.ecn_sharp.pst_interval": "80us"})


# --- SONiC: the YANG models' rules ------------------------------------------------------

WRED_LEAVES = {"yellow_min_threshold", "green_min_threshold", "red_min_threshold", "yellow_max_threshold",
               "green_max_threshold", "red_max_threshold", "ecn", "wred_green_enable", "wred_yellow_enable",
               "wred_red_enable", "yellow_drop_probability", "green_drop_probability", "red_drop_probability",
               "ecn_green_min_threshold", "ecn_green_max_threshold", "ecn_green_mark_probability",
               "ecn_yellow_min_threshold", "ecn_yellow_max_threshold", "ecn_yellow_mark_probability",
               "ecn_red_min_threshold", "ecn_red_max_threshold", "ecn_red_mark_probability"}
ECN_MODES = {"ecn_none", "ecn_green", "ecn_yellow", "ecn_red", "ecn_green_yellow", "ecn_green_red", "ecn_yellow_red",
             "ecn_all"}
NAME = re.compile(r"[a-zA-Z0-9]{1}([-a-zA-Z0-9_]{0,31})")  # sonic-wred-profile, sonic-dscp-tc-map, ... name
DSCP_KEY = re.compile(r"6[0-3]|[1-5][0-9]?|[0-9]?")  # sonic-dscp-tc-map leaf dscp
QINDEX = re.compile(r"[0-9]?")  # sonic-tc-queue-map leaf qindex
UINT64 = re.compile(r"[0-9]{1,20}")


def check_sonic(doc, sw):
    """Every rule of the models that a config_db document can break here."""
    assert all(isinstance(v, dict) for v in doc.values()), "config_db's top level holds tables only"
    assert set(doc) <= {"WRED_PROFILE", "SCHEDULER", "DSCP_TO_TC_MAP", "TC_TO_QUEUE_MAP", "PORT_QOS_MAP", "QUEUE"}
    for name, prof in doc["WRED_PROFILE"].items():
        assert NAME.fullmatch(name) and 1 <= len(name) <= 32, name
        assert set(prof) <= WRED_LEAVES, set(prof) - WRED_LEAVES
        assert prof.get("ecn", "ecn_none") in ECN_MODES
        for k, v in prof.items():
            if k.endswith("_threshold"):
                assert UINT64.fullmatch(v) and int(v) < 2**64, (k, v)  # uint64, bytes
            if k.endswith(("_probability",)):
                assert v.isdigit() and 0 <= int(v) <= 100, (k, v)  # range 0..100
            if k.startswith("wred_") and k.endswith("_enable"):
                assert v in ("true", "false"), (k, v)
        for color in ("green", "yellow", "red"):  # must: max >= min
            for pre in ("", "ecn_"):
                lo, hi = prof.get(f"{pre}{color}_min_threshold"), prof.get(f"{pre}{color}_max_threshold")
                if lo is not None and hi is not None:
                    assert int(hi) >= int(lo), (color, pre, lo, hi)
            if any(k.startswith(f"ecn_{color}_") for k in prof):  # must: the color's ECN enabled in ecn
                assert prof["ecn"] in {f"ecn_{color}", "ecn_all"} | {m for m in ECN_MODES if color in m}, prof
    for name, s in doc["SCHEDULER"].items():
        assert s["type"] in ("DWRR", "WRR", "STRICT")
        if "weight" in s:
            assert 1 <= int(s["weight"]) <= 100
    for name, m in doc["DSCP_TO_TC_MAP"].items():
        assert NAME.fullmatch(name)
        assert all(DSCP_KEY.fullmatch(d) and 0 <= int(tc) <= 15 for d, tc in m.items()), m
        assert sorted(map(int, m)) == list(range(64)), "every DSCP classified"
    for name, m in doc["TC_TO_QUEUE_MAP"].items():
        assert NAME.fullmatch(name) and all(0 <= int(tc) <= 15 and QINDEX.fullmatch(q) for tc, q in m.items())
    for port, b in doc["PORT_QOS_MAP"].items():
        assert b["dscp_to_tc_map"] in doc["DSCP_TO_TC_MAP"] and b["tc_to_queue_map"] in doc["TC_TO_QUEUE_MAP"]
    bound = {}
    for key, q in doc["QUEUE"].items():
        port, idx = key.split("|")
        bound.setdefault(port, set()).add(int(idx))
        assert q["scheduler"] in doc["SCHEDULER"], q  # leafref
        if "wred_profile" in q:
            assert q["wred_profile"] in doc["WRED_PROFILE"], q  # leafref
            assert int(idx) in sw.ecn_queues, f"ECN on {key}, not an ECN queue"
        else:
            assert int(idx) not in sw.ecn_queues, f"no ECN on ECN queue {key}"
    assert bound == {p: set(range(sw.queues)) for p in sw.ports}, "every queue of every port given"
    for q in sw.strict:
        assert doc["SCHEDULER"][doc["QUEUE"][f"{sw.ports[0]}|{q}"]["scheduler"]]["type"] == "STRICT"


@pytest.mark.parametrize("scheme", [PER_QUEUE, RED])
def test_sonic_config_db_follows_the_yang_models(scheme, tmp_path):
    got = write_configs(tmp_path, ["sonic"], [scheme], SW)
    doc = json.loads((tmp_path / "sonic-config_db.json").read_text())
    check_sonic(doc, SW)
    prof = next(iter(doc["WRED_PROFILE"].values()))
    # Marking before dropping (revision 2026-06-23): the ecn_* thresholds mark, WRED's drop at the buffer.
    assert int(prof["ecn_green_min_threshold"]) == (250_000 if scheme is PER_QUEUE else 100_000)
    assert int(prof["green_min_threshold"]) == SW.buffer_bytes
    legacy = json.loads((tmp_path / "sonic-config_db-legacy.json").read_text()) if (tmp_path / "sonic-config_db-legacy.json").exists() else None
    assert got["sonic"]["summary"].startswith(("per-queue ECN, K = 250 KB on queues 1-7", "RED, min_th = 100 KB"))
    assert (tmp_path / "NOTES.md").read_text().count(got["sonic"]["summary"]) == 1
    if legacy:
        check_sonic(legacy, SW)


def test_sonic_legacy_file_uses_wreds_thresholds_for_marking(tmp_path):
    from ecnlab.advise.platforms.sonic import render_legacy

    doc = json.loads(render_legacy(*PER_QUEUE, SW))
    check_sonic(doc, SW)
    prof = next(iter(doc["WRED_PROFILE"].values()))
    assert not any(k.startswith("ecn_green_") for k in prof)
    assert prof["green_min_threshold"] == prof["green_max_threshold"] == "250000"
    assert prof["green_drop_probability"] == "100" and prof["ecn"] == "ecn_green"


def test_the_old_sonic_file_breaks_the_models_rules():
    """What advise wrote before: a top-level "_comment", Ethernet0 alone, no SCHEDULER nor maps,
    ECN on the strict queue. The check above refuses it (so it could fail)."""
    old = {"_comment": "the recommended tcn has no equivalent on sonic",
           "WRED_PROFILE": {"ECNLAB_PER_QUEUE": {"ecn": "ecn_all", "wred_green_enable": "true",
                                                 "green_min_threshold": "250000", "green_max_threshold": "250000",
                                                 "green_drop_probability": "100"}},
           "QUEUE": {f"Ethernet0|{q}": {"wred_profile": "ECNLAB_PER_QUEUE"} for q in range(8)}}
    with pytest.raises(AssertionError, match="top level holds tables only"):
        check_sonic(old, SW)
    del old["_comment"]
    with pytest.raises(KeyError):
        check_sonic(old, SW)


def test_a_sojourn_scheme_on_sonic_falls_back_with_a_word_outside_the_json(tmp_path):
    got = write_configs(tmp_path, ["sonic"], [TCN, PER_QUEUE], SW)
    doc = json.loads((tmp_path / "sonic-config_db.json").read_text())
    check_sonic(doc, SW)
    assert got["sonic"]["scheme"] == "per_queue" and "no equivalent on sonic" in got["sonic"]["note"]
    assert "no equivalent on sonic" in (tmp_path / "NOTES.md").read_text()


# --- tc ------------------------------------------------------------------------------

def _tc_lines(text):
    return [ln.split("#", 1)[0].strip() for ln in text.splitlines() if ln.strip().startswith("tc ")]


def check_tc_grammar(text, sw):
    """tc-ets(8), tc-red(8), tc-codel(8), tc-u32(8) as the generated commands use them."""
    lines = _tc_lines(text)
    root = next(ln for ln in lines if " root " in ln)
    m = re.search(r"ets bands (\d+)(?: strict (\d+))?(?: quanta ([\d ]+?))? priomap ([\d ]+)$", root)
    assert m, root
    bands, strict = int(m.group(1)), int(m.group(2) or 0)
    quanta, priomap = m.group(3).split() if m.group(3) else [], m.group(4).split()
    assert 1 <= bands <= 16 and strict <= bands and len(quanta) == bands - strict  # tc-ets(8)
    assert all(int(q) > 0 for q in quanta) and len(priomap) <= 16 and all(int(b) < bands for b in priomap)
    assert all(int(b) >= strict for b in priomap), "unclassified traffic to a weighted band, not a strict one"
    filters = [ln for ln in lines if ln.startswith("tc filter")]
    v4 = {int(x, 16) >> 2: int(f) for x, f in re.findall(r"protocol ip prio \d+ u32 match ip dsfield (0x[0-9a-f]{2}) "
                                                         r"0xfc flowid 1:(\d+)", "\n".join(filters))}
    v6 = {int(x, 16) >> 2: int(f) for x, f in re.findall(r"protocol ipv6 prio \d+ u32 match ip6 priority "
                                                         r"(0x[0-9a-f]{2}) 0xfc flowid 1:(\d+)", "\n".join(filters))}
    assert len(v4) + len(v6) == len(filters) and v4 == v6, "each DSCP classified for IPv4 and IPv6 alike"
    for d in range(64):
        band = v4.get(d, int(priomap[0]) + 1) - 1
        assert band == sw.dscp_to_queue[d], (d, band)
    for ln in lines:
        if " red " in ln:
            r = dict(re.findall(r"\b(limit|min|max|avpkt|burst|probability|bandwidth) (\S+)", ln))
            mn, mx, lim, av, burst = (int(r[k]) for k in ("min", "max", "limit", "avpkt", "burst"))
            assert mn <= mx <= lim and burst + 1 - mn / av >= 1, r  # tc_red_eval_ewma: a >= 1
            assert 0 < float(r["probability"]) <= 1 and ln.endswith(" ecn")
            kbit = int(r["bandwidth"].removesuffix("kbit"))
            assert kbit * 1000 // 8 <= 2**32 - 1, "tc's bandwidth is a 32-bit byte rate"
        for key, v in re.findall(r"\b(ce_threshold|target|interval) (\S+)", ln):
            assert re.fullmatch(r"\d+us|1s", v), f"{key} {v}: tc takes whole microseconds"
    return lines


@pytest.mark.parametrize("scheme", [TCN, PER_QUEUE, RED, ECN_SHARP])
def test_tc_script_follows_tcs_grammar(scheme, tmp_path):
    write_configs(tmp_path, ["tc"], [scheme], SW)
    text = (tmp_path / "tc.sh").read_text()
    assert text.startswith("#!/bin/sh\n# ecnlab advise: "), text[:80]
    lines = check_tc_grammar(text, SW)
    leaves = [ln for ln in lines if "parent 1:" in ln and "qdisc" in ln]
    assert sorted(int(re.search(r"parent 1:(\d+)", ln).group(1)) - 1 for ln in leaves) == list(SW.ecn_queues)


def test_tc_times_are_whole_microseconds_with_the_kernels_value_stated(tmp_path):
    """Issue 31: `15.36us` was written; tc sends 15 and the kernel applies 14 ticks (14.336 us).
    15.36 us is 15 ticks of 1.024 us: typed as 16us, (16000 >> 10) = 15 ticks."""
    assert codel_us(15_360) == (16, 15.36)
    # 20 us: typed as 20, 20000 >> 10 = 19 ticks = 19.456 us; typed as 21, 20 ticks = 20.48 us, nearer.
    assert codel_us(20_000) == (21, 20.48)
    write_configs(tmp_path, ["tc"], [TCN], SW)
    text = (tmp_path / "tc.sh").read_text()
    assert "ce_threshold 16us" in text and "15.36us" not in text
    assert "T = 15.36 us is typed as 16us, which the kernel applies as 15.360 us" in text


def test_the_old_tc_script_breaks_tcs_grammar():
    """What advise wrote before (DSCP 0-7 to bands 1-8 under strict 1, IPv4 only, red without
    bandwidth, 15.36us): the check refuses it."""
    old = ("tc qdisc replace dev $DEV root handle 1: ets bands 8 strict 1 quanta 1500 1500 1500 1500 1500 1500 1500\n"
           + "".join(f"tc filter add dev $DEV parent 1: protocol ip prio 1 u32 match ip dsfield 0x{d << 2:02x} 0xfc "
                     f"flowid 1:{d + 1}\n" for d in range(8))
           + "tc qdisc replace dev $DEV parent 1:2 handle 11: codel ce_threshold 15.36us target 1s interval 1s ecn\n")
    with pytest.raises(AssertionError):
        check_tc_grammar(old, SW)


TC = shutil.which("tc")
PARSE_ERRORS = ("Illegal", "What is", "Usage", "Unknown", "bad", "invalid", "out of bounds", "Error: argument")


def _tc(args):
    return subprocess.run([TC, *args], capture_output=True, text=True, timeout=10)


@pytest.mark.skipif(TC is None, reason="the tc binary (iproute2) is not installed")
@pytest.mark.parametrize("scheme", [TCN, PER_QUEUE, RED, ECN_SHARP])
def test_tcs_own_parser_accepts_every_command(scheme, tmp_path):
    write_configs(tmp_path, ["tc"], [scheme], SW)
    for ln in _tc_lines((tmp_path / "tc.sh").read_text()):
        args = ln.split()[1:]
        if args[0] == "qdisc":
            args = [("ecnlabnodev0" if a == '"$DEV"' else a) for a in args]
            p = _tc(args)
            assert p.returncode != 0 and 'Cannot find device "ecnlabnodev0"' in p.stderr, (ln, p.stderr)
        else:  # a filter: on lo, under a parent lo does not have
            args = [("lo" if a == '"$DEV"' else a.replace("1:", "ffee:")) for a in args]
            p = _tc(args)
            assert p.returncode != 0 and not any(e in p.stderr for e in PARSE_ERRORS), (ln, p.stderr)
            assert re.search(r"Parent Qdisc doesn't exists|Operation not permitted|RTNETLINK|talking to the kernel",
                             p.stderr), (ln, p.stderr)


@pytest.mark.skipif(TC is None, reason="the tc binary (iproute2) is not installed")
def test_tcs_parser_would_refuse_a_wrong_command():
    """The harness above can fail: tc's parser refuses these before looking for the device."""
    for bad in (["qdisc", "add", "dev", "ecnlabnodev0", "parent", "1:2", "codel", "ce_threshold", "15.36xs", "ecn"],
                ["qdisc", "add", "dev", "ecnlabnodev0", "root", "ets", "bands", "4", "priomap", "4"],
                ["filter", "add", "dev", "lo", "parent", "ffee:", "protocol", "ipv6", "prio", "2", "u32", "match",
                 "ip6", "priority", "0x1ff", "0xfc", "flowid", "ffee:2"]):
        p = _tc(bad)
        assert p.returncode != 0 and any(e in p.stderr for e in PARSE_ERRORS), (bad, p.stderr)


# --- Junos ---------------------------------------------------------------------------

def parse_junos(text):
    """Junos's curly-brace configuration as a tree: ``[(words, children or None), ...]`` (a
    statement ends with ``;``, a block is ``words { ... }``; comments ``/* */``); raises on
    unbalanced braces or a statement without its ``;``."""
    tokens = re.findall(r"\{|\}|;|\[[^\]]*\]|[^\s{};\[]+", re.sub(r"/\*.*?\*/", "", text, flags=re.S))
    stack, cur, words = [], [], []
    for t in tokens:
        if t == "{":
            stack.append((cur, words))
            cur, words = [], []
        elif t == "}":
            assert not words, f"a statement without ';' before '}}': {words}"
            parent, head = stack.pop()
            parent.append((tuple(head), cur))
            cur, words = parent, []
        elif t == ";":
            cur.append((tuple(words), None))
            words = []
        else:
            words.append(t)
    assert not stack and not words, "braces balance, statements end"
    return cur


def _child(tree, *names):
    for w, kids in tree:
        if w == names[:len(w)] and len(w) == len(names):
            return kids
    raise AssertionError(f"no {' '.join(names)}")


def check_junos(text, sw):
    cos = _child(parse_junos(text), "class-of-service")
    fcs = {w[1]: int(w[3]) for w, _ in _child(cos, "forwarding-classes") if w[0] == "class"}
    assert sorted(fcs.values()) == list(range(sw.queues)), "one forwarding class per queue"
    scheds = {w[0]: kids for w, kids in _child(cos, "schedulers")}
    mapped = {w[1]: w[3] for w, _ in _child(_child(cos, "scheduler-maps"), "ecnlab")}
    assert set(mapped) == set(fcs) and set(mapped.values()) <= set(scheds), "the scheduler-map names them all"
    for name, st in scheds.items():
        words = {w for w, _ in st}
        has_latency = ("latency-ecn",) in words
        has_buffer = ("explicit-congestion-notification",) in words
        assert not (has_latency and has_buffer), f"{name}: latency-based and buffer-based ECN are exclusive"
        if has_latency:
            (t,) = [int(w[1]) for w, _ in _child(st, "latency-ecn") if w[0] == "threshold"]
            assert 1 <= t <= 1_000_000_000
        if has_buffer:
            assert any(w[0] == "drop-profile-map" for w in words), "buffer-based ECN marks by a WRED drop profile"
        if ("priority", "strict-high") in words:
            assert not any(w[0] == "transmit-rate" for w in words) and not (has_latency or has_buffer), name
        q = fcs[name]
        assert (has_latency or has_buffer) == (q in sw.ecn_queues and q not in sw.strict), name
    assert sum(("priority", "strict-high") in {w for w, _ in st} for st in scheds.values()) <= 1
    ifaces = {w[0]: kids for w, kids in _child(cos, "interfaces")}
    assert set(ifaces) == set(sw.ports) and all(("scheduler-map", "ecnlab") in {w for w, _ in k}
                                                for k in ifaces.values())


@pytest.mark.parametrize("scheme", [TCN, ECN_SHARP, PER_QUEUE])
def test_junos_follows_its_class_of_service_grammar(scheme, tmp_path):
    write_configs(tmp_path, ["junos"], [scheme], SW)
    text = (tmp_path / "junos.conf").read_text()
    assert text.startswith("/* ecnlab advise: "), text[:60]
    check_junos(text, SW)
    if scheme is TCN:
        assert "threshold 15360;" in text


def test_the_old_junos_file_breaks_the_grammar():
    old = ("class-of-service {\n    schedulers {\n        ecnlab-q1 {\n            explicit-congestion-notification;\n"
           "            latency-ecn {\n                threshold 40000;\n            }\n        }\n    }\n}\n")
    with pytest.raises(AssertionError, match="exclusive|no forwarding-classes"):
        check_junos(old, SW)
    with pytest.raises(AssertionError, match="braces balance"):
        parse_junos("class-of-service { schedulers { a { priority low; } }")


# --- NVUE ----------------------------------------------------------------------------

NVUE = [r"nv set qos mapping (\S+) trust l3", r"nv set qos mapping (\S+) dscp [\d,]+ switch-priority [0-7]",
        r"nv set qos egress-queue-mapping (\S+) switch-priority [0-7] traffic-class [0-7]",
        r"nv set qos egress-scheduler (\S+) traffic-class [0-7](,[0-7])* mode (dwrr|strict)",
        r"nv set qos egress-scheduler (\S+) traffic-class [0-7] bw-percent (\d+)",
        r"nv set qos congestion-control (\S+) traffic-class [0-7](,[0-7])* (ecn enable|red disable|"
        r"min-threshold \d+|max-threshold \d+|probability (\d+))",
        r"nv set interface \S+ qos (congestion-control|egress-scheduler|mapping) profile \S+", r"nv config apply"]


@pytest.mark.parametrize("scheme", [PER_QUEUE, RED])
def test_nvue_script_follows_the_cumulus_command_reference(scheme, tmp_path):
    write_configs(tmp_path, ["nvue"], [scheme], SW)
    text = (tmp_path / "nvue.sh").read_text()
    cmds = [ln for ln in text.splitlines() if ln.startswith("nv ")]
    for c in cmds:
        assert any(re.fullmatch(p, c) for p in NVUE), c
    pct = [int(x) for x in re.findall(r"bw-percent (\d+)", text)]
    assert all(1 <= p <= 100 for p in pct) and sum(pct) <= 100
    prob = [int(x) for x in re.findall(r"probability (\d+)", text)]
    assert prob and all(1 <= p <= 100 for p in prob)
    ecn = re.search(r"traffic-class ([\d,]+) ecn enable", text).group(1)
    assert [int(x) for x in ecn.split(",")] == list(SW.ecn_queues), "ECN on the ECN queues only"
    assert re.search(r"traffic-class 0 mode strict", text)
    assert cmds[-1] == "nv config apply" and text.startswith("#!/bin/sh\n# ecnlab advise: ")


def test_every_file_says_what_it_sets_and_what_it_could_not_express(tmp_path):
    got = write_configs(tmp_path, ["sonic", "tc", "nvue", "junos"], [ECN_SHARP, PER_QUEUE], SW)
    notes = (tmp_path / "NOTES.md").read_text()
    for plat, c in got.items():
        assert c["summary"] and c["summary"] in notes
        if plat != "sonic":
            head = (tmp_path / c["file"].removeprefix("config/")).read_text().splitlines()
            first = head[1] if head[0].startswith("#!") else head[0]
            assert c["summary"] in first, (plat, first)
        for m in c["missing"]:
            assert m in notes
    assert got["tc"]["scheme"] == "ecn_sharp" and any("interval / sqrt(count)" in m for m in got["tc"]["missing"])
    assert got["junos"]["scheme"] == "ecn_sharp" and any("persistent-queue part" in m for m in got["junos"]["missing"])
    assert got["sonic"]["scheme"] == got["nvue"]["scheme"] == "per_queue"


def test_render_says_what_the_switch_cannot_take():
    big = Switch(**{**SW.__dict__, "queues": 12, "dscp_to_queue": [3] * 64})
    assert render("sonic", *PER_QUEUE, big).missing == ["12 queues: SONiC's queue index is 0-9"]
    assert render("nvue", *PER_QUEUE, big).missing == ["12 queues: Cumulus Linux has 8"]
