//! Empirical flow-size CDFs: parsing, validation, sampling and exact means.
//!
//! Two file formats exist in the papers' code (REFERENCE-IMPLEMENTATIONS §3):
//!
//! * **packets** — `<packets> <unused> <cdf>`, the ns-2 files of TCN-NS2 / MQ-ECN-NS2 /
//!   PIAS-NS2 (`scripts/CDF_*.tcl`). ns-2 reads columns 1 and 3 and ignores the middle one.
//!   Sampling follows ns-2's `EmpiricalRandomVariable` with `INTER_INTEGRAL`: draw
//!   u ~ U[0, 1), take the first point whose probability is >= u, interpolate linearly from
//!   the previous point (u exactly on a point gives that point's size), round **up** to a
//!   whole packet, and multiply by 1460 B of TCP payload (REFERENCE-IMPLEMENTATIONS §2.11:
//!   "Flow size = ceil(empirical sample) x 1460 B").
//! * **bytes** — `<bytes> <cdf>`, the TrafficGenerator / ns3-ecn-sharp files
//!   (`conf/DCTCP_CDF.txt`, `VL2_CDF.txt`, `FB_CDF.txt`), sampled by TrafficGenerator's
//!   `cdf.c` the same way but without rounding to packets.
//!
//! Choices where the sources are silent or would break a simulator:
//! * A byte sample is a real number; a flow needs whole bytes, so it is rounded to the
//!   nearest byte (which keeps the mean; TrafficGenerator truncates when it stores the size).
//! * Every flow carries at least one unit: a sample that rounds to 0 becomes 1 packet or 1
//!   byte (a zero-size flow has no completion time). This matters only for CDFs that start
//!   at 0 — `fb_trafficgen` (28 % of its mass lies in [0, 3] B) moves its mean by 0.01 %.
//! * Probability mass below the first point (a file whose first probability is > 0) sits on
//!   the first size, as in ns-2.
//!
//! [`Cdf::mean_bytes`] is the exact expectation of the size actually sampled (interpolation,
//! rounding and the 1-unit floor included), computed in closed form per segment; the tests
//! check it against the means of REFERENCE-IMPLEMENTATIONS §3 and against sampling.

use ecnlab_core::rng::Rng;
use serde::{Deserialize, Serialize};

/// TCP payload of one packet in the ns-2 packet-format CDFs (MSS 1460 B, 1500 B on the wire).
pub const PACKET_PAYLOAD_BYTES: u64 = 1460;

/// How a CDF file gives its sizes (and so how samples are rounded).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CdfFormat {
    /// `<packets> <unused> <cdf>`; samples round up to whole 1460 B packets (ns-2).
    Packets,
    /// `<bytes> <cdf>`; samples are interpolated bytes (TrafficGenerator).
    Bytes,
}

impl CdfFormat {
    fn columns(self) -> usize {
        match self {
            CdfFormat::Packets => 3,
            CdfFormat::Bytes => 2,
        }
    }
    fn layout(self) -> &'static str {
        match self {
            CdfFormat::Packets => "<packets> <unused> <cdf>",
            CdfFormat::Bytes => "<bytes> <cdf>",
        }
    }
    fn name(self) -> &'static str {
        match self {
            CdfFormat::Packets => "packets",
            CdfFormat::Bytes => "bytes",
        }
    }
}

/// One point of a CDF: P(size <= value) = prob, `value` in the file's unit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CdfPoint {
    pub value: f64,
    pub prob: f64,
}

/// A validated empirical CDF.
#[derive(Clone, Debug)]
pub struct Cdf {
    name: String,
    format: CdfFormat,
    points: Vec<CdfPoint>,
}

/// The built-in CDFs: the files of `workloads/` (copied unchanged from the shared study,
/// each header names its source repository and commit), embedded in the binary.
const BUILTINS: &[(&str, &str)] = &[
    ("websearch", include_str!("../../../../workloads/websearch.cdf")),
    ("datamining", include_str!("../../../../workloads/datamining.cdf")),
    ("hadoop", include_str!("../../../../workloads/hadoop.cdf")),
    ("cache", include_str!("../../../../workloads/cache.cdf")),
    ("websearch_bytes", include_str!("../../../../workloads/websearch_bytes.cdf")),
    ("datamining_bytes", include_str!("../../../../workloads/datamining_bytes.cdf")),
    ("fb_trafficgen", include_str!("../../../../workloads/fb_trafficgen.cdf")),
];

