//! What an estimate writes: `summary.json` in the keys of `ecnlab run` where they apply
//! (built by `ecnlab_sim::summary::Summary::build`, the code that builds a run's), marked
//! `"approximate": true`, with an `estimate` block (how it was made); `fct`'s slowdowns are
//! FCT over the ideal FCT as a run's; `flows.csv` in the columns of a run's; `links.csv`,
//! one row per directed link that carries traffic, with its cluster.
//!
//! A link's queues in `queues` (and `marks`, `drops`) are its cluster representative's
//! simulated ones, named after the link; `events` and `packet_hops` count the estimate's
//! simulations. Not in an estimate: `probes`, `probe_rtt` (empty), `ports`, `long_flows`,
//! `counting`, `pfc`, `timeseries.csv` and `probes.csv`.

use crate::flows::NO_CONN;
use crate::Estimate;
use ecnlab_core::port::Port;
use ecnlab_sim::metrics::port_name;
use ecnlab_sim::packet::Packet;
use ecnlab_sim::summary::{FlowOutcome, Flows, Measurements, ReasonCounts, Summary};
use serde_json::{json, Value};
use std::io::{BufWriter, Write};

/// The end of the estimated run: when the last flow completes if the scenario stops when its
/// flows are done and every one does before `duration`, else `duration`.
pub fn end_ns(e: &Estimate) -> u64 {
    let duration = e.end_ns;
    let long_lived = e.flows.iter().any(|f| f.size.is_none());
    if !e.scn.metrics.stop_when_done || long_lived {
        return duration;
    }
    let mut last = 0u64;
    for (f, x) in e.flows.iter().zip(&e.est) {
        match x.fct_ns() {
            Some(fct) if f.start_ns + fct <= duration => last = last.max(f.start_ns + fct),
            _ => return duration,
        }
    }
    last.max(e.scn.metrics.warmup.0 + 1).min(duration)
}

/// The completed FCT of flow `i` (ns), if it completes by `end`.
fn done(e: &Estimate, i: usize, end: u64) -> Option<u64> {
    let f = &e.flows[i];
    e.est[i].fct_ns().filter(|&fct| f.start_ns < end && f.start_ns + fct <= end)
}

/// The flows as the summary sees them, made one at a time as it visits them: as a list they
/// would be 64 bytes a flow (1.5 GB for the 6,144-host fabric's 23 M).
struct Outcomes<'a> {
    e: &'a Estimate,
    end: u64,
}

impl Flows for Outcomes<'_> {
    fn visit(&self, each: &mut dyn FnMut(&FlowOutcome)) {
        for (i, f) in self.e.flows.iter().enumerate() {
            let fct = done(self.e, i, self.end);
            each(&FlowOutcome {
                class: f.class,
                size: f.size.map(|s| s.get()),
                start_s: f.start_ns as f64 / 1e9,
                fct_us: fct.map(|t| t as f64 / 1e3),
                slowdown: slowdown(self.e, i, fct),
            });
        }
    }
}

/// `summary.json`; `stages`: the wall-clock seconds of every stage, `workers`: where the
/// jobs ran.
pub fn summary(e: &Estimate, stages: &[(String, f64)], workers: &Value) -> Result<Value, String> {
    let scn = &e.scn;
    let net = &e.net;
    let end = end_ns(e);
    let (mut queues, mut nics, mut counters) = (Vec::new(), Vec::new(), Vec::new());
    for row in &e.links {
        let o = &e.ports[row.cluster as usize];
        let name = port_name(net, row.link as usize);
        for q in &o.queues {
            counters.push(ReasonCounts {
                marks_by_reason: q.marks_by_reason.clone(),
                drops_by_reason: q.drops_by_reason.clone(),
                unmarkable_by_reason: Default::default(),
            });
            queues.push(ecnlab_sim::summary::QueueSummary { port: name.clone(), ..q.clone() });
        }
        if let Some(n) = &o.nic {
            nics.push(ecnlab_sim::summary::NicSummary { port: name.clone(), ..n.clone() });
        }
    }
    // The queue each class maps to, as a switch port of the first switch's tier classifies.
    let first_switch = (net.n_hosts < net.n_nodes()).then(|| net.tier_of(net.n_hosts).to_string());
    let (sw, m) = first_switch.as_deref().map_or((&scn.switch, &scn.marking), |t| scn.tier_settings(t));
    let port = Port::<Packet>::new(sw, m, 1_000_000_000, 0)?;
    let max_class = e.flows.iter().map(|f| f.class as usize + 1).max().unwrap_or(0);
    let class_queue = (0..max_class).map(|q| port.classify(q as u8) as u64).collect();
    let timeouts = e.est.iter().map(|x| x.timeouts as u64).sum();
    let s = Summary::build(Measurements {
        scenario: scn.name.clone(),
        seed: e.seed,
        sim_time_s: end as f64 / 1e9,
        measure_from_s: scn.metrics.warmup.0 as f64 / 1e9,
        events: e.events,
        packet_hops: e.packet_hops,
        flows: Outcomes { e, end },
        timeouts,
        timeouts_after_finish: None,
        syn_timeouts: None,
        tlp_probes: None,
        undos: None,
        counters,
        queues,
        probes: Vec::new(),
        class_queue: Some(class_queue),
        ports: None,
        nics: Some(nics),
        long_flow_goodputs_bps: None,
        counting: None,
        pfc: None,
    });
    let mut v = serde_json::to_value(&s).map_err(|e| e.to_string())?;
    let obj = v.as_object_mut().expect("a summary is an object");
    obj.insert("approximate".into(), json!(true));
    let opts = &e.opts;
    let merged = e.links.len() - e.clusters.len();
    let caps = &e.window_caps;
    obj.insert(
        "estimate".into(),
        json!({
            "method": "Parsimon (Zhao, Goyal, Alizadeh, Anderson, NSDI 2023): one simulation per directed link \
                       (ecnlab's engine), links of alike workloads clustered, per-link delays by size and class added \
                       along each flow's path to its FCT alone on that path",
            "links": e.links.len(),
            "link_simulations": e.clusters.len(),
            "clusters": e.clusters.len(),
            "links_clustered_with_another": merged,
            "alone_simulations": e.n_alone,
            "clustering": {"distance": crate::cluster::DISTANCE, "threshold": opts.threshold},
            "max_hosts_per_link_simulation": opts.max_hosts,
            "window_cap": {
                "rule": opts.window_cap.describe(),
                "link_simulations_capped": caps.len(),
                "segments_min": caps.iter().min(),
                "segments_max": caps.iter().max(),
            },
            "paths": e.paths.describe(),
            "stages_s": stages.iter().map(|(k, t)| (k.clone(), json!(t))).collect::<serde_json::Map<_, _>>(),
            "workers": workers,
            "not_estimated": "probes, ports' utilization, long-lived flows' goodput, PFC pauses, packet accounting; \
                              queues are each link's cluster representative's",
        }),
    );
    Ok(v)
}

