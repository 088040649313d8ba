//! Traffic matrices: who sends to whom, for the Poisson patterns beyond the uniform ones.
//!
//! A matrix is a list of rows, each a group of senders, a group of receivers and a weight
//! (its share of the flows). A flow picks a row by weight, then its sender uniformly among
//! the row's senders, then its receiver uniformly among the row's receivers other than the
//! sender: three draws from the entry's endpoint stream. Flow sizes are drawn apart from
//! their endpoints, so a row's share of the flows is its share of the load.
//!
//! * `hotspot`: `hotspot_share` of the flows go to the `hotspots` (the incast of many
//!   senders on a few receivers that a storage or aggregation tier sees), the rest to the
//!   other receivers; senders uniform.
//! * `rack_skewed`: rack r (its ToR's number) sends and receives in proportion to
//!   1 / (r + 1)^skew (a Zipf law over racks; 0 is uniform), rack pairs by the product of
//!   their weights, the same rack included: the skew of rack-to-rack traffic that Roy et al.
//!   ("Inside the Social Network's (Datacenter) Network", SIGCOMM 2015, §4) measured.
//! * `matrix`: a CSV file of the fraction of the flows per source-destination pair, of hosts
//!   (header `src,dst,fraction`) or of racks (`src_rack,dst_rack,fraction`), each pair
//!   once; the fractions sum to 1 within [`SUM_TOLERANCE`] and are used as weights.

use ecnlab_core::rng::Rng;

/// The rows of a matrix and their cumulative weights.
pub(super) struct Matrix {
    /// Host groups (sorted, distinct) the rows name.
    groups: Vec<Vec<u16>>,
    /// (sender group, receiver group) of each row.
    rows: Vec<(u32, u32)>,
    cumulative: Vec<f64>,
}

impl Matrix {
    /// An empty matrix over `groups`.
    pub(super) fn new(groups: Vec<Vec<u16>>) -> Matrix {
        Matrix { groups, rows: Vec::new(), cumulative: Vec::new() }
    }

    /// Add a row: senders `s`, receivers `d` (group indices), weight `w` (> 0). False when no
    /// sender of it has a receiver other than itself (the row is left out).
    pub(super) fn add(&mut self, s: u32, d: u32, w: f64) -> bool {
        let (ss, dd) = (&self.groups[s as usize], &self.groups[d as usize]);
        let ok = !ss.is_empty() && (dd.len() >= 2 || (dd.len() == 1 && !(ss.len() == 1 && ss[0] == dd[0])));
        if !ok || w <= 0.0 {
            return false;
        }
        // A one-receiver row never draws that receiver as its sender.
        if dd.len() == 1 && ss.binary_search(&dd[0]).is_ok() {
            let only: Vec<u16> = ss.iter().copied().filter(|&h| h != dd[0]).collect();
            self.groups.push(only);
            self.rows.push((self.groups.len() as u32 - 1, d));
        } else {
            self.rows.push((s, d));
        }
        let last = self.cumulative.last().copied().unwrap_or(0.0);
        self.cumulative.push(last + w);
        true
    }

    pub(super) fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// One flow's (sender, receiver).
    pub(super) fn pick(&self, rng: &mut Rng) -> (u16, u16) {
        let total = *self.cumulative.last().expect("a matrix has a row");
        let u = rng.f64() * total;
        let r = self.cumulative.partition_point(|&c| c <= u).min(self.rows.len() - 1);
        let (s, d) = self.rows[r];
        let (ss, dd) = (&self.groups[s as usize], &self.groups[d as usize]);
        let src = ss[rng.below(ss.len() as u64) as usize];
        let dst = match dd.binary_search(&src) {
            Ok(pos) => {
                let k = rng.below(dd.len() as u64 - 1) as usize;
                dd[if k >= pos { k + 1 } else { k }]
            }
            Err(_) => dd[rng.below(dd.len() as u64) as usize],
        };
        (src, dst)
    }
}

/// How far a matrix file's fractions may sum from 1: room for fractions written to three or
/// four decimals (three rows of 0.3333), not for a row left out. The rows are weights, so
/// a sum within it changes nothing.
pub const SUM_TOLERANCE: f64 = 1e-3;

/// The rows of a matrix file: (source, destination, fraction), hosts or racks as the header
/// says; `n` hosts or racks. Errors are `'PATH' line L: what`.
pub(super) fn read_matrix(path: &str, n_hosts: usize, n_racks: Option<usize>) -> Result<MatrixFile, String> {
    let text = super::read_input_file(path)?;
    parse_matrix(&text, path, n_hosts, n_racks)
}

/// A matrix file as read: by racks or by hosts, and its rows.
#[derive(Debug)]
pub(super) struct MatrixFile {
    pub by_rack: bool,
    pub rows: Vec<(usize, usize, f64)>,
}

