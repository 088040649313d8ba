//! `ecnlab-switch`: the emulated switch's event loop.
//!
//! ```text
//! ecnlab-switch --config switch.json [--stats FILE] [--timeseries FILE]
//! ecnlab-switch --port veth0 --port veth1 [--rate 100Mbps] [--stats FILE]
//! ```
//!
//! Prints `ready` on stdout once every port is bound. SIGUSR1 starts the measurement
//! window, SIGUSR2 ends it; SIGTERM or SIGINT stop the switch, which then writes its report
//! (JSON: `total` and `window` counters per port and queue) to `--stats` or stdout.

use ecnlab_emu::config::EmuConfig;
use ecnlab_emu::report::Meter;
use ecnlab_emu::switch::{Switch, SLOT_SIZE};
use ecnlab_emu::sys::{self, PacketSocket};
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::Ordering;

/// Frames read from one socket before moving to the next (fairness between ports).
const RX_BATCH: usize = 32;
/// Longest sleep: bounds the delay with which a signal that arrives just before ppoll is
/// seen.
const MAX_SLEEP_NS: u64 = 20_000_000;
/// How often PACKET_STATISTICS is read (it is a counter that resets on read).
const SOCKSTAT_EVERY_NS: u64 = 100_000_000;

struct Args {
    config: Option<PathBuf>,
    ports: Vec<String>,
    rate: String,
    stats: Option<PathBuf>,
    timeseries: Option<PathBuf>,
}

const USAGE: &str =
    "usage: ecnlab-switch (--config FILE | --port IF [--port IF ...] [--rate RATE]) [--stats FILE] [--timeseries FILE]";

fn parse_args() -> Result<Args, String> {
    let mut a = Args { config: None, ports: Vec::new(), rate: "1Gbps".into(), stats: None, timeseries: None };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let mut val = || it.next().ok_or_else(|| format!("{k} needs a value"));
        match k.as_str() {
            "--config" | "-c" => a.config = Some(val()?.into()),
            "--port" | "-i" => a.ports.push(val()?),
            "--rate" => a.rate = val()?,
            "--stats" => a.stats = Some(val()?.into()),
            "--timeseries" => a.timeseries = Some(val()?.into()),
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            _ => return Err(format!("unknown argument `{k}`\n{USAGE}")),
        }
    }
    if a.config.is_none() && a.ports.is_empty() {
        return Err(USAGE.into());
    }
    Ok(a)
}

fn load_config(a: &Args) -> Result<EmuConfig, String> {
    match &a.config {
        Some(p) => {
            let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
            EmuConfig::from_json(&text).map_err(|e| format!("{}: {e}", p.display()))
        }
        None => {
            let ports: Vec<serde_json::Value> =
                a.ports.iter().map(|p| serde_json::json!({"ifname": p, "rate": a.rate})).collect();
            EmuConfig::from_json(&serde_json::json!({ "ports": ports }).to_string())
        }
    }
}

fn write_atomic(path: &PathBuf, text: &str) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

