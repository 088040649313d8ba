//! Flow traces: a CSV file replayed exactly.
//!
//! The first non-comment line is a header naming the columns, in any order: `start`,
//! `src`, `dst`, `size`, and optionally `class`. Then one flow per line:
//! * `start` — seconds as a plain number (`0.0015`), or a time with a unit (`1.5ms`, `20us`);
//! * `src`, `dst` — host indices (0-based, different);
//! * `size` — bytes, a plain integer or a size with a unit (`60KB`); at least 1 byte;
//! * `class` — DSCP 0..=63 (default 0).
//!
//! Blank lines and lines starting with `#` are skipped; fields may be wrapped in double
//! quotes (no embedded commas). Rows need not be sorted; at least one is needed. Every
//! error names the file, the line and the column.

use ecnlab_core::units::{ByteSize, Duration};

/// One row of a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct TraceRow {
    pub start_ns: u64,
    pub src: u16,
    pub dst: u16,
    pub size: u64,
    pub class: u8,
}

const COLUMNS: [&str; 5] = ["start", "src", "dst", "size", "class"];

/// Read and validate a trace file.
pub(super) fn read_trace(path: &str, n_hosts: usize) -> Result<Vec<TraceRow>, String> {
    let text = super::read_input_file(path)?;
    parse_trace(&text, path, n_hosts)
}

/// Parse trace text; `path` names the file in errors.
pub(super) fn parse_trace(text: &str, path: &str, n_hosts: usize) -> Result<Vec<TraceRow>, String> {
    let mut lines =
        text.lines().enumerate().map(|(i, l)| (i + 1, l.trim())).filter(|(_, l)| !l.is_empty() && !l.starts_with('#'));
    let (header_line, header) = lines.next().ok_or_else(|| format!("'{path}': empty trace (no header line)"))?;
    // col[k] = index of COLUMNS[k] in the row.
    let mut col: [Option<usize>; 5] = [None; 5];
    let names: Vec<String> = header.split(',').map(|f| unquote(f).to_ascii_lowercase()).collect();
    for (i, name) in names.iter().enumerate() {
        let k = COLUMNS.iter().position(|c| c == name).ok_or_else(|| {
            format!(
                "'{path}' line {header_line}, column {}: unknown column '{name}' (expected start, src, dst, \
                 size and optionally class)",
                i + 1
            )
        })?;
        if col[k].is_some() {
            return Err(format!("'{path}' line {header_line}, column {}: column '{name}' appears twice", i + 1));
        }
        col[k] = Some(i);
    }
    for k in 0..4 {
        if col[k].is_none() {
            return Err(format!("'{path}' line {header_line}: the header has no '{}' column", COLUMNS[k]));
        }
    }
    let mut rows = Vec::new();
    for (line_no, line) in lines {
        let fields: Vec<&str> = line.split(',').map(unquote).collect();
        if fields.len() != names.len() {
            return Err(format!(
                "'{path}' line {line_no}: expected {} fields as in the header, found {}",
                names.len(),
                fields.len()
            ));
        }
        let at = |k: usize| {
            let i = col[k].expect("checked");
            (fields[i], format!("'{path}' line {line_no}, column {} ({})", i + 1, COLUMNS[k]))
        };
        let (s, loc) = at(0);
        let start_ns = parse_start(s).map_err(|e| format!("{loc}: {e}"))?;
        if start_ns > ecnlab_core::units::MAX_TIME_NS {
            let longest = ecnlab_core::units::Duration(ecnlab_core::units::MAX_TIME_NS);
            return Err(format!("{loc}: start {s} is later than the longest run, {longest}"));
        }
        let host = |k: usize| -> Result<u16, String> {
            let (s, loc) = at(k);
            let h: usize = s.parse().map_err(|_| format!("{loc}: cannot parse '{s}' as a host index"))?;
            if h >= n_hosts {
                return Err(format!("{loc}: host {h} does not exist ({n_hosts} hosts)"));
            }
            Ok(h as u16)
        };
        let (src, dst) = (host(1)?, host(2)?);
        if src == dst {
            let (_, loc) = at(2);
            return Err(format!("{loc}: dst {dst} equals src"));
        }
        let (s, loc) = at(3);
        let size = match s.parse::<u64>() {
            Ok(v) => v,
            // A bare number that is not a byte count (-5, 1.5): the unit parser would ask for a unit.
            Err(_) if s.parse::<f64>().is_ok() => {
                return Err(format!("{loc}: size {s} is not a whole number of bytes (at least 1)"));
            }
            Err(_) => {
                s.parse::<ByteSize>().map(|b| b.0).map_err(|e| format!("{loc}: cannot parse '{s}' as bytes: {e}"))?
            }
        };
        if size == 0 {
            return Err(format!("{loc}: size must be at least 1 byte"));
        }
        let class = match col[4] {
            None => 0,
            Some(_) => {
                let (s, loc) = at(4);
                match s.parse::<u8>() {
                    Ok(c) if c <= 63 => c,
                    _ => return Err(format!("{loc}: class '{s}' is not a DSCP value (0..=63)")),
                }
            }
        };
        rows.push(TraceRow { start_ns, src, dst, size, class });
    }
    if rows.is_empty() {
        // Replayed, a header alone is a run with no traffic whose result looks complete.
        return Err(format!(
            "'{path}' line {header_line}: a header and no flow; a trace lists at least one flow after its header"
        ));
    }
    Ok(rows)
}

fn unquote(f: &str) -> &str {
    let f = f.trim();
    f.strip_prefix('"').and_then(|g| g.strip_suffix('"')).unwrap_or(f).trim()
}

/// A plain number is seconds; anything else must be a duration with a unit.
fn parse_start(s: &str) -> Result<u64, String> {
    if let Ok(secs) = s.parse::<f64>() {
        if !secs.is_finite() || secs < 0.0 {
            return Err(format!("start '{s}' is not a non-negative number of seconds"));
        }
        return Ok((secs * 1e9).round() as u64);
    }
    s.parse::<Duration>()
        .map(|d| d.0)
        .map_err(|e| format!("cannot parse '{s}' as a start time (seconds, or a time with a unit such as 1.5ms): {e}"))
}
