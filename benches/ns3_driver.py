"""Run one benchmark scenario in ns-3 3.44 (PyPI wheel). Runs inside benches/.venv-ns3.

    benches/.venv-ns3/bin/python benches/ns3_driver.py CONFIG.json OUT.json

The topology is built and every per-packet sink runs in C++ (cppyy.cppdef): packet-hops are
counted at PhyTxEnd of every point-to-point device, bottleneck payload and time-averaged
backlog (queue disc + 1-packet device queue) by C++ trace sinks, flow completion by C++ sinks.
`Simulator::Run()` is timed on its own.

FCT definitions (each the same as ecnlab's on that row's profile):
- textbook rows: flow start to the ACK of the flow's last byte at the sender (the sender
  socket's HighestRxAck), as ecnlab's `textbook` profile and ns-2;
- `*-linux` rows (`ns3_fct_at_receiver`): flow start to the moment the receiving
  application holds the flow's last byte (bytes counted per flow at the sink), as ecnlab's
  `linux` profile and the testbeds' applications measure. The last ACK would add ns-3's
  delayed-ACK timer (1 ms) to every flow ending on an odd full segment past its quick ACKs.

Drops and marks of the bottleneck are counted from the warm-up on, as ecnlab counts them.

Diagnostic options (config keys, all off by default; benches/results/marks-gap.md uses them):
- `log_port` + `port_events_csv`: every event of one port's packets to a CSV (arrival with
  its mark, drop, hand-over to the device queue, start on the wire);
- `trace_long_flows_csv`: the long flows' cwnd, ssthresh, congestion state and DCTCP alpha;
- `ns3_red_twin` / `ns3_red_see_device_queue`: DCTCP-RED as a plain FIFO with the same rule,
  optionally counting the packet in the 1-packet device queue as ecnlab's port does;
- `ns3_dctcp_grow_in_cwr`: the window grows in CA_CWR on ACKs without ECE (ecnlab textbook);
- `ns3_ca_counter` = "reset" / "bytes": congestion avoidance's counter zeroed at every window
  reduction (Linux, ecnlab), and counting bytes against cwnd as ecnlab's textbook sender;
- `ns3_dctcp_cut` = "kernel": the ECN cut in whole segments, rounded as dctcp_ssthresh.

"""

from __future__ import annotations

import json
import resource
import sys
import time

T_PROC = time.perf_counter()