fn run() -> Result<(), String> {
    let args = parse_args()?;
    let cfg = load_config(&args)?;
    sys::install_signal_handlers().map_err(|e| format!("signal handlers: {e}"))?;
    sys::set_timer_slack_ns(1);
    if let Some(prio) = cfg.realtime_priority {
        if let Err(e) = sys::set_realtime(prio) {
            eprintln!("ecnlab-switch: warning: SCHED_FIFO {prio}: {e}; running with normal priority");
        }
    }
    let socks = open_ports(&cfg)?;
    let mut sw = Switch::new(&cfg, sys::realtime_ns())?;
    let mut meter = Meter::new(&sw, sw.start_ns);
    let mut ts_out = match &args.timeseries {
        Some(p) => {
            Some(std::io::BufWriter::new(std::fs::File::create(p).map_err(|e| format!("{}: {e}", p.display()))?))
        }
        None => None,
    };
    let sample_ns = cfg.stats_interval.map(|d| d.0).filter(|&d| d > 0);
    let spin_ns = cfg.spin.0;
    let mut fds: Vec<libc::pollfd> =
        socks.iter().map(|s| libc::pollfd { fd: s.fd(), events: libc::POLLIN, revents: 0 }).collect();
    let mut scratch = vec![0u8; SLOT_SIZE];
    let mut tx_error: Option<String> = None;

    println!("ready");
    std::io::stdout().flush().ok();

    let mut now = sys::realtime_ns();
    let mut next_sample = sample_ns.map(|d| now + d);
    let mut next_sockstat = now + SOCKSTAT_EVERY_NS;
    // When the loop should start its next round: at once after a batch, else at its deadline.
    let mut due = now;
    while !sys::STOP.load(Ordering::SeqCst) {
        sw.stalls.observe(sys::realtime_ns(), due);
        if sys::WINDOW_START.swap(false, Ordering::SeqCst) {
            read_sockstats(&socks, &mut sw);
            meter.start_window(&mut sw, sys::realtime_ns());
        }
        if sys::WINDOW_END.swap(false, Ordering::SeqCst) {
            read_sockstats(&socks, &mut sw);
            meter.end_window(&mut sw, sys::realtime_ns());
        }
        let got = receive(&socks, &mut sw, &mut scratch)?;
        // Egress: whatever the shapers allow now.
        now = sys::realtime_ns();
        sw.transmit(now, |p, b| match socks[p].send(b) {
            Ok(ok) => ok,
            Err(e) => {
                tx_error.get_or_insert_with(|| format!("port {p}: send: {e}"));
                false
            }
        });
        if now >= next_sockstat {
            read_sockstats(&socks, &mut sw);
            next_sockstat = now + SOCKSTAT_EVERY_NS;
        }
        if let (Some(t), Some(d)) = (next_sample, sample_ns) {
            if now >= t {
                if let Some(w) = ts_out.as_mut() {
                    // One line per sample: its rows of the time series, as columns.
                    let _ = serde_json::to_writer(&mut *w, &meter.sample(&mut sw, now)).map(|_| writeln!(w));
                }
                next_sample = Some(t + d * ((now - t) / d + 1));
            }
        }
        if got > 0 {
            due = sys::realtime_ns(); // after this round's work: its own time is no stall
            continue; // more may be waiting: read again before sleeping
        }
        // Sleep until a frame arrives or the next deadline.
        let mut deadline = now + MAX_SLEEP_NS;
        if let Some(t) = sw.next_tx_at(now) {
            deadline = deadline.min(t);
        }
        if let Some(t) = next_sample {
            deadline = deadline.min(t);
        }
        deadline = deadline.min(next_sockstat);
        due = deadline.max(now);
        sleep_until(&mut fds, deadline, spin_ns)?;
    }
    read_sockstats(&socks, &mut sw);
    let now = sys::realtime_ns();
    let mut report = meter.report(&mut sw, now);
    report.first_tx_error = tx_error;
    let text = serde_json::to_string_pretty(&report).unwrap() + "\n";
    if let Some(w) = ts_out.as_mut() {
        let _ = w.flush();
    }
    match &args.stats {
        Some(p) => write_atomic(p, &text).map_err(|e| format!("{}: {e}", p.display()))?,
        None => print!("{text}"),
    }
    Ok(())
}

/// A packet socket on each port.
fn open_ports(cfg: &EmuConfig) -> Result<Vec<PacketSocket>, String> {
    cfg.ports
        .iter()
        .map(|p| {
            PacketSocket::open(&p.ifname, cfg.socket_rcvbuf.0 as usize, 4 << 20)
                .map_err(|e| format!("port {}: {e}", p.ifname))
        })
        .collect()
}

/// Waits in ppoll for a frame on `fds` or until `deadline`; a wait shorter than `spin_ns`
/// returns at once (the loop spins instead).
fn sleep_until(fds: &mut [libc::pollfd], deadline: u64, spin_ns: u64) -> Result<(), String> {
    let now = sys::realtime_ns();
    if deadline > now {
        let wait = deadline - now;
        if wait > spin_ns {
            sys::ppoll(fds, Some(wait)).map_err(|e| format!("ppoll: {e}"))?;
        }
    }
    Ok(())
}

/// Adds PACKET_STATISTICS (reset by each read) to each port's socket counters.
fn read_sockstats(socks: &[PacketSocket], sw: &mut Switch) {
    for (i, s) in socks.iter().enumerate() {
        if let Ok((pk, dr)) = s.stats() {
            sw.ports[i].counters.socket_packets += pk;
            sw.ports[i].counters.socket_drops += dr;
        }
    }
}

/// Ingress: a batch of at most [`RX_BATCH`] frames from each port in turn, into the
/// switch. Returns the frames read.
fn receive(socks: &[PacketSocket], sw: &mut Switch, scratch: &mut [u8]) -> Result<usize, String> {
    let mut got = 0usize;
    for (i, s) in socks.iter().enumerate() {
        for _ in 0..RX_BATCH {
            let Some(slot) = sw.pool.alloc() else {
                // No slot: read the frame anyway (into scratch) and count it lost.
                match s.recv(scratch) {
                    Ok(Some(_)) => {
                        sw.ports[i].counters.rx_frames += 1;
                        sw.ports[i].counters.pool_exhausted += 1;
                        got += 1;
                        continue;
                    }
                    _ => break,
                }
            };
            match s.recv(sw.pool.slot_mut(slot)) {
                Ok(Some(r)) => {
                    got += 1;
                    let ts = r.ts_ns.unwrap_or_else(sys::realtime_ns);
                    sw.on_frame(i, slot, r.orig_len, ts);
                }
                Ok(None) => {
                    sw.pool.release(slot);
                    break;
                }
                Err(e) => {
                    sw.pool.release(slot);
                    return Err(format!("port {}: receive: {e}", sw.ports[i].ifname));
                }
            }
        }
    }
    Ok(got)
}

fn main() {
    if let Err(e) = run() {
        eprintln!("ecnlab-switch: error: {e}");
        std::process::exit(2);
    }
}