/// A completed flow's FCT over its ideal FCT, as `flows.csv` and `summary.json` give it.
fn slowdown(e: &Estimate, i: usize, fct_ns: Option<u64>) -> Option<f64> {
    let ideal = e.est[i].ideal_ns();
    fct_ns.filter(|_| ideal > 0).map(|t| t as f64 / ideal as f64)
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or(String::new(), |x| x.to_string())
}

/// Rows of `flows.csv` formatted at a time by one thread ([`write_flows`]): a few MB of text.
const ROWS_AT_A_TIME: usize = 1 << 16;

/// `flows.csv`, in the columns of a run's (`python/ecnlab/api.py`'s `FLOW_COLUMNS`): what an
/// estimate does not know (retransmissions, timeouts after the finish, handshake
/// retransmissions, tail loss probes, undos) is empty. Rows are formatted on the estimate's
/// threads, a chunk each, and written in order.
pub fn write_flows(e: &Estimate, w: impl Write) -> std::io::Result<()> {
    let mut w = BufWriter::with_capacity(1 << 20, w);
    writeln!(
        w,
        "id,spec,conn,src,dst,class,size,start_s,finish_s,fct_us,ideal_fct_us,slowdown,acked_bytes,timeouts,\
         timeouts_after_finish,retransmits,syn_timeouts,tlp_probes,undos"
    )?;
    let end = end_ns(e);
    let rows = |chunk: &[usize]| -> Vec<u8> {
        let mut out = Vec::with_capacity(chunk.len() * 128);
        for &i in chunk {
            flow_row(e, i, end, &mut out).expect("writing to memory does not fail");
        }
        out
    };
    let split =
        crate::passes::Split { chunk: std::num::NonZeroUsize::new(ROWS_AT_A_TIME).expect("> 0"), ..e.opts.split };
    let mut written = Ok(());
    crate::passes::in_chunks(0..e.flows.len(), split, rows, |text| {
        if written.is_ok() {
            written = w.write_all(&text);
        }
    });
    written?;
    w.flush()
}

/// Flow `i`'s row of `flows.csv`.
fn flow_row(e: &Estimate, i: usize, end: u64, w: &mut impl Write) -> std::io::Result<()> {
    let f = &e.flows[i];
    let x = &e.est[i];
    let fct = done(e, i, end);
    let started = f.start_ns < end;
    let ideal = (started && f.size.is_some()).then_some(x.ideal_ns() as f64 / 1e3);
    let slow = slowdown(e, i, fct);
    writeln!(
        w,
        "{i},{},{},{},{},{},{},{},{},{},{},{},{},{},,,,,",
        f.spec,
        if f.conn == NO_CONN { String::new() } else { f.conn.to_string() },
        f.src,
        f.dst,
        f.class,
        opt(f.size),
        f.start_ns as f64 / 1e9,
        opt(fct.map(|t| (f.start_ns + t) as f64 / 1e9)),
        opt(fct.map(|t| t as f64 / 1e3)),
        opt(ideal),
        opt(slow),
        opt(fct.and(f.size)),
        if started { x.timeouts.to_string() } else { String::new() },
    )
}

/// `links.csv`: every directed link that carries traffic, its load and cluster, and its
/// representative's simulated queue.
pub fn write_links(e: &Estimate, w: impl Write) -> std::io::Result<()> {
    let mut w = BufWriter::new(w);
    let net = &e.net;
    writeln!(w, "port,rate_bps,flows,bytes,load,cluster,simulated,avg_qlen_bytes,max_qlen_bytes,marks,drops")?;
    for r in &e.links {
        let rep = e.clusters[r.cluster as usize].representative;
        let o = &e.ports[r.cluster as usize];
        let q = &o.queues;
        let (avg, max, marks, drops) = match &o.nic {
            Some(n) => (n.avg_qlen_bytes, n.max_qlen_bytes, 0, n.drops),
            None => (
                q.iter().map(|x| x.avg_qlen_bytes).sum(),
                q.iter().map(|x| x.max_qlen_bytes).max().unwrap_or(0),
                q.iter().map(|x| x.marks).sum(),
                q.iter().map(|x| x.drops).sum(),
            ),
        };
        writeln!(
            w,
            "{},{},{},{},{},{},{},{},{},{},{}",
            port_name(net, r.link as usize),
            net.links[r.link as usize].rate_bps,
            r.flows,
            r.bytes,
            r.load,
            port_name(net, rep as usize),
            u8::from(rep == r.link),
            avg,
            max,
            marks,
            drops
        )?;
    }
    w.flush()
}