CPP = r"""
#include <vector>
#include <deque>
#include <map>
#include <algorithm>
using namespace ns3;

namespace bench {

uint64_t g_hops = 0;
void HopSink(Ptr<const Packet>) { ++g_hops; }

// --- bottleneck port: payload bytes sent and time-averaged backlog --------------------
double g_warmup = 0.0;       // seconds
uint64_t g_payload = 0;
uint32_t g_qd_bytes = 0, g_dev_bytes = 0;
double g_byte_s = 0.0, g_last = 0.0;
void Account() {
    double now = Simulator::Now().GetSeconds();
    double from = std::max(g_last, g_warmup);
    if (now > from) g_byte_s += double(g_qd_bytes + g_dev_bytes) * (now - from);
    g_last = now;
}
void QdBytes(uint32_t, uint32_t v) { Account(); g_qd_bytes = v; }
void DevBytes(uint32_t, uint32_t v) { Account(); g_dev_bytes = v; }
void BottleneckTx(Ptr<const Packet> p) {
    if (Simulator::Now().GetSeconds() < g_warmup) return;
    int64_t pl = int64_t(p->GetSize()) - 42;   // PPP 2 + IPv4 20 + TCP 20 (no options)
    if (pl > 0) g_payload += uint64_t(pl);
}

Ptr<QueueDisc> g_bneck_qd;

// --- flows --------------------------------------------------------------------------
struct Flow { uint32_t src, dst; uint64_t size; double start; double finish; Ptr<Socket> sock;
              uint32_t rtos; uint32_t recoveries; double established; bool closed; };
std::vector<Flow> g_flows;
// Entries into CA_LOSS (retransmission timeouts; a further backoff while already in
// CA_LOSS is not a new entry) and CA_RECOVERY (fast retransmits), per flow.
// All congestion-state transitions, old x new (CA_OPEN .. CA_LOSS = 0 .. 4).
uint64_t g_cong_tr[8][8] = {};
void OnCongState(uint32_t i, TcpSocketState::TcpCongState_t o, TcpSocketState::TcpCongState_t v) {
    if (o < 8 && v < 8) ++g_cong_tr[o][v];
    if (v == TcpSocketState::CA_LOSS) ++g_flows[i].rtos;
    if (v == TcpSocketState::CA_RECOVERY) ++g_flows[i].recoveries;
}
// Optional cwnd traces of chosen flows (for small diagnostic runs): time (s), cwnd (bytes).
std::vector<uint32_t> g_trace_flow;          // flow index -> trace slot + 1 (0 = none)
std::vector<std::vector<double>> g_cwnd_t;
std::vector<std::vector<uint32_t>> g_cwnd_v;
void OnCwnd(uint32_t slot, uint32_t, uint32_t v) {
    g_cwnd_t[slot].push_back(Simulator::Now().GetSeconds());
    g_cwnd_v[slot].push_back(v);
}
// ... and their ssthresh and congestion-state changes: time (s), value (state: 0 = OPEN .. 4 = LOSS).
std::vector<std::vector<double>> g_ssth_t, g_state_t;
std::vector<std::vector<uint32_t>> g_ssth_v, g_state_v;
void OnSsth(uint32_t slot, uint32_t, uint32_t v) {
    g_ssth_t[slot].push_back(Simulator::Now().GetSeconds());
    g_ssth_v[slot].push_back(v);
}
void OnStateTr(uint32_t slot, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t v) {
    g_state_t[slot].push_back(Simulator::Now().GetSeconds());
    g_state_v[slot].push_back(uint32_t(v));
}
uint64_t g_done = 0;
bool g_stop_when_done = true;
double g_last_finish = 0.0;

// FCT at the receiving application (the linux rows) instead of at the sender's last ACK.
bool g_fct_at_receiver = false;
void CloseFlow(uint32_t i) { g_flows[i].sock->Close(); }
void Finish(uint32_t i) {
    Flow &f = g_flows[i];
    f.finish = Simulator::Now().GetSeconds();
    g_last_finish = f.finish;
    if (++g_done == g_flows.size() && g_stop_when_done) Simulator::Stop();
}
void OnAck(uint32_t i, SequenceNumber32, SequenceNumber32 v) {
    Flow &f = g_flows[i];
    if (!f.closed && uint64_t(v.GetValue()) >= f.size + 1) {   // ISN 0, SYN takes 1
        f.closed = true;
        Simulator::ScheduleNow(&CloseFlow, i);
        if (!g_fct_at_receiver) Finish(i);
    }
}
double g_connect_lead = 0.02;   // seconds
double g_time_offset = 0.0;     // seconds added to every trace start (= g_connect_lead)
void Established(uint32_t i, Ptr<Socket>) { g_flows[i].established = Simulator::Now().GetSeconds(); }
void ConnFailed(uint32_t, Ptr<Socket>) {}
void Connect(uint32_t i, Ipv4Address dst, uint16_t port) {
    g_flows[i].sock->SetConnectCallback(MakeBoundCallback(&Established, i), MakeBoundCallback(&ConnFailed, i));
    g_flows[i].sock->Connect(InetSocketAddress(dst, port));
}
// The application writes MSS-sized chunks as send-buffer space frees up (as BulkSend does);
// one Send() of a multi-megabyte packet makes ns-3's TcpTxBuffer slow down sharply.
std::vector<uint64_t> g_written;
void SendMore(uint32_t i) {
    Flow &f = g_flows[i];
    while (g_written[i] < f.size) {
        uint32_t chunk = uint32_t(std::min<uint64_t>(1460, f.size - g_written[i]));
        if (f.sock->GetTxAvailable() < chunk) break;
        if (f.sock->Send(Create<Packet>(chunk)) < 0) break;
        g_written[i] += chunk;
    }
}
void OnTxSpace(uint32_t i, Ptr<Socket>, uint32_t) {
    if (g_written[i] > 0 && g_written[i] < g_flows[i].size) SendMore(i);
}
void SendFlow(uint32_t i) {
    g_written[i] = 0;
    SendMore(i);   // a fresh socket's 4 MB buffer always takes the first chunk
}

// --- TcpDctcp with the reduced window floored at min_cwnd segments -------------------
// ns-3's TcpDctcp sets ssthresh = cwnd (1 - alpha/2) with no floor, and cwnd = ssthresh:
// from cwnd = 1 segment a mark leaves cwnd below one segment, and with nothing in flight
// the sender's silly-window check then sends nothing until the retransmission timer fires
// (5 ms here) although nothing was lost. ecnlab floors every ECN cut at min_cwnd segments
// (RFC 5681 never lets cwnd fall below one segment); so does this subclass.
class BenchDctcp : public TcpDctcp {
public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("bench::BenchDctcp").SetParent<TcpDctcp>().SetGroupName("Internet")
            .AddConstructor<BenchDctcp>();
        return tid;
    }
    static uint32_t s_min_segs;
    BenchDctcp() : TcpDctcp() {}
    BenchDctcp(const BenchDctcp &o) : TcpDctcp(o), m_alpha_seen(o.m_alpha_seen) {}
    // (the object's TypeId, and so its trace sources, are set after construction)
    void Init(Ptr<TcpSocketState> tcb) override {
        TcpDctcp::Init(tcb);
        if (s_kernel_cut && !m_watching) m_watching = TraceConnectWithoutContext("CongestionEstimate", MakeCallback(&BenchDctcp::OnAlpha, this));
    }
    bool m_watching = false;
    std::string GetName() const override { return "BenchDctcp"; }
    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t inflight) override {
        m_ca_cnt = 0;   // every reduction (read only with ns3_ca_counter "reset" / "bytes")
        if (s_keep_reduced) {
            // BenchSocket enters fast recovery from CA_CWR: the lost segment was sent before
            // the ECN reduction, whose window was already cut (RFC 3168 §6.1.2; Linux keeps
            // ssthresh entering recovery from CWR; ecnlab's sender does the same).
            return std::max(std::min(tcb->m_ssThresh.Get(), tcb->m_cWnd.Get()), 2 * tcb->m_segmentSize);
        }
        if (s_loss_halving && tcb->m_congState == TcpSocketState::CA_RECOVERY) {
            // EnterRecovery sets CA_RECOVERY before asking: a fast retransmit.
            ++s_loss_cuts;
            return HalfFlight(tcb);
        }
        m_rto_slow_start = false;   // a new reduction ends the slow start after a timeout
        m_cwr_grown = 0;
        m_last_call = Simulator::Now();
        m_prev_ssthresh = tcb->m_ssThresh;
        if (s_kernel_cut) {
            // dctcp_ssthresh: whole segments, cut = (cwnd x alpha) >> 11 with alpha in 1/1024.
            uint32_t seg = tcb->m_segmentSize, segs = tcb->m_cWnd / seg;
            uint32_t a = uint32_t(m_alpha_seen * 1024.0);
            uint32_t cut = uint32_t((uint64_t(segs) * a) >> 11);
            return std::max(segs - cut, s_min_segs) * seg;
        }
        return std::max(TcpDctcp::GetSsThresh(tcb, inflight), s_min_segs * tcb->m_segmentSize);
    }
    // Diagnostic (s_kernel_cut, `ns3_dctcp_cut` = "kernel"; default "bytes"): the ECN cut as
    // Linux's dctcp_ssthresh and ecnlab's linux profile take it, on the window in whole
    // segments with the cut rounded down and alpha truncated to 1/1024 (ns-3: (1 - alpha/2)
    // cwnd in bytes). ns-3's alpha itself stays a double (the kernel's EWMA rounds in 1/1024).
    static bool s_kernel_cut;
    static double s_alpha_init;
    double m_alpha_seen = s_alpha_init;
    void OnAlpha(uint32_t, uint32_t, double alpha) { m_alpha_seen = alpha; }
    // Diagnostic (s_grow_in_cwr, `ns3_dctcp_grow_in_cwr`; off): the window grows on ACKs of new
    // data without ECN-Echo also in CA_CWR, as ecnlab's textbook sender (ns-2's DCTCP,
    // `grow_unless_ece` in tcp/cc.rs). ns-3 3.44 calls no IncreaseWindow in CA_CWR and sets
    // cwnd = ssthresh when CWR ends; the growth is kept across that exit. This ACK carried ECE
    // iff m_ecnState is ECN_ECE_RCVD here (TcpSocketBase sets it on an ECE ACK before
    // ProcessAck, and an ACK without ECE clears it), the test TcpDctcp counts marked bytes by.
    void PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Time &rtt) override {
        TcpDctcp::PktsAcked(tcb, segmentsAcked, rtt);
        bool new_data = tcb->m_lastAckedSeq > m_prev_acked;
        m_prev_acked = tcb->m_lastAckedSeq;
        if (s_grow_in_cwr && new_data && segmentsAcked > 0 && tcb->m_congState == TcpSocketState::CA_CWR &&
            tcb->m_ecnState != TcpSocketState::ECN_ECE_RCVD) {
            TcpDctcp::IncreaseWindow(tcb, segmentsAcked);
            m_cwr_grown = tcb->m_cWnd;
            ++s_cwr_growth_acks;
        }
    }
    // Diagnostic (s_ca_counter, `ns3_ca_counter`; default "ns3"): congestion avoidance's
    // counter. "ns3": TcpLinuxReno's, segments counted against w = floor(cwnd / MSS) and kept
    // across window reductions; "reset": the same counter zeroed at every reduction (Linux,
    // tcp_init_cwnd_reduction: snd_cwnd_cnt = 0; ecnlab resets its counter too); "bytes":
    // ecnlab's textbook sender (tcp/sender.rs `grow`, RFC 3465 §2.1): bytes acknowledged
    // against cwnd in bytes, at most one MSS per ACK, zeroed at every reduction.
    void CongestionAvoidance(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override {
        uint32_t seg = tcb->m_segmentSize;
        if (s_ca_counter == 0) { TcpDctcp::CongestionAvoidance(tcb, segmentsAcked); return; }
        if (s_ca_counter == 1) {   // TcpLinuxReno::CongestionAvoidance (DCTCP: never suppressed)
            uint32_t w = std::max<uint32_t>(tcb->m_cWnd / seg, 1);
            if (m_ca_cnt >= w) { m_ca_cnt = 0; tcb->m_cWnd += seg; }
            m_ca_cnt += segmentsAcked;
            if (m_ca_cnt >= w) { uint32_t d = m_ca_cnt / w; m_ca_cnt -= d * w; tcb->m_cWnd += d * seg; }
            return;
        }
        m_ca_cnt += segmentsAcked * seg;
        if (m_ca_cnt >= tcb->m_cWnd) { m_ca_cnt -= tcb->m_cWnd; tcb->m_cWnd += seg; }
    }
    static uint32_t s_ca_counter;
    uint32_t m_ca_cnt = 0;
    void CwndEvent(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCAEvent_t ev) override {
        if (ev == TcpSocketState::CA_EVENT_COMPLETE_CWR && s_grow_in_cwr) {
            if (m_cwr_grown > tcb->m_cWnd) tcb->m_cWnd = m_cwr_grown;
            m_cwr_grown = 0;
        }
        if (ev == TcpSocketState::CA_EVENT_LOSS) m_rto_slow_start = true;   // a timeout
        // ReTxTimeout asks GetSsThresh (unless an earlier timeout already retransmitted the
        // head) and raises CA_EVENT_LOSS at the same instant, before leaving the old state.
        if (s_loss_halving && ev == TcpSocketState::CA_EVENT_LOSS && m_last_call == Simulator::Now()) {
            ++s_loss_cuts;
            uint32_t half = HalfFlight(tcb);
            // A timeout inside fast recovery keeps the smaller of the recovery's ssthresh and
            // half the flight (ecnlab's sender; Linux keeps it, tcp_enter_loss).
            tcb->m_ssThresh = tcb->m_congState == TcpSocketState::CA_RECOVERY ? std::min(m_prev_ssthresh, half) : half;
        }
        TcpDctcp::CwndEvent(tcb, ev);
    }
    // RFC 5681 eq. (4): max(FlightSize / 2, 2 SMSS), FlightSize = data sent and not cumulatively
    // acknowledged (ns-3's own bytesInFlight argument is its pipe estimate, which in a long
    // recovery without SACK counts every duplicate ACK as a delivered segment).
    static uint32_t HalfFlight(Ptr<const TcpSocketState> tcb) {
        int32_t fl = tcb->m_highTxMark.Get() - tcb->m_lastAckedSeq;
        return std::max(uint32_t(std::max(fl, 0)) / 2, 2 * tcb->m_segmentSize);
    }
    // Slow start with RFC 3465's limit L (segments counted per ACK), as ecnlab's sender
    // (cwnd += min(acked, L MSS)); 0 = ns-3's TcpLinuxReno, which counts every segment a
    // cumulative ACK covers (Linux), e.g. the whole run of segments the receiver held when a
    // timeout's retransmission fills the hole in front of them.
    // With the limit on, L is 1 in the slow start that follows a timeout (RFC 3465 §2.3, as
    // ecnlab's sender), until cwnd reaches ssthresh or another reduction.
    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override {
        uint32_t lim = s_abc_limit ? (m_rto_slow_start ? 1 : s_abc_limit) : 2;   // vs L = 2 when off
        if (tcb->m_cWnd < tcb->m_ssThresh && segmentsAcked > lim) {
            ++s_abc_capped;
            s_abc_capped_segs += segmentsAcked - lim;
            ++s_abc_by_state[std::min<uint32_t>(tcb->m_congState, 4)];
            if (s_abc_limit) segmentsAcked = lim;
        }
        TcpDctcp::IncreaseWindow(tcb, segmentsAcked);
        if (tcb->m_cWnd >= tcb->m_ssThresh) m_rto_slow_start = false;
    }
    static bool s_grow_in_cwr;
    static uint64_t s_cwr_growth_acks;
    uint32_t m_cwr_grown = 0;
    SequenceNumber32 m_prev_acked{0};
    static uint32_t s_abc_limit;
    static uint64_t s_abc_capped, s_abc_capped_segs, s_abc_by_state[5];
    static bool s_loss_halving;
    static bool s_keep_reduced;
    static uint64_t s_loss_cuts;
    Time m_last_call = Seconds(-1);
    bool m_rto_slow_start = false;
    uint32_t m_prev_ssthresh = 0;
    Ptr<TcpCongestionOps> Fork() override { return CopyObject<BenchDctcp>(this); }
};
uint32_t BenchDctcp::s_min_segs = 1;
uint32_t BenchDctcp::s_ca_counter = 0;
bool BenchDctcp::s_kernel_cut = false;
double BenchDctcp::s_alpha_init = 1.0;
bool BenchDctcp::s_grow_in_cwr = false;
uint64_t BenchDctcp::s_cwr_growth_acks = 0;
bool BenchDctcp::s_loss_halving = false;
bool BenchDctcp::s_keep_reduced = false;
uint64_t BenchDctcp::s_loss_cuts = 0;
uint32_t BenchDctcp::s_abc_limit = 0;
uint64_t BenchDctcp::s_abc_capped = 0, BenchDctcp::s_abc_capped_segs = 0, BenchDctcp::s_abc_by_state[5] = {};
TypeId BenchDctcpTypeId(uint32_t min_segs) { BenchDctcp::s_min_segs = min_segs; return BenchDctcp::GetTypeId(); }

// --- TcpSocketBase with RFC 5681 loss detection in CA_CWR ------------------------------
// ns-3 3.44's TcpSocketBase (1) counts duplicate ACKs in CA_CWR but never acts on them: a
// segment lost while an ECN reduction is in progress (CWR lasts until everything sent
// before the ECE is acknowledged, and the hole keeps it from ending) is recovered only by
// the retransmission timer; and (2) takes an ECE on an ACK during fast recovery or after a
// timeout as a new ECN reduction: EnterCwr moves CA_RECOVERY / CA_LOSS to CA_CWR, so the
// next partial ACK retransmits nothing and the remaining holes again wait for the timer.
// RFC 5681 §3.2 fast-retransmits on the third duplicate ACK whatever the ECN state, and RFC
// 3168 §6.1.2 reacts to ECN at most once per window, not by abandoning a loss recovery;
// Linux does both (tcp_fastretrans_alert enters Recovery from CWR; an ECE in Recovery or
// Loss changes no state), and so does ecnlab's sender. This subclass applies them, for the
// flows' senders only:
// (1) after the base class has processed a duplicate ACK in CA_CWR: on the third one, enter
//     fast recovery (keeping the ECN-reduced ssthresh, BenchDctcp::s_keep_reduced), on the
//     first and second, Limited Transmit (RFC 3042), as the base class does in CA_DISORDER;
// (2) an ECE on an ACK of new data in CA_RECOVERY or CA_LOSS is counted for DCTCP's alpha
//     (ECN_ECE_RCVD) without entering CA_CWR.
class BenchSocket : public TcpSocketBase {
public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("bench::BenchSocket").SetParent<TcpSocketBase>().SetGroupName("Internet")
            .AddConstructor<BenchSocket>();
        return tid;
    }
    BenchSocket() : TcpSocketBase() {}
    BenchSocket(const BenchSocket &o) : TcpSocketBase(o) {}
    static bool s_enabled;
    static uint64_t s_cwr_recoveries, s_cwr_limited_tx, s_ece_kept;
    // Diagnostic (trace_ack_flows): every ACK of this socket, after processing: time (s),
    // ack, dup ACK (0/1), state before, state after, dupAckCount, recover, recoverActive,
    // highTxMark, nextTx, Reno-SACKed bytes, lost bytes, ns-3's BytesInFlight, cwnd, ssthresh.
    int32_t m_diag = -1;
    static std::vector<std::vector<double>> s_ack_log;
    void Diag(const TcpHeader &h, uint32_t st0, bool dup) {
        if (m_diag < 0) return;
        s_ack_log[m_diag].insert(s_ack_log[m_diag].end(), {
            Simulator::Now().GetSeconds(), double(h.GetAckNumber().GetValue()), double(dup), double(st0),
            double(m_tcb->m_congState.Get()), double(m_dupAckCount), double(m_recover.GetValue()), double(m_recoverActive),
            double(m_tcb->m_highTxMark.Get().GetValue()), double(m_tcb->m_nextTxSequence.Get().GetValue()),
            double(m_txBuffer->GetSacked()), double(m_txBuffer->GetLost()), double(m_txBuffer->BytesInFlight()),
            double(m_tcb->m_cWnd.Get()), double(m_tcb->m_ssThresh.Get())});
    }
    // Receiver side (s_linux_rx, the `linux` comparisons): two of Linux's delayed-ACK rules
    // that ns-3 3.44 lacks, as ecnlab's linux receiver applies them (tcp/linux/receiver.rs):
    // quick-ACK mode at the connection's first data, an ACK for each of the first
    // s_quick_acks segments (tcp_incr_quickack / tcp_event_data_recv; ecnlab: 16), and an
    // immediate ACK for an in-order segment shorter than the MSS (a flow's last, pushed,
    // segment: tcp_measure_rcv_mss sets ICSK_ACK_PUSHED, tcp_cleanup_rbuf ACKs on the read).
    // Without them ns-3 holds the ACK of a flow's odd or short last segment for DelAckTimeout.
    static bool s_linux_rx;
    static uint32_t s_quick_acks;
    static uint64_t s_rx_quick, s_rx_pushed;
    uint32_t m_quick_used = 0;
protected:
    void ReceivedData(Ptr<Packet> packet, const TcpHeader &h) override {
        uint32_t sz = packet->GetSize();
        TcpSocketBase::ReceivedData(packet, h);
        if (!s_linux_rx || sz == 0 || !m_delAckEvent.IsPending()) return;
        bool quick = m_quick_used < s_quick_acks;
        if (!quick && sz >= m_tcb->m_segmentSize) return;
        if (quick) { ++m_quick_used; ++s_rx_quick; } else ++s_rx_pushed;
        m_delAckEvent.Cancel();
        m_delAckCount = 0;
        SendEmptyPacket(TcpHeader::ACK);
    }
    Ptr<TcpSocketBase> Fork() override { return CopyObject<BenchSocket>(this); }
    void ReceivedAck(Ptr<Packet> packet, const TcpHeader &h) override {
        TcpSocketState::TcpCongState_t st = m_tcb->m_congState.Get();
        SequenceNumber32 ack = h.GetAckNumber();
        bool dup = ack == m_txBuffer->HeadSequence() && ack < m_tcb->m_highTxMark && packet->GetSize() == 0;
        BenchReceivedAck(packet, h);
        Diag(h, st, dup);
    }
    // RFC 6582 §3.2 step 3 option 1 (ecnlab's sender): the full ACK that ends fast recovery
    // deflates cwnd to min(ssthresh, max(FlightSize, SMSS) + SMSS); ns-3 3.44 (option 2) sets
    // ssthresh, which lets a burst of ssthresh - FlightSize segments out when little is in flight.
    void ProcessAck(const SequenceNumber32 &ackNumber, bool scoreboardUpdated, uint32_t currentDelivered,
                    const SequenceNumber32 &oldHeadSequence, bool receivedData) override {
        TcpSocketState::TcpCongState_t st = m_tcb->m_congState.Get();
        TcpSocketBase::ProcessAck(ackNumber, scoreboardUpdated, currentDelivered, oldHeadSequence, receivedData);
        if (!s_exit_flight || st != TcpSocketState::CA_RECOVERY || m_tcb->m_congState.Get() != TcpSocketState::CA_OPEN) return;
        uint32_t seg = m_tcb->m_segmentSize;
        int32_t fl = m_tcb->m_highTxMark.Get() - m_txBuffer->HeadSequence();
        uint32_t cap = std::max(uint32_t(std::max(fl, 0)), seg) + seg;
        ++s_exits;
        if (m_tcb->m_cWnd.Get() > cap) {
            ++s_exits_deflated;
            s_exit_deflated_bytes += m_tcb->m_cWnd.Get() - cap;
            m_tcb->m_cWnd = cap;
            m_tcb->m_cWndInfl = cap;
        }
    }
    void BenchReceivedAck(Ptr<Packet> packet, const TcpHeader &h) {
        if (!s_enabled && !s_newreno) { TcpSocketBase::ReceivedAck(packet, h); return; }
        TcpSocketState::TcpCongState_t st = m_tcb->m_congState.Get();
        SequenceNumber32 ack = h.GetAckNumber();
        SequenceNumber32 una = m_txBuffer->HeadSequence();
        bool gate = false, saved_active = m_recoverActive, saved_lt = m_limitedTx;
        SequenceNumber32 saved_recover = m_recover;
        if (s_newreno) {
            // (3) `recover` of the last fast retransmit or timeout (ns-3 sets m_recover there
            // and keeps it while in CA_RECOVERY / CA_LOSS; CA_CWR reuses m_recover for its own end).
            if (st == TcpSocketState::CA_RECOVERY || st == TcpSocketState::CA_LOSS) { m_loss_recover = m_recover; m_loss_recover_set = true; }
            // (4) a cumulative ACK, other than a partial ACK in fast recovery, clears the
            // emulated Reno scoreboard before the base class discards the acknowledged data.
            if (ack > una && !(st == TcpSocketState::CA_RECOVERY && ack < m_recover) && m_txBuffer->GetSacked() > 0) {
                m_txBuffer->ResetRenoSack();
                ++s_reno_sack_resets;
            }
            // (3) a duplicate ACK that does not cover more than `recover`: no fast retransmit
            // (the base class's test is m_highRxAckMark >= m_recover while m_recoverActive), and
            // no Limited Transmit beyond the second duplicate ACK.
            bool dup = ack == una && ack < m_tcb->m_highTxMark && packet->GetSize() == 0 && !(h.GetFlags() & (TcpHeader::SYN | TcpHeader::FIN));
            if (dup && (st == TcpSocketState::CA_OPEN || st == TcpSocketState::CA_DISORDER) && m_loss_recover_set && ack <= m_loss_recover) {
                gate = true;
                m_recoverActive = true;
                m_recover = ack + 1;
                if (m_dupAckCount + 1 >= m_retxThresh) m_limitedTx = false;
                if (m_dupAckCount + 1 == m_retxThresh) ++s_recover_blocked;
            }
        }
        if (s_enabled && (st == TcpSocketState::CA_RECOVERY || st == TcpSocketState::CA_LOSS) && (h.GetFlags() & TcpHeader::ECE) &&
            m_tcb->m_ecnState != TcpSocketState::ECN_DISABLED && ack > m_txBuffer->HeadSequence() && m_ecnEchoSeq.Get() < ack) {
            m_ecnEchoSeq = ack;   // the base class then skips its EnterCwr
            m_tcb->m_ecnState = TcpSocketState::ECN_ECE_RCVD;
            ++s_ece_kept;
        }
        uint32_t dup_before = m_dupAckCount;
        TcpSocketBase::ReceivedAck(packet, h);
        if (gate) {
            m_limitedTx = saved_lt;
            if (m_tcb->m_congState.Get() != TcpSocketState::CA_RECOVERY) { m_recover = saved_recover; m_recoverActive = saved_active; }
        }
        if (!s_enabled) return;
        if (m_tcb->m_congState.Get() != TcpSocketState::CA_CWR || m_dupAckCount <= dup_before) return;
        bool may_recover = s_newreno ? !(m_loss_recover_set && ack <= m_loss_recover)
                                     : (!m_recoverActive || m_highRxAckMark.Get() >= m_recover);
        if (m_dupAckCount == m_retxThresh && may_recover) {
            BenchDctcp::s_keep_reduced = true;
            EnterRecovery(0);
            BenchDctcp::s_keep_reduced = false;
            ++s_cwr_recoveries;
            SendPendingData(m_connected);
        } else if (m_dupAckCount < m_retxThresh && m_limitedTx) {
            if (!m_sackEnabled) m_txBuffer->AddRenoSack();   // with SACK the scoreboard is real
            ++s_cwr_limited_tx;
            SendPendingData(m_connected);
        } else if (m_dupAckCount == m_retxThresh) {
            ++s_recover_blocked;
        }
    }
    SequenceNumber32 m_loss_recover{0};
    bool m_loss_recover_set = false;
public:
    static bool s_newreno;
    static uint64_t s_reno_sack_resets, s_recover_blocked;
    static bool s_exit_flight;
    static uint64_t s_exits, s_exits_deflated, s_exit_deflated_bytes;
};
bool BenchSocket::s_enabled = false;
bool BenchSocket::s_linux_rx = false;
uint32_t BenchSocket::s_quick_acks = 16;
uint64_t BenchSocket::s_rx_quick = 0, BenchSocket::s_rx_pushed = 0;
bool BenchSocket::s_newreno = false;
bool BenchSocket::s_exit_flight = false;
uint64_t BenchSocket::s_exits = 0, BenchSocket::s_exits_deflated = 0, BenchSocket::s_exit_deflated_bytes = 0;
uint64_t BenchSocket::s_reno_sack_resets = 0, BenchSocket::s_recover_blocked = 0;
std::vector<std::vector<double>> BenchSocket::s_ack_log;
uint64_t BenchSocket::s_cwr_recoveries = 0, BenchSocket::s_cwr_limited_tx = 0, BenchSocket::s_ece_kept = 0;
TypeId g_cc_tid;
TypeId g_recovery_tid = TcpClassicRecovery::GetTypeId();
Ptr<Socket> MakeSenderSocket(Ptr<Node> node, int32_t diag) {
    if (!BenchSocket::s_enabled && !BenchSocket::s_newreno && !BenchSocket::s_exit_flight && !BenchSocket::s_linux_rx && diag < 0) return Socket::CreateSocket(node, TcpSocketFactory::GetTypeId());
    // As TcpL4Protocol::CreateSocket, with the subclass.
    Ptr<TcpL4Protocol> tcp = node->GetObject<TcpL4Protocol>();
    ObjectFactory cc, rtt;
    cc.SetTypeId(g_cc_tid);
    rtt.SetTypeId(RttMeanDeviation::GetTypeId());
    Ptr<BenchSocket> s = CreateObject<BenchSocket>();
    s->SetNode(node);
    s->SetTcp(tcp);
    s->SetRtt(rtt.Create<RttEstimator>());
    s->SetCongestionControlAlgorithm(cc.Create<TcpCongestionOps>());
    ObjectFactory rec;
    rec.SetTypeId(g_recovery_tid);
    s->SetRecoveryAlgorithm(rec.Create<TcpRecoveryOps>());
    tcp->AddSocket(s);
    if (diag >= 0) {
        s->m_diag = diag;
        if (BenchSocket::s_ack_log.size() <= uint32_t(diag)) BenchSocket::s_ack_log.resize(diag + 1);
    }
    return s;
}

uint64_t g_tcn_over = 0, g_tcn_marked = 0, g_tcn_classed = 0, g_tcn_marked_data = 0;

// --- SP + DWRR with TCN (sojourn > T marks at dequeue); shared buffer -----------------
class TcnSpDwrr : public QueueDisc {
public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("bench::TcnSpDwrr").SetParent<QueueDisc>().SetGroupName("TrafficControl")
            .AddConstructor<TcnSpDwrr>();
        return tid;
    }
    TcnSpDwrr() : QueueDisc(QueueDiscSizePolicy::NO_LIMITS) {}
    uint32_t nq = 8, strict = 1, quantum = 1500;
    uint64_t buffer = 300000;
    int64_t threshold_ns = 78000;
    std::vector<int64_t> deficit;
    std::vector<bool> active;
    std::deque<uint32_t> rr;
    // Optional (s_see_device): account for the packet waiting in the 1-packet device queue as
    // ecnlab's port does. The queue disc hands a packet to the device when the one before it
    // starts its serialisation, i.e. one packet early: ecnlab's port still holds it (buffer)
    // and takes its sojourn when it starts on the wire. Emulated from the link's wire rate:
    // the handed packet starts at max(now, end of the one on the wire).
    static bool s_see_device;
    double wire_bps = 0;          // link rate as configured (nominal x 1502/1500)
    int64_t busy_until_ns = 0;    // end of serialisation of everything handed to the device
    int64_t pending_start_ns = 0; // start of the last packet handed, and its size
    uint32_t pending_bytes = 0;
    int64_t TxNs(uint32_t ip_bytes) const { return int64_t((ip_bytes + 2) * 8e9 / wire_bps + 0.5); }
private:
    bool DoEnqueue(Ptr<QueueDiscItem> item) override {
        uint64_t held = uint64_t(GetNBytes());
        if (s_see_device && Simulator::Now().GetNanoSeconds() < pending_start_ns) held += pending_bytes;
        if (held + item->GetSize() > buffer) { DropBeforeEnqueue(item, "buffer"); return false; }
        TcpHeader th;
        uint32_t cls = 0;
        if (item->GetPacket()->PeekHeader(th) && th.GetDestinationPort() >= 1009 && th.GetDestinationPort() < 49152)
            cls = (th.GetDestinationPort() - 9) / 1000;
        uint32_t q = std::min<uint32_t>(cls, nq - 1);
        if (q > 0) ++g_tcn_classed;
        item->SetTimeStamp(Simulator::Now());
        bool ok = GetInternalQueue(q)->Enqueue(item);
        if (ok && q >= strict && !active[q]) { active[q] = true; deficit[q] = quantum; rr.push_back(q); }
        return ok;
    }
    Ptr<QueueDiscItem> Mark(Ptr<QueueDiscItem> it) {
        int64_t now = Simulator::Now().GetNanoSeconds(), start = now;
        if (s_see_device) {
            start = std::max(now, busy_until_ns);
            busy_until_ns = start + TxNs(it->GetSize());
            pending_start_ns = start;
            pending_bytes = it->GetSize();
        }
        if (start - it->GetTimeStamp().GetNanoSeconds() > threshold_ns) {
            ++g_tcn_over;
            if (QueueDisc::Mark(it, "tcn")) { ++g_tcn_marked; if (it->GetSize() > 100) ++g_tcn_marked_data; }
        }
        return it;
    }
    Ptr<QueueDiscItem> DoDequeue() override {
        for (uint32_t q = 0; q < strict; ++q)
            if (GetInternalQueue(q)->GetNPackets() > 0) return Mark(GetInternalQueue(q)->Dequeue());
        while (!rr.empty()) {
            uint32_t q = rr.front();
            Ptr<const QueueDiscItem> head = GetInternalQueue(q)->Peek();
            if (!head) { rr.pop_front(); active[q] = false; continue; }
            if (deficit[q] >= int64_t(head->GetSize())) {
                deficit[q] -= head->GetSize();
                Ptr<QueueDiscItem> it = GetInternalQueue(q)->Dequeue();
                if (GetInternalQueue(q)->GetNPackets() == 0) { rr.pop_front(); active[q] = false; deficit[q] = 0; }
                return Mark(it);
            }
            // not enough credit: add a quantum and go to the back of the round (DRR)
            deficit[q] += quantum;
            rr.pop_front(); rr.push_back(q);
        }
        return nullptr;
    }
    bool CheckConfig() override {
        for (uint32_t i = 0; i < nq; ++i) {
            Ptr<DropTailQueue<QueueDiscItem>> iq = CreateObject<DropTailQueue<QueueDiscItem>>();
            iq->SetMaxSize(QueueSize("100000p"));
            AddInternalQueue(iq);
        }
        deficit.assign(nq, 0); active.assign(nq, false);
        return true;
    }
    void InitializeParams() override {}
};

bool TcnSpDwrr::s_see_device = false;
Ptr<QueueDisc> MakeTcn(uint32_t nq, uint32_t strict, uint32_t quantum, uint64_t buffer, int64_t thr_ns, double wire_bps) {
    Ptr<TcnSpDwrr> q = CreateObject<TcnSpDwrr>();
    q->wire_bps = wire_bps;
    q->nq = nq; q->strict = strict; q->quantum = quantum; q->buffer = buffer; q->threshold_ns = thr_ns;
    return q;
}

// --- DCTCP-RED as a plain FIFO (diagnostic twin of the RedQueueDisc set-up below) ----------
// `ns3_red_twin`: marks an ECT arrival when the queue disc holds >= K bytes before it, which
// is what RedQueueDisc does with QW = 1, MinTh = MaxTh = K, Gentle off (its test is
// qAvg >= MinTh with qAvg the bytes queued before the arrival); with full segments the same
// packets as ecnlab's "bytes with the arrival > K". Same marks as RedQueueDisc (checked on
// dctcp-8long: 212,335 marks after warm-up with either). `ns3_red_see_device_queue` also
// counts the packet waiting in the 1-packet device queue, which ecnlab's port holds in its
// buffer (everything not yet on the wire): RED then sees the backlog ecnlab's port sees.
class BenchRedK : public QueueDisc {
public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("bench::BenchRedK").SetParent<QueueDisc>().SetGroupName("TrafficControl")
            .AddConstructor<BenchRedK>();
        return tid;
    }
    BenchRedK() : QueueDisc(QueueDiscSizePolicy::NO_LIMITS) {}
    uint64_t buffer = 1000000, k = 97500;
    Ptr<Queue<Packet>> devq;   // null: the queue disc's bytes alone
private:
    bool DoEnqueue(Ptr<QueueDiscItem> item) override {
        uint64_t qd = GetNBytes();
        if (qd + item->GetSize() > buffer) { DropBeforeEnqueue(item, "buffer"); return false; }
        uint64_t held = qd + (devq ? devq->GetNBytes() : 0);
        if (held >= k) Mark(item, "K");
        return GetInternalQueue(0)->Enqueue(item);
    }
    Ptr<QueueDiscItem> DoDequeue() override { return GetInternalQueue(0)->Dequeue(); }
    bool CheckConfig() override {
        Ptr<DropTailQueue<QueueDiscItem>> iq = CreateObject<DropTailQueue<QueueDiscItem>>();
        iq->SetMaxSize(QueueSize("1000000p"));
        AddInternalQueue(iq);
        return true;
    }
    void InitializeParams() override {}
};
Ptr<QueueDisc> MakeRedK(uint64_t buffer, uint64_t k, Ptr<NetDevice> dev) {
    Ptr<BenchRedK> q = CreateObject<BenchRedK>();
    q->buffer = buffer; q->k = k;
    if (dev) q->devq = DynamicCast<PointToPointNetDevice>(dev)->GetQueue();
    return q;
}

// Per switch port: packets dropped by its queue disc, split into data (with payload) and
// pure ACKs/handshake packets, for comparing where the two simulators lose packets.
std::vector<uint64_t> g_port_drop_data, g_port_drop_ctl;
bool g_log_drops = false;                     // diagnostic: every drop's time and port
std::vector<double> g_drop_t;
std::vector<uint32_t> g_drop_port;
// ... with the queue disc's bytes before the drop, the packet's size, and its TCP sequence
// number and ports (to tell which flow lost what, for differential debugging).
std::vector<uint32_t> g_drop_qbytes, g_drop_size, g_drop_seq, g_drop_ports;
std::vector<Ptr<QueueDisc>> g_port_qd;
void PortDrop(uint32_t port, Ptr<const QueueDiscItem> item) {
    if (item->GetSize() > 100) ++g_port_drop_data[port]; else ++g_port_drop_ctl[port];
    if (g_log_drops) {
        g_drop_t.push_back(Simulator::Now().GetSeconds()); g_drop_port.push_back(port);
        g_drop_qbytes.push_back(g_port_qd[port]->GetNBytes()); g_drop_size.push_back(item->GetSize());
        TcpHeader th;
        uint32_t seq = 0, ports = 0;
        if (item->GetPacket()->PeekHeader(th)) {
            seq = th.GetSequenceNumber().GetValue();
            ports = (uint32_t(th.GetSourcePort()) << 16) | th.GetDestinationPort();
        }
        g_drop_seq.push_back(seq); g_drop_ports.push_back(ports);
    }
}
void WatchPortDrops(Ptr<NetDevice> dev, uint32_t port) {
    if (g_port_drop_data.size() <= port) { g_port_drop_data.resize(port + 1, 0); g_port_drop_ctl.resize(port + 1, 0); g_port_qd.resize(port + 1); }
    Ptr<TrafficControlLayer> tc = dev->GetNode()->GetObject<TrafficControlLayer>();
    g_port_qd[port] = tc->GetRootQueueDiscOnDevice(dev);
    tc->GetRootQueueDiscOnDevice(dev)->TraceConnectWithoutContext("Drop", MakeBoundCallback(&PortDrop, port));
}

// Diagnostic: every packet offered to one chosen port: time (s), queue-disc bytes after,
// admitted (0/1), TCP seq, src port << 16 | dst port.
std::vector<double> g_plog_t;
std::vector<uint32_t> g_plog_bytes, g_plog_ok, g_plog_seq, g_plog_ports, g_plog_src, g_plog_size;
Ptr<QueueDisc> g_plog_qd;
void PlogItem(uint32_t ok, Ptr<const QueueDiscItem> item) {
    g_plog_t.push_back(Simulator::Now().GetSeconds());
    g_plog_bytes.push_back(g_plog_qd->GetNBytes());
    g_plog_ok.push_back(ok);
    TcpHeader th;
    uint32_t seq = 0, ports = 0;
    if (item->GetPacket()->PeekHeader(th)) {
        seq = th.GetSequenceNumber().GetValue();
        ports = (uint32_t(th.GetSourcePort()) << 16) | th.GetDestinationPort();
    }
    g_plog_seq.push_back(seq); g_plog_ports.push_back(ports);
    Ptr<const Ipv4QueueDiscItem> ip = DynamicCast<const Ipv4QueueDiscItem>(item);
    g_plog_src.push_back(ip ? ip->GetHeader().GetSource().Get() : 0);
    g_plog_size.push_back(item->GetSize());
}
void PlogDrop(Ptr<const QueueDiscItem> item) { PlogItem(0, item); }
void PlogEnq(Ptr<const QueueDiscItem> item) { PlogItem(1, item); }
void LogPort(Ptr<NetDevice> dev) {
    Ptr<TrafficControlLayer> tc = dev->GetNode()->GetObject<TrafficControlLayer>();
    g_plog_qd = tc->GetRootQueueDiscOnDevice(dev);
    g_plog_qd->TraceConnectWithoutContext("Enqueue", MakeCallback(&PlogEnq));
    g_plog_qd->TraceConnectWithoutContext("Drop", MakeCallback(&PlogDrop));
}

// Diagnostic (`port_events_csv`, with `log_port`): every event of one port's packets, written
// as CSV at the end, for comparing the marking loop with ecnlab's `--pcap` and time series:
// E = admitted by the queue disc (after RED's decision: ce is the mark it got), X = dropped,
// D = handed by the queue disc to the 1-packet device queue, T = started on the wire
// (PhyTxBegin). qd_bytes = the queue disc's bytes after the event (RED compares the bytes
// BEFORE an arrival with K); the backlog ecnlab's port holds (everything not yet on the wire)
// is the E bytes minus the T bytes. Columns: t_s, ev, qd_bytes, ip_bytes, src (IPv4 as an
// integer), sport, dport, seq,
// ce (0/1), TCP flags (CWR 0x80, ECE 0x40).
struct PortEv { double t; char ev; uint32_t qd, size, src, sport, dport, seq; uint8_t ce, flags; };
std::vector<PortEv> g_pev;
void PevItem(char ev, Ptr<const QueueDiscItem> item) {
    PortEv e{Simulator::Now().GetSeconds(), ev, g_plog_qd->GetNBytes(), item->GetSize(), 0, 0, 0, 0, 0, 0};
    TcpHeader th;
    if (item->GetPacket()->PeekHeader(th)) {
        e.sport = th.GetSourcePort(); e.dport = th.GetDestinationPort();
        e.seq = th.GetSequenceNumber().GetValue(); e.flags = th.GetFlags();
    }
    Ptr<const Ipv4QueueDiscItem> ip = DynamicCast<const Ipv4QueueDiscItem>(item);
    e.ce = ip && ip->GetHeader().GetEcn() == Ipv4Header::ECN_CE;
    e.src = ip ? ip->GetHeader().GetSource().Get() : 0;
    g_pev.push_back(e);
}
void PevEnq(Ptr<const QueueDiscItem> item) { PevItem('E', item); }
void PevDrop(Ptr<const QueueDiscItem> item) { PevItem('X', item); }
void PevDeq(Ptr<const QueueDiscItem> item) { PevItem('D', item); }
void PevTx(Ptr<const Packet> p) {
    Ptr<Packet> c = p->Copy();
    PppHeader ppp; Ipv4Header ih; TcpHeader th;
    c->RemoveHeader(ppp);
    c->RemoveHeader(ih);
    PortEv e{Simulator::Now().GetSeconds(), 'T', g_plog_qd->GetNBytes(), ih.GetPayloadSize() + ih.GetSerializedSize(), ih.GetSource().Get(), 0, 0, 0,
             uint8_t(ih.GetEcn() == Ipv4Header::ECN_CE), 0};
    if (c->PeekHeader(th)) {
        e.sport = th.GetSourcePort(); e.dport = th.GetDestinationPort();
        e.seq = th.GetSequenceNumber().GetValue(); e.flags = th.GetFlags();
    }
    g_pev.push_back(e);
}
void LogPortEvents(Ptr<NetDevice> dev) {
    Ptr<TrafficControlLayer> tc = dev->GetNode()->GetObject<TrafficControlLayer>();
    g_plog_qd = tc->GetRootQueueDiscOnDevice(dev);
    g_plog_qd->TraceConnectWithoutContext("Enqueue", MakeCallback(&PevEnq));
    g_plog_qd->TraceConnectWithoutContext("Drop", MakeCallback(&PevDrop));
    g_plog_qd->TraceConnectWithoutContext("Dequeue", MakeCallback(&PevDeq));
    dev->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&PevTx));
}
void WritePortEvents(std::string path, double offset) {
    FILE *f = fopen(path.c_str(), "w");
    fprintf(f, "t_s,ev,qd_bytes,ip_bytes,src,sport,dport,seq,ce,flags\n");
    for (const PortEv &e : g_pev)
        fprintf(f, "%.9f,%c,%u,%u,%u,%u,%u,%u,%u,%u\n", e.t - offset, e.ev, e.qd, e.size, e.src, e.sport, e.dport, e.seq, e.ce, e.flags);
    fclose(f);
}

// Diagnostic (`trace_long_flows_csv`): the long flows' senders (BulkSend sockets) traced from
// just after their creation: cwnd (bytes), ssthresh (bytes), congestion state (0 OPEN .. 4
// LOSS), and each DCTCP alpha update (TcpDctcp's CongestionEstimate: bytes ECE-marked, bytes
// acknowledged in the observation window, new alpha). Rows: t_s, node, kind, a, b, c.
struct LfEv { double t; uint32_t node; char kind; double a, b, c; };
std::vector<LfEv> g_lfev;
uint32_t NodeOfContext(const std::string &ctx) { return uint32_t(std::stoul(ctx.substr(10, ctx.find('/', 10) - 10))); }
void LfCwnd(std::string ctx, uint32_t, uint32_t v) { g_lfev.push_back({Simulator::Now().GetSeconds(), NodeOfContext(ctx), 'w', double(v), 0, 0}); }
void LfSsth(std::string ctx, uint32_t, uint32_t v) { g_lfev.push_back({Simulator::Now().GetSeconds(), NodeOfContext(ctx), 's', double(v), 0, 0}); }
void LfState(std::string ctx, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t v) {
    g_lfev.push_back({Simulator::Now().GetSeconds(), NodeOfContext(ctx), 'c', double(v), 0, 0});
}
void LfAlpha(std::string ctx, uint32_t marked, uint32_t acked, double alpha) {
    g_lfev.push_back({Simulator::Now().GetSeconds(), NodeOfContext(ctx), 'a', double(marked), double(acked), alpha});
}
void HookLongFlow(uint32_t node) {
    std::string base = "/NodeList/" + std::to_string(node) + "/$ns3::TcpL4Protocol/SocketList/*/";
    Config::Connect(base + "CongestionWindow", MakeCallback(&LfCwnd));
    Config::Connect(base + "SlowStartThreshold", MakeCallback(&LfSsth));
    Config::Connect(base + "CongState", MakeCallback(&LfState));
    Config::Connect(base + "CongestionOps/$ns3::TcpDctcp/CongestionEstimate", MakeCallback(&LfAlpha));
}
void HookLongFlowSoon(uint32_t node) { Simulator::Schedule(NanoSeconds(1), &HookLongFlow, node); }
void WriteLongFlowEvents(std::string path, double offset) {
    FILE *f = fopen(path.c_str(), "w");
    fprintf(f, "t_s,node,kind,a,b,c\n");
    for (const LfEv &e : g_lfev) fprintf(f, "%.9f,%u,%c,%.0f,%.0f,%.9f\n", e.t - offset, e.node, e.kind, e.a, e.b, e.c);
    fclose(f);
}

void InstallRootQdisc(Ptr<NetDevice> dev, Ptr<QueueDisc> qd) {
    Ptr<TrafficControlLayer> tc = dev->GetNode()->GetObject<TrafficControlLayer>();
    tc->DeleteRootQueueDiscOnDevice(dev);
    tc->SetRootQueueDiscOnDevice(dev, qd);
}

void ConnectHopSinks() {
    Config::ConnectWithoutContext("/NodeList/*/DeviceList/*/$ns3::PointToPointNetDevice/PhyTxEnd",
                                  MakeCallback(&HopSink));
}
void ConnectBottleneck(Ptr<NetDevice> dev) {
    dev->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&BottleneckTx));
    Ptr<TrafficControlLayer> tc = dev->GetNode()->GetObject<TrafficControlLayer>();
    tc->GetRootQueueDiscOnDevice(dev)->TraceConnectWithoutContext("BytesInQueue", MakeCallback(&QdBytes));
    g_bneck_qd = tc->GetRootQueueDiscOnDevice(dev);
    Ptr<PointToPointNetDevice> p2p = DynamicCast<PointToPointNetDevice>(dev);
    p2p->GetQueue()->TraceConnectWithoutContext("BytesInQueue", MakeCallback(&DevBytes));
}

// Receiver side of each trace flow, by (sender IPv4, sender port): bytes its application read.
std::map<std::pair<uint32_t, uint16_t>, uint32_t> g_flow_by_peer;
std::vector<uint64_t> g_rx_bytes;

void AddFlow(Ptr<Node> src, uint32_t s, uint32_t d, Ipv4Address dst, uint16_t port, uint64_t size, double start, uint8_t dscp) {
    uint32_t i = g_flows.size();
    int32_t diag = (g_flows.size() < g_trace_flow.size() && g_trace_flow[g_flows.size()] > 0) ? int32_t(g_trace_flow[g_flows.size()] - 1) : -1;
    Ptr<Socket> sock = MakeSenderSocket(src, diag);
    sock->Bind();
    // The class travels as the destination port (9 + 1000 x class), not as the IP ToS: with
    // a non-zero ToS set by the application, ns-3 3.44's TCP sends its segments without ECT
    // (measured: TCN marked nothing); a socket priority tag does not survive the first hop.
    // The switch queue disc reads the TCP destination port; ACKs (to ephemeral ports) go
    // to queue 0, as ecnlab's ack_dscp = 0.
    port = uint16_t(port + 1000 * dscp);
    g_flows.push_back(Flow{s, d, size, start, -1.0, sock, 0, 0, -1.0, false});
    // The receiver finds this flow by the sender's address and (ephemeral) port.
    Address local;
    sock->GetSockName(local);
    g_flow_by_peer[{src->GetObject<Ipv4>()->GetAddress(1, 0).GetLocal().Get(),
                    InetSocketAddress::ConvertFrom(local).GetPort()}] = i;
    g_rx_bytes.push_back(0);
    // Pre-established connection: the handshake starts `g_connect_lead` before the flow
    // (ecnlab has no handshake and its FCT none). The lead must exceed the worst handshake:
    // a SYN waits behind whatever fills the sender's NIC FIFO (up to 4 MB = 3.4 ms at
    // 10 Gbps), and the data then waits there again; with a lead of 300 us, flows from
    // busy senders paid that wait twice. Not all at t = 0: hundreds of open endpoints make
    // ns-3's linear endpoint demultiplexing slow. Sockets are closed when their flow
    // completes. The caller shifts every trace start by the lead (g_time_offset), so that
    // even the first flows' handshakes end before their start: with starts at t < lead, the
    // first two flows of a trace began ~70 us (one handshake) late, and every later event
    // diverged from ecnlab's.
    double t_conn = std::max(0.0, start - g_connect_lead);
    Simulator::ScheduleWithContext(src->GetId(), Seconds(t_conn), &Connect, i, dst, port);
    sock->TraceConnectWithoutContext("HighestRxAck", MakeBoundCallback(&OnAck, i));
    sock->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCongState, i));
    if (i < g_trace_flow.size() && g_trace_flow[i] > 0)
    {
        sock->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&OnCwnd, g_trace_flow[i] - 1));
        sock->TraceConnectWithoutContext("SlowStartThreshold", MakeBoundCallback(&OnSsth, g_trace_flow[i] - 1));
        sock->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnStateTr, g_trace_flow[i] - 1));
    }
    sock->SetSendCallback(MakeBoundCallback(&OnTxSpace, i));
    g_written.push_back(0);
    Simulator::ScheduleWithContext(src->GetId(), Seconds(start), &SendFlow, i);
}

// Receivers: one listening socket per host; every accepted connection reads and discards,
// and closes when its peer closes (ns-3's PacketSink leaves them in CLOSE_WAIT forever, and
// every open endpoint slows ns-3's linear endpoint demultiplexing).
std::vector<Ptr<Socket>> g_sockets;
// Goodput: unique payload delivered to the applications of the bottleneck's host after warm-up.
uint32_t g_goodput_node = 0xffffffff;
uint64_t g_app_bytes = 0;
uint64_t RxDrain(Ptr<Socket> s) {
    bool count = s->GetNode()->GetId() == g_goodput_node && Simulator::Now().GetSeconds() >= g_warmup;
    uint64_t got = 0;
    while (Ptr<Packet> p = s->Recv()) {
        if (p->GetSize() == 0) break;
        got += p->GetSize();
    }
    if (count) g_app_bytes += got;
    return got;
}
void RxRead(Ptr<Socket> s) { RxDrain(s); }
// A trace flow's receiving socket: the flow completes when its application holds the last
// byte (read at once, in the callback of the segment that delivers it in order).
void RxReadFlow(uint32_t i, Ptr<Socket> s) {
    g_rx_bytes[i] += RxDrain(s);
    if (g_fct_at_receiver && g_flows[i].finish < 0 && g_rx_bytes[i] >= g_flows[i].size) Finish(i);
}
// Drops and marks over the measurement window, as ecnlab counts them (from the warm-up on):
// the queue disc's own statistics run from t = 0, so they are read at the warm-up too. (Until
// 2026-11-25 the driver reported the whole run: dctcp-8long's marks included the first 0.1 s.)
uint64_t g_drops_at_warmup = 0, g_marks_at_warmup = 0;
void SnapBneckAtWarmup() {
    g_drops_at_warmup = g_bneck_qd->GetStats().nTotalDroppedPackets;
    g_marks_at_warmup = g_bneck_qd->GetStats().nTotalMarkedPackets;
}
void ScheduleBneckWarmup() { if (g_warmup > 0) Simulator::Schedule(Seconds(g_warmup), &SnapBneckAtWarmup); }
uint64_t BneckDrops() { return g_bneck_qd ? g_bneck_qd->GetStats().nTotalDroppedPackets - g_drops_at_warmup : 0; }
uint64_t BneckMarks() { return g_bneck_qd ? g_bneck_qd->GetStats().nTotalMarkedPackets - g_marks_at_warmup : 0; }
void RxDoClose(Ptr<Socket> s) { s->Close(); }
void RxPeerClose(Ptr<Socket> s) { Simulator::ScheduleNow(&RxDoClose, s); }
void RxErr(Ptr<Socket>) {}
bool AcceptReq(Ptr<Socket>, const Address &) { return true; }
void Accepted(Ptr<Socket> s, const Address &from) {
    InetSocketAddress peer = InetSocketAddress::ConvertFrom(from);
    auto it = g_flow_by_peer.find({peer.GetIpv4().Get(), peer.GetPort()});
    if (it != g_flow_by_peer.end()) s->SetRecvCallback(MakeBoundCallback(&RxReadFlow, it->second));
    else s->SetRecvCallback(MakeCallback(&RxRead));
    s->SetCloseCallbacks(MakeCallback(&RxPeerClose), MakeCallback(&RxErr));
}
void Listen(Ptr<Node> n, uint16_t port) {
    // A BenchSocket listener (its accepted sockets are forks of it) for the linux receiver rules.
    Ptr<Socket> l = BenchSocket::s_linux_rx ? MakeSenderSocket(n, -1) : Socket::CreateSocket(n, TcpSocketFactory::GetTypeId());
    l->Bind(InetSocketAddress(Ipv4Address::GetAny(), port));
    l->Listen();
    l->SetAcceptCallback(MakeCallback(&AcceptReq), MakeCallback(&Accepted));
    g_sockets.push_back(l);
}

double TimeRun(double stop_s) {
    Simulator::Stop(Seconds(stop_s));
    auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    auto t1 = std::chrono::steady_clock::now();
    Account();
    return std::chrono::duration<double>(t1 - t0).count();
}

}  // namespace bench
"""