const BUILTIN_NAMES: &[&str] =
    &["websearch", "datamining", "hadoop", "cache", "websearch_bytes", "datamining_bytes", "fb_trafficgen"];

/// Names accepted by [`load_cdf`] without a file.
pub fn builtin_cdf_names() -> &'static [&'static str] {
    BUILTIN_NAMES
}

/// A built-in CDF by name, or a CDF file by path. `format` forces the file format
/// (default: detected from the number of columns, 3 = packets, 2 = bytes). Relative paths
/// are relative to the working directory of the process.
pub fn load_cdf(name_or_path: &str, format: Option<CdfFormat>) -> Result<Cdf, String> {
    if let Some(&(name, text)) = BUILTINS.iter().find(|(n, _)| *n == name_or_path) {
        let cdf = Cdf::parse(text, None, &format!("built-in CDF '{name}'"))?;
        if let Some(f) = format {
            if f != cdf.format {
                return Err(format!(
                    "built-in CDF '{name}' is in {} format; drop cdf_format or set it to \"{}\"",
                    cdf.format.name(),
                    cdf.format.name()
                ));
            }
        }
        return Ok(Cdf { name: name.to_string(), ..cdf });
    }
    let path = std::path::Path::new(name_or_path);
    let looks_like_name = !name_or_path.is_empty() && !name_or_path.contains(['/', '\\', '.']);
    if looks_like_name && !path.exists() {
        let hint = match closest(name_or_path, BUILTIN_NAMES) {
            Some(n) => format!(" (did you mean '{n}'?)"),
            None => format!(" (built-ins: {}; or give a file path)", BUILTIN_NAMES.join(", ")),
        };
        return Err(format!("no built-in CDF named '{name_or_path}'{hint}"));
    }
    let text = super::read_input_file(name_or_path)?;
    Cdf::parse(&text, format, &format!("'{name_or_path}'"))
}

/// The built-in name closest to `s` by edit distance, if it is plausibly a typo.
fn closest<'a>(s: &str, names: &[&'a str]) -> Option<&'a str> {
    let best = names.iter().map(|n| (crate::de::edit_distance(s, n), *n)).min()?;
    (best.0 <= 3.max(s.len() / 3)).then_some(best.1)
}

/// `∫_0^x ceil(t) dt`, valid for any real x (n = floor(x)).
fn ceil_integral(x: f64) -> f64 {
    let n = x.floor();
    n * (n + 1.0) / 2.0 + (x - n) * (n + 1.0)
}