pub(super) fn parse_matrix(
    text: &str,
    path: &str,
    n_hosts: usize,
    n_racks: Option<usize>,
) -> Result<MatrixFile, String> {
    let mut lines =
        text.lines().enumerate().map(|(i, l)| (i + 1, l.trim())).filter(|(_, l)| !l.is_empty() && !l.starts_with('#'));
    let (hl, header) = lines.next().ok_or_else(|| format!("'{path}': empty matrix (no header line)"))?;
    let names: Vec<String> = header.split(',').map(|f| f.trim().to_ascii_lowercase()).collect();
    let by_rack = match names.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["src", "dst", "fraction"] => false,
        ["src_rack", "dst_rack", "fraction"] => true,
        _ => {
            return Err(format!(
            "'{path}' line {hl}: the header is not `src,dst,fraction` (hosts) or `src_rack,dst_rack,fraction` (racks)"
        ))
        }
    };
    let (what, n) = match (by_rack, n_racks) {
        (false, _) => ("host", n_hosts),
        (true, Some(r)) => ("rack", r),
        (true, None) => {
            return Err(format!(
                "'{path}': a matrix of racks needs a topology of racks (leaf_spine, fat_tree, clos, file)"
            ))
        }
    };
    let mut rows = Vec::new();
    let mut sum = 0.0;
    let mut first_line: std::collections::HashMap<(usize, usize), usize> = std::collections::HashMap::new();
    for (ln, line) in lines {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        if f.len() != 3 {
            return Err(format!("'{path}' line {ln}: expected 3 fields, found {}", f.len()));
        }
        let index = |s: &str| -> Result<usize, String> {
            let i: usize =
                s.parse().map_err(|_| format!("'{path}' line {ln}: cannot parse '{s}' as a {what} index"))?;
            if i >= n {
                return Err(format!("'{path}' line {ln}: {what} {i} does not exist ({n} {what}s)"));
            }
            Ok(i)
        };
        let (a, b) = (index(f[0])?, index(f[1])?);
        if a == b && !by_rack {
            return Err(format!("'{path}' line {ln}: src and dst are the same host"));
        }
        let x: f64 = f[2].parse().map_err(|_| format!("'{path}' line {ln}: cannot parse '{}' as a fraction", f[2]))?;
        if !(x.is_finite() && x >= 0.0) {
            return Err(format!("'{path}' line {ln}: fraction {x} is not a non-negative number"));
        }
        // A pair given twice is a typo or two files pasted together, not a sum to be made.
        if let Some(first) = first_line.insert((a, b), ln) {
            return Err(format!(
                "'{path}' line {ln}: the pair {a},{b} again (first on line {first}): give each pair once"
            ));
        }
        sum += x;
        rows.push((a, b, x));
    }
    if (sum - 1.0).abs() > SUM_TOLERANCE {
        return Err(format!("'{path}': the fractions sum to {sum}, not 1 (within {SUM_TOLERANCE})"));
    }
    Ok(MatrixFile { by_rack, rows })
}

/// The hosts of each rack, sorted.
pub(super) fn rack_groups(racks: &[u32]) -> Vec<Vec<u16>> {
    let n = racks.iter().map(|&r| r as usize + 1).max().unwrap_or(0);
    let mut g = vec![Vec::new(); n];
    for (h, &r) in racks.iter().enumerate() {
        g[r as usize].push(h as u16);
    }
    g
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_never_sends_to_its_own_sender() {
        let mut m = Matrix::new(vec![vec![0, 1, 2], vec![1], vec![3]]);
        assert!(m.add(0, 0, 1.0)); // within one group
        assert!(m.add(0, 1, 1.0)); // to host 1 alone: host 1 never sends in this row
        assert!(!m.add(1, 1, 1.0), "host 1 to itself only");
        assert!(m.add(2, 0, 2.0));
        let mut rng = Rng::new(3);
        let mut seen = std::collections::BTreeMap::new();
        for _ in 0..40_000 {
            let (s, d) = m.pick(&mut rng);
            assert_ne!(s, d);
            *seen.entry((s, d)).or_insert(0u32) += 1;
        }
        // Row weights 1 : 1 : 2; inside the first row 6 pairs, the second 2 (0 -> 1, 2 -> 1).
        let from3: u32 = seen.iter().filter(|((s, _), _)| *s == 3).map(|(_, n)| n).sum();
        assert!((19_000..21_000).contains(&from3), "{from3}");
        // To host 1: all of row 2 (10,000) and 2 of row 1's 6 pairs (3,333).
        let to1 = seen[&(0, 1)] + seen[&(2, 1)];
        assert!((12_500..14_200).contains(&to1), "{to1}");
        assert!(!seen.contains_key(&(1, 1)));
    }

    #[test]
    fn matrix_files_are_checked() {
        let ok = parse_matrix("src_rack,dst_rack,fraction\n0,1,0.75\n1,0,0.25\n", "m.csv", 8, Some(2)).unwrap();
        assert!(ok.by_rack && ok.rows.len() == 2);
        let e = parse_matrix("src,dst,fraction\n0,1,0.5\n1,0,0.4\n", "m.csv", 4, None).unwrap_err();
        assert_eq!(e, "'m.csv': the fractions sum to 0.9, not 1 (within 0.001)");
        // Fractions rounded to four decimals pass; a pair given twice does not.
        assert!(parse_matrix("src,dst,fraction\n0,1,0.3333\n1,2,0.3333\n2,0,0.3333\n", "m.csv", 4, None).is_ok());
        let e = parse_matrix("src,dst,fraction\n0,1,0.5\n1,0,0.25\n0,1,0.25\n", "m.csv", 4, None).unwrap_err();
        assert_eq!(e, "'m.csv' line 4: the pair 0,1 again (first on line 2): give each pair once");
        let e = parse_matrix("src,dst,fraction\n0,0,1\n", "m.csv", 4, None).unwrap_err();
        assert_eq!(e, "'m.csv' line 2: src and dst are the same host");
        let e = parse_matrix("src_rack,dst_rack,fraction\n0,3,1\n", "m.csv", 4, Some(2)).unwrap_err();
        assert_eq!(e, "'m.csv' line 2: rack 3 does not exist (2 racks)");
        let e = parse_matrix("src_rack,dst_rack,fraction\n0,1,1\n", "m.csv", 4, None).unwrap_err();
        assert!(e.contains("needs a topology of racks"), "{e}");
        let e = parse_matrix("a,b\n", "m.csv", 4, None).unwrap_err();
        assert!(e.starts_with("'m.csv' line 1: the header is not"), "{e}");
    }
}