def main() -> None:
    cfg = json.load(open(sys.argv[1]))
    out_path = sys.argv[2]
    t_imp = time.perf_counter()
    from ns import ns  # noqa: E402  (7-10 s)
    import cppyy

    cppyy.cppdef("#include <chrono>\n" + CPP)
    b = cppyy.gbl.bench
    import_s = time.perf_counter() - t_imp

    tr, topo, sw, mk = cfg["transport"], cfg["topology"], cfg["switch"], cfg["marking"]
    SD, sv = ns.Config.SetDefault, ns.StringValue
    b.BenchDctcp.s_loss_halving = bool(cfg.get("ns3_dctcp_loss_halving", False))
    b.BenchDctcp.s_abc_limit = int(cfg.get("ns3_abc_limit", 0))
    b.BenchDctcp.s_grow_in_cwr = bool(cfg.get("ns3_dctcp_grow_in_cwr", False))
    b.BenchDctcp.s_ca_counter = ["ns3", "reset", "bytes"].index(cfg.get("ns3_ca_counter", "ns3"))
    b.BenchDctcp.s_kernel_cut = ["bytes", "kernel"].index(cfg.get("ns3_dctcp_cut", "bytes")) == 1
    b.BenchDctcp.s_alpha_init = float(cfg["transport"]["dctcp_alpha_init"])
    if cfg.get("ns3_dctcp_floor", True):
        b.g_cc_tid = b.BenchDctcpTypeId(int(tr["min_cwnd"]))
    else:
        b.g_cc_tid = ns.TcpDctcp.GetTypeId()
    SD("ns3::TcpL4Protocol::SocketType", ns.TypeIdValue(b.g_cc_tid))
    b.BenchSocket.s_enabled = bool(cfg.get("ns3_cwr_loss_detection", False))
    b.BenchSocket.s_newreno = bool(cfg.get("ns3_newreno_recover", False))
    b.BenchSocket.s_exit_flight = cfg.get("ns3_recovery_exit", "ssthresh") == "flight"
    # "classic" (textbook comparisons: RFC 5681/6582 window cut at once) or "prr" (RFC 6937,
    # the linux comparisons; ns-3's TcpPrrRecovery, also used in CA_CWR).
    rec_tid = ns.TcpPrrRecovery.GetTypeId() if cfg.get("ns3_recovery", "classic") == "prr" else ns.TcpClassicRecovery.GetTypeId()
    b.g_recovery_tid = rec_tid
    SD("ns3::TcpL4Protocol::RecoveryType", ns.TypeIdValue(rec_tid))
    b.BenchSocket.s_linux_rx = bool(cfg.get("ns3_linux_rx", False))
    b.g_fct_at_receiver = bool(cfg.get("ns3_fct_at_receiver", False))
    if "delayed_ack_timeout_us" in tr:
        SD("ns3::TcpSocket::DelAckTimeout", ns.TimeValue(ns.MicroSeconds(tr["delayed_ack_timeout_us"])))
    SD("ns3::TcpSocket::SegmentSize", ns.UintegerValue(tr["mss"]))
    SD("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(tr["init_cwnd"]))
    SD("ns3::TcpSocket::DelAckCount", ns.UintegerValue(tr["delayed_ack"]))
    SD("ns3::TcpSocket::SndBufSize", ns.UintegerValue(int(cfg.get("snd_buf_bytes", 4 << 20))))
    SD("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(1 << 26))
    SD("ns3::TcpSocket::ConnTimeout", ns.TimeValue(ns.MicroSeconds(tr["rto_init_us"])))
    SD("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.MicroSeconds(tr["rto_min_us"])))
    SD("ns3::TcpSocketBase::ClockGranularity", ns.TimeValue(ns.NanoSeconds(1)))
    SD("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(False))
    SD("ns3::TcpSocketBase::Sack", ns.BooleanValue(bool(cfg.get("ns3_sack", False))))
    SD("ns3::RttEstimator::InitialEstimation", ns.TimeValue(ns.MicroSeconds(tr["rto_init_us"])))
    SD("ns3::TcpDctcp::DctcpShiftG", ns.DoubleValue(tr["dctcp_g"]))
    SD("ns3::TcpDctcp::DctcpAlphaOnInit", ns.DoubleValue(tr["dctcp_alpha_init"]))

    # ---- topology
    # ns-3's point-to-point device puts a 2-byte PPP header on every packet, which ecnlab's
    # links do not carry: at the nominal rate a full segment (1502 B on the wire) took
    # 1.2016 us against ecnlab's 1.2 us, and a back-to-back train drifted 0.5 us every 250
    # packets, so that the two runs' events parted within the first millisecond. Every link
    # runs at nominal x 1502/1500, so that a full segment is serialised in exactly the same
    # time in both (a 40-byte ACK takes 33.6 ns against 32 ns).
    def wire_rate(gbps):
        return f"{round(gbps * 1e9 * 1502 / 1500)}bps"
    rate = wire_rate(topo["link_rate_gbps"])
    if topo["kind"] == "star":
        n_hosts, n_sw = topo["hosts"], 1
        links = [(h, n_hosts, rate, topo["link_delay_us"]) for h in range(n_hosts)]
    else:
        L, S, hpl = topo["leaves"], topo["spines"], topo["hosts_per_leaf"]
        n_hosts, n_sw = L * hpl, L + S
        core = wire_rate(topo.get("core_rate_gbps") or topo["link_rate_gbps"])
        links = [(h, n_hosts + h // hpl, rate, topo["host_delay_us"]) for h in range(n_hosts)]
        links += [(n_hosts + l, n_hosts + L + s, core, topo["core_delay_us"]) for l in range(L) for s in range(S)]
    nodes = ns.NodeContainer()
    nodes.Create(n_hosts + n_sw)
    ns.InternetStackHelper().Install(nodes)
    p2p = ns.PointToPointHelper()
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", sv("1p"))   # device queue: 1 packet
    addr = ns.Ipv4AddressHelper()
    host_ip = {}
    sw_devs, host_devs, to_host_dev = [], [], {}
    sw_bps = []   # each switch port's wire rate (bps)
    sw_names = []   # "leaf0->h0", "spine0->leaf1", ... as ecnlab names its ports
    for i, (a, bnode, r, d_us) in enumerate(links):
        p2p.SetDeviceAttribute("DataRate", sv(r))
        p2p.SetChannelAttribute("Delay", ns.TimeValue(ns.NanoSeconds(int(round(d_us * 1000)))))
        devs = p2p.Install(nodes.Get(a), nodes.Get(bnode))
        addr.SetBase(ns.Ipv4Address(f"10.{i // 256}.{i % 256}.0"), ns.Ipv4Mask("255.255.255.252"))
        ifc = addr.Assign(devs)
        if a < n_hosts:
            host_ip[a] = ifc.GetAddress(0)
            host_devs.append(devs.Get(0))
            to_host_dev[a] = devs.Get(1)
            sw_devs.append(devs.Get(1))
            sw_bps.append(int(r[:-3]))
            sw_names.append(f"{_sw_name(topo, bnode - n_hosts)}->h{a}")
        else:
            sw_devs += [devs.Get(0), devs.Get(1)]
            sw_bps += [int(r[:-3])] * 2
            sw_names += [f"{_sw_name(topo, a - n_hosts)}->{_sw_name(topo, bnode - n_hosts)}",
                         f"{_sw_name(topo, bnode - n_hosts)}->{_sw_name(topo, a - n_hosts)}"]
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    # ---- queue discs: no FqCoDel anywhere; hosts a tail-drop FIFO, switches the scheme
    # In bytes as ecnlab counts (IP packet = 1500 for a full segment; the 2-byte PPP header is
    # added after the queue disc): a FIFO of 2666 packets would hold a host's pure ACKs as
    # full packets.
    for dev in host_devs:
        b.InstallRootQdisc(dev, _fifo(ns, f'{cfg["nic_buffer_bytes"]}B'))
    # RED in byte mode, as ecnlab counts its buffer and K: in packet mode a pure ACK would take
    # as much of the buffer (and of K) as a full segment, and a port carrying data one way and
    # ACKs the other (every leaf-spine port) would drop and mark well below ecnlab's bytes
    # (measured: drops at 67,860 queued bytes, "200 packets", in leafspine-1q-red).
    # ns-3's test is qlen_before >= K bytes, i.e. > K - 1 with the arrival counted: with full
    # segments, ecnlab's qlen_with_arrival > K marks the same packets.
    b.TcnSpDwrr.s_see_device = bool(cfg.get("ns3_tcn_see_device_queue", False))
    red_twin = bool(cfg.get("ns3_red_twin", False)) or bool(cfg.get("ns3_red_see_device_queue", False))
    for dev, bps in zip(sw_devs, sw_bps):
        if mk["scheme"] == "red_k" and red_twin:
            q = b.MakeRedK(sw["buffer_bytes"], mk["k_packets"] * 1500,
                           dev if cfg.get("ns3_red_see_device_queue") else ns.Ptr[ns.NetDevice]())
        elif mk["scheme"] == "red_k":
            q = ns.CreateObject[ns.RedQueueDisc]()
            k = mk["k_packets"] * 1500
            for name, val in [("MaxSize", ns.QueueSizeValue(ns.QueueSize(f'{sw["buffer_bytes"]}B'))),
                              ("MinTh", ns.DoubleValue(k)), ("MaxTh", ns.DoubleValue(k)),
                              ("QW", ns.DoubleValue(1.0)), ("UseEcn", ns.BooleanValue(True)),
                              ("Gentle", ns.BooleanValue(False)), ("UseHardDrop", ns.BooleanValue(False)),
                              ("MeanPktSize", ns.UintegerValue(1500)),
                              ("LinkBandwidth", ns.DataRateValue(ns.DataRate(rate))),
                              ("LinkDelay", ns.TimeValue(ns.MicroSeconds(25)))]:
                q.SetAttribute(name, val)
        else:
            q = b.MakeTcn(sw["queues"], sw.get("strict", 0), sw.get("quantum_bytes", 1500), sw["buffer_bytes"],
                          int(mk["threshold_us"] * 1000), float(bps))
        b.InstallRootQdisc(dev, q)
    for i, dev in enumerate(sw_devs):
        b.WatchPortDrops(dev, i)
    nic_names = [f"h{h}->{_sw_name(topo, 0 if topo['kind'] == 'star' else h // topo['hosts_per_leaf'])}"
                 for h in range(len(host_devs))]
    for i, dev in enumerate(host_devs):
        b.WatchPortDrops(dev, len(sw_devs) + i)
    sw_names += nic_names
    if cfg.get("log_port"):
        dev = (sw_devs + list(host_devs))[sw_names.index(cfg["log_port"])]
        if cfg.get("port_events_csv"):
            b.LogPortEvents(dev)   # every event, to CSV (diagnostic)
        else:
            b.LogPort(dev)

    # ---- applications
    port = 9
    classes = sorted({0} | {int(l.strip().split(",")[4]) for l in open(cfg["trace_csv"]).readlines()[1:]}) if cfg["trace_csv"] else [0]
    for h in range(n_hosts):
        for c in classes:
            b.Listen(nodes.Get(h), port + 1000 * c)
    for f in cfg["long_flows"]:
        bs = ns.BulkSendHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(host_ip[f["dst"]], port).ConvertTo())
        bs.SetAttribute("MaxBytes", ns.UintegerValue(0))
        bs.SetAttribute("SendSize", ns.UintegerValue(tr["mss"]))
        bs.Install(nodes.Get(f["src"])).Start(ns.Seconds(0))
    if cfg.get("trace_long_flows_csv"):
        # The BulkSend sockets exist once the applications have started (t = 0).
        for f in cfg["long_flows"]:
            b.HookLongFlowSoon(int(f["src"]))
    n_trace = 0
    b.g_connect_lead = float(cfg.get("connect_lead_s", 0.02))
    traced = [int(x) for x in cfg.get("trace_cwnd_flows", [])]
    if traced:
        b.g_trace_flow.resize(max(traced) + 1, 0)
        b.g_cwnd_t.resize(len(traced))
        b.g_cwnd_v.resize(len(traced))
        for v in (b.g_ssth_t, b.g_ssth_v, b.g_state_t, b.g_state_v):
            v.resize(len(traced))
        for slot, fi in enumerate(traced):
            b.g_trace_flow[fi] = slot + 1
    # Trace flows start `offset` later than the trace says, so that every handshake (begun
    # `connect_lead_s` before its flow) ends before its flow starts; all times reported
    # (simulated time, warm-up, FCTs from each flow's own start) are relative to the offset.
    offset = b.g_connect_lead if cfg["trace_csv"] and not cfg["long_flows"] else 0.0
    b.g_time_offset = offset
    if cfg["trace_csv"]:
        with open(cfg["trace_csv"]) as fh:
            next(fh)
            for line in fh:
                st, s, d, size, cls = line.strip().split(",")
                b.AddFlow(nodes.Get(int(s)), int(s), int(d), host_ip[int(d)], port, int(size), float(st) + offset, int(cls))
                n_trace += 1
    b.g_stop_when_done = bool(n_trace) and not cfg["long_flows"]
    b.g_warmup = cfg["warmup_s"] + offset
    b.ConnectHopSinks()
    if cfg["port_to_host"] is not None:
        b.ConnectBottleneck(to_host_dev[cfg["port_to_host"]])
        b.ScheduleBneckWarmup()
        b.g_goodput_node = cfg["port_to_host"]

    b.g_log_drops = bool(cfg.get("log_drops", False))
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    run_s = b.TimeRun(cfg["duration_s"] + offset)
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    sim_end = ns.Simulator.Now().GetSeconds() - offset
    events = int(ns.Simulator.GetEventCount())

    res = {
        "simulator": "ns-3 3.44 (PyPI wheel: release build, logging and asserts compiled in)",
        "run_wall_s": run_s, "import_s": import_s, "process_wall_s": None,
        "events": events, "packet_hops": int(b.g_hops), "sim_time_s": sim_end,
        "peak_rss_mb_before_run": rss_before / 1024, "peak_rss_mb": rss_after / 1024,
    }
    if cfg["port_to_host"] is not None:
        win = sim_end - cfg["warmup_s"]
        res["bottleneck"] = {"goodput_bps": b.g_app_bytes * 8 / win, "avg_qlen_bytes": b.g_byte_s / win,
                             "tx_payload_bps_incl_retransmissions": b.g_payload * 8 / win,
                             "drops": int(b.BneckDrops()), "marks": int(b.BneckMarks())}
    res["dctcp_loss_cuts"] = int(b.BenchDctcp.s_loss_cuts)
    res["dctcp_cwr_growth_acks"] = int(b.BenchDctcp.s_cwr_growth_acks)
    # slow-start ACKs covering more than L segments (L = 2 when the limit is off) and the excess
    res["abc"] = {"limit": int(b.BenchDctcp.s_abc_limit), "acks_over_limit": int(b.BenchDctcp.s_abc_capped),
                  "segments_over_limit": int(b.BenchDctcp.s_abc_capped_segs),
                  "acks_over_limit_by_state": {n: int(b.BenchDctcp.s_abc_by_state[i]) for i, n in
                                               enumerate(["OPEN", "DISORDER", "CWR", "RECOVERY", "LOSS"])}}
    res["bench_socket"] = {"enabled": bool(b.BenchSocket.s_enabled),
                           "fast_recoveries_from_cwr": int(b.BenchSocket.s_cwr_recoveries),
                           "limited_transmits_in_cwr": int(b.BenchSocket.s_cwr_limited_tx),
                           "ece_in_recovery_or_loss_kept": int(b.BenchSocket.s_ece_kept),
                           "newreno_recover": bool(b.BenchSocket.s_newreno),
                           "fast_retransmits_refused_ack_within_recover": int(b.BenchSocket.s_recover_blocked),
                           "reno_scoreboards_cleared": int(b.BenchSocket.s_reno_sack_resets),
                           "recovery_exit_flight": bool(b.BenchSocket.s_exit_flight),
                           "recovery_exits": int(b.BenchSocket.s_exits),
                           "recovery_exits_deflated_below_ssthresh": int(b.BenchSocket.s_exits_deflated),
                           "recovery_exit_deflated_bytes": int(b.BenchSocket.s_exit_deflated_bytes),
                           "linux_rx": bool(b.BenchSocket.s_linux_rx),
                           "rx_quick_acks": int(b.BenchSocket.s_rx_quick),
                           "rx_pushed_acks": int(b.BenchSocket.s_rx_pushed)}
    res["ns3_tcp"] = {"recovery": cfg.get("ns3_recovery", "classic"), "sack": bool(cfg.get("ns3_sack", False)),
                      "del_ack_count": tr["delayed_ack"], "del_ack_timeout_us": tr.get("delayed_ack_timeout_us")}
    res["tcn_over_threshold"] = int(b.g_tcn_over)
    res["tcn_marked"] = int(b.g_tcn_marked)
    # marks on segments with payload (ecnlab's pure ACKs are not ECT, ns-3's are ECT(0))
    res["tcn_marked_data"] = int(b.g_tcn_marked_data)
    res["tcn_enqueued_in_queues_1_to_7"] = int(b.g_tcn_classed)
    res["port_drops"] = {sw_names[i]: {"data": int(b.g_port_drop_data[i]), "ctl": int(b.g_port_drop_ctl[i])}
                         for i in range(len(sw_names)) if b.g_port_drop_data[i] or b.g_port_drop_ctl[i]}
    if cfg.get("log_drops"):
        # time (s), port, queue-disc bytes before the drop, packet bytes, TCP seq, src port << 16 | dst port
        res["drop_log"] = [[float(b.g_drop_t[i]) - offset, sw_names[int(b.g_drop_port[i])], int(b.g_drop_qbytes[i]),
                            int(b.g_drop_size[i]), int(b.g_drop_seq[i]), int(b.g_drop_ports[i])] for i in range(len(b.g_drop_t))]
    if cfg.get("log_port") and cfg.get("port_events_csv"):
        b.WritePortEvents(cfg["port_events_csv"], offset)
    elif cfg.get("log_port"):
        res["port_log"] = [[float(b.g_plog_t[i]) - offset, int(b.g_plog_bytes[i]), int(b.g_plog_ok[i]), int(b.g_plog_seq[i]),
                            int(b.g_plog_ports[i]), int(b.g_plog_src[i]), int(b.g_plog_size[i])] for i in range(len(b.g_plog_t))]
    if cfg.get("trace_long_flows_csv"):
        b.WriteLongFlowEvents(cfg["trace_long_flows_csv"], offset)
    if n_trace:
        fl = b.g_flows
        recs = [(int(fl[i].size), (fl[i].finish - fl[i].start) * 1e6 if fl[i].finish >= 0 else None)
                for i in range(n_trace)]
        res["flows"] = {"completed": sum(1 for _, f in recs if f is not None),
                        "unfinished": sum(1 for _, f in recs if f is None)}
        res["fct"] = fct_summary(recs)
        res["fct_end"] = "receiver holds the last byte" if cfg.get("ns3_fct_at_receiver") else "last byte ACKed at the sender"
        res["flows"]["rto_entries"] = sum(int(fl[i].rtos) for i in range(n_trace))
        res["flows"]["recovery_entries"] = sum(int(fl[i].recoveries) for i in range(n_trace))
        # Handshakes that completed after the flow's start (their wait is inside the FCT).
        late = [fl[i].established - fl[i].start for i in range(n_trace) if fl[i].established > fl[i].start]
        res["flows"]["handshake_after_start"] = len(late)
        res["flows"]["handshake_late_us_total"] = sum(late) * 1e6
        # Per flow, in trace order: FCT (us, null if unfinished), CA_LOSS and CA_RECOVERY entries.
        names = ["OPEN", "DISORDER", "CWR", "RECOVERY", "LOSS"]
        res["cong_state_transitions"] = {f"{names[o]}->{names[v]}": int(b.g_cong_tr[o][v])
                                         for o in range(5) for v in range(5) if b.g_cong_tr[o][v]}
        res["per_flow"] = [{"size": s, "fct_us": f, "rtos": int(fl[i].rtos), "recoveries": int(fl[i].recoveries)}
                           for i, (s, f) in enumerate(recs)]
    if traced:
        res["cwnd_traces"] = {str(fi): {"t": list(b.g_cwnd_t[k]), "cwnd": [int(x) for x in b.g_cwnd_v[k]],
                                        "ssthresh_t": list(b.g_ssth_t[k]), "ssthresh": [int(x) for x in b.g_ssth_v[k]],
                                        "state_t": list(b.g_state_t[k]), "state": [int(x) for x in b.g_state_v[k]],
                                        "ack_log": list(b.BenchSocket.s_ack_log[k]) if k < len(b.BenchSocket.s_ack_log) else []}
                              for k, fi in enumerate(traced)}
    ns.Simulator.Destroy()
    res["process_wall_s"] = time.perf_counter() - T_PROC
    json.dump(res, open(out_path, "w"), indent=1)


def _sw_name(topo, k):
    """ecnlab's name of switch k (0-based over all switches): the star's "sw", leaves then spines."""
    if topo["kind"] == "star":
        return "sw"
    return f"leaf{k}" if k < topo["leaves"] else f"spine{k - topo['leaves']}"


def _fifo(ns, size):
    q = ns.CreateObject[ns.FifoQueueDisc]()
    q.SetAttribute("MaxSize", ns.QueueSizeValue(ns.QueueSize(size)))
    return q


def fct_summary(recs):
    def stats(v):
        v = sorted(v)
        if not v:
            return {"count": 0, "avg_us": None, "p50_us": None, "p99_us": None}
        pick = lambda q: v[min(len(v) - 1, int(q * len(v)))]  # noqa: E731
        return {"count": len(v), "avg_us": sum(v) / len(v), "p50_us": pick(0.5), "p99_us": pick(0.99)}
    done = [(s, f) for s, f in recs if f is not None]
    return {"all": stats([f for _, f in done]),
            "small": stats([f for s, f in done if s <= 100_000]),
            "medium": stats([f for s, f in done if 100_000 < s <= 10_000_000]),
            "large": stats([f for s, f in done if s > 10_000_000])}


if __name__ == "__main__":
    main()