impl Cdf {
    /// Parse CDF text. `origin` names the source in errors (`'my.cdf'`, `built-in CDF 'x'`).
    /// Blank lines and `#` comments (whole-line or trailing) are ignored.
    pub fn parse(text: &str, format: Option<CdfFormat>, origin: &str) -> Result<Cdf, String> {
        let mut format = format;
        let mut points: Vec<CdfPoint> = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line_no = i + 1;
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let fields: Vec<&str> = line.split_whitespace().collect();
            let fmt = match format {
                Some(f) => f,
                None => {
                    let f = match fields.len() {
                        3 => CdfFormat::Packets,
                        2 => CdfFormat::Bytes,
                        n => {
                            return Err(format!(
                                "{origin} line {line_no}: expected 3 columns (<packets> <unused> <cdf>) or 2 \
                                 (<bytes> <cdf>), found {n}"
                            ))
                        }
                    };
                    format = Some(f);
                    f
                }
            };
            if fields.len() != fmt.columns() {
                return Err(format!(
                    "{origin} line {line_no}: expected {} columns ({}) for the {} format, found {}",
                    fmt.columns(),
                    fmt.layout(),
                    fmt.name(),
                    fields.len()
                ));
            }
            let mut nums = [0.0f64; 3];
            for (k, f) in fields.iter().enumerate() {
                nums[k] = match f.parse::<f64>() {
                    Ok(v) if v.is_finite() => v,
                    _ => return Err(format!("{origin} line {line_no}: cannot parse '{f}' as a number")),
                };
            }
            let (value, prob) = (nums[0], nums[fields.len() - 1]);
            if value < 0.0 {
                return Err(format!("{origin} line {line_no}: size {value} is negative"));
            }
            if !(0.0..=1.0).contains(&prob) {
                return Err(format!("{origin} line {line_no}: probability {prob} is not in [0, 1]"));
            }
            if let Some(last) = points.last() {
                if value < last.value {
                    return Err(format!(
                        "{origin} line {line_no}: size {value} is below the previous size {} (sizes must be \
                         non-decreasing)",
                        last.value
                    ));
                }
                if prob < last.prob {
                    return Err(format!(
                        "{origin} line {line_no}: probability {prob} is below the previous probability {} \
                         (probabilities must be non-decreasing)",
                        last.prob
                    ));
                }
            }
            points.push(CdfPoint { value, prob });
        }
        if points.len() < 2 {
            return Err(format!("{origin}: a CDF needs at least 2 points, found {}", points.len()));
        }
        let last = points.last_mut().expect("two points");
        if (last.prob - 1.0).abs() > 1e-9 {
            return Err(format!("{origin}: the last probability is {}, it must be 1", last.prob));
        }
        last.prob = 1.0;
        if last.value <= 0.0 {
            return Err(format!("{origin}: every size is 0: a flow carries at least one byte"));
        }
        Ok(Cdf { name: origin.to_string(), format: format.expect("set with the first point"), points })
    }

    /// The built-in name, or the origin given to [`Cdf::parse`].
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn format(&self) -> CdfFormat {
        self.format
    }

    pub fn points(&self) -> &[CdfPoint] {
        &self.points
    }

    /// The flow size in bytes for the uniform variate `u` in [0, 1) (inverse transform).
    pub fn size_at(&self, u: f64) -> u64 {
        let p = &self.points;
        let i = p.partition_point(|pt| pt.prob < u).min(p.len() - 1);
        let x = if i > 0 && u < p[i].prob {
            let (a, b) = (p[i - 1], p[i]);
            a.value + (u - a.prob) * (b.value - a.value) / (b.prob - a.prob)
        } else {
            p[i].value
        };
        match self.format {
            CdfFormat::Packets => (x.ceil() as u64).max(1) * PACKET_PAYLOAD_BYTES,
            CdfFormat::Bytes => ((x + 0.5).floor() as u64).max(1),
        }
    }

    /// Draw one flow size in bytes.
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        self.size_at(rng.f64())
    }

    /// The exact mean of [`Cdf::sample`] in bytes (interpolation, rounding and the one-unit
    /// floor included).
    pub fn mean_bytes(&self) -> f64 {
        // E[h(X)] for X uniform-linear on [a, b] (a == b: a point mass), where h is the
        // rounding rule; plus the 1-unit floor, which only lifts samples that round to 0.
        let rule = |a: f64, b: f64| -> f64 {
            let (mean, p_zero) = match self.format {
                CdfFormat::Packets => {
                    if b - a > 1e-6 {
                        ((ceil_integral(b) - ceil_integral(a)) / (b - a), ((0.0 - a) / (b - a)).clamp(0.0, 1.0))
                    } else {
                        (b.ceil(), if b <= 0.0 { 1.0 } else { 0.0 })
                    }
                }
                CdfFormat::Bytes => {
                    if b - a > 1e-6 {
                        (
                            (ceil_integral(b + 0.5) - ceil_integral(a + 0.5)) / (b - a) - 1.0,
                            ((0.5 - a) / (b - a)).clamp(0.0, 1.0),
                        )
                    } else {
                        ((b + 0.5).floor(), if b < 0.5 { 1.0 } else { 0.0 })
                    }
                }
            };
            mean + p_zero
        };
        let p = &self.points;
        let mut m = p[0].prob * rule(p[0].value, p[0].value);
        for w in p.windows(2) {
            let weight = w[1].prob - w[0].prob;
            if weight > 0.0 {
                m += weight * rule(w[0].value, w[1].value);
            }
        }
        match self.format {
            CdfFormat::Packets => m * PACKET_PAYLOAD_BYTES as f64,
            CdfFormat::Bytes => m,
        }
    }
}
