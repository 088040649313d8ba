//! Topology files (`topology.kind = "file"`): an operator's fabric as data, in TOML.
//!
//! ```toml
//! hosts = 4                  # hosts h0 .. h3 (a scenario's host i is hi)
//! link_rate = "100Gbps"      # for links that give no rate of their own (optional)
//! link_delay = "1us"         # for links that give no delay of their own (optional)
//!
//! [[switches]]
//! name = "tor0"
//! tier = "tor"               # `[tiers.tor]` sets this tier's ports apart (default "switch")
//!
//! [[links]]
//! ends = ["h0", "tor0"]      # a cable: a directed link each way
//! rate = "100Gbps"
//! delay = "1us"
//! ```
//!
//! Nodes are the hosts, then the switches in file order; links keep file order. Routes are
//! shortest paths by hop count with per-flow ECMP among them ([`crate::routing`]). A file
//! is checked as a scenario is, each error one line naming the file and the entry: a link
//! from a node to itself or between two hosts (hosts do not forward), a node that does not
//! exist, a rate of 0, a host without a link, a switch name given twice or taken by a host,
//! hosts that no path joins.

use super::Net;
use crate::config::limits::{MAX_CORE_LINKS, MAX_DELAY_NS, MAX_HOSTS};
use ecnlab_core::units::{echo, Duration, Rate};
use serde::Deserialize;
use std::collections::HashMap;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Doc {
    hosts: usize,
    #[serde(default)]
    link_rate: Option<Rate>,
    #[serde(default)]
    link_delay: Option<Duration>,
    #[serde(default)]
    switches: Vec<SwitchEntry>,
    #[serde(default)]
    links: Vec<LinkEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SwitchEntry {
    name: String,
    #[serde(default = "default_tier")]
    tier: String,
}

fn default_tier() -> String {
    "switch".into()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkEntry {
    // A list, not `[String; 2]`: serde reads the first two of a longer array and leaves
    // the rest unread, so `ends = ["h0", "s0", "h1"]` was a link h0-s0 and no word.
    ends: Vec<String>,
    #[serde(default)]
    rate: Option<Rate>,
    #[serde(default)]
    delay: Option<Duration>,
}

/// A checked topology file.
#[derive(Clone, Debug)]
pub struct FabricFile {
    pub hosts: usize,
    /// Each switch's name and tier, in node order.
    pub switches: Vec<(String, String)>,
    /// Each cable: its two nodes, rate (bit/s) and one-way delay (ns).
    pub links: Vec<(usize, usize, u64, u64)>,
}

/// Read and check a topology file; an error is `'PATH' what` (the caller names the field).
pub fn read(path: &str) -> Result<FabricFile, String> {
    let shown = format!("'{}'", path.chars().take(200).collect::<String>());
    let text = crate::workload::read_input_file(path)?;
    parse(&text).map_err(|e| format!("{shown} {e}"))
}

/// Parse and check the text of a topology file.
pub fn parse(text: &str) -> Result<FabricFile, String> {
    let de = toml::Deserializer::parse(text).map_err(|e| one_line(e.message()))?;
    let doc: Doc = serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let msg = one_line(e.inner().message());
        if path == "." {
            msg
        } else {
            format!("{path}: {msg}")
        }
    })?;
    if doc.hosts > MAX_HOSTS {
        return Err(format!("hosts: {}, at most {MAX_HOSTS} (host ids are 16-bit)", doc.hosts));
    }
    if doc.links.len() > MAX_CORE_LINKS {
        return Err(format!("links: {} links, at most {MAX_CORE_LINKS}", doc.links.len()));
    }
    let nodes = node_ids(&doc)?;
    let mut links = Vec::with_capacity(doc.links.len());
    let mut linked = vec![false; doc.hosts];
    for (i, l) in doc.links.iter().enumerate() {
        if l.ends.len() != 2 {
            return Err(format!(
                "links[{i}].ends: {} name{}, a link joins exactly two nodes (a cable: [\"a\", \"b\"])",
                l.ends.len(),
                if l.ends.len() == 1 { "" } else { "s" }
            ));
        }
        let mut ends = [0usize; 2];
        for (j, name) in l.ends.iter().enumerate() {
            ends[j] = *nodes.get(name).ok_or_else(|| {
                format!(
                    "links[{i}].ends[{j}]: no node {} (hosts are h0..h{}, or a switch)",
                    echo(name),
                    doc.hosts.max(1) - 1
                )
            })?;
        }
        let [a, b] = ends;
        if a == b {
            return Err(format!("links[{i}]: a link from {} to itself", l.ends[0]));
        }
        if a < doc.hosts && b < doc.hosts {
            return Err(format!(
                "links[{i}]: joins two hosts, {} and {} (hosts do not forward: link them to switches)",
                l.ends[0], l.ends[1]
            ));
        }
        let rate = l.rate.or(doc.link_rate).ok_or_else(|| format!("links[{i}].rate: not given, and no link_rate"))?;
        if rate.0 == 0 {
            return Err(format!("links[{i}].rate: must be larger than 0"));
        }
        let delay =
            l.delay.or(doc.link_delay).ok_or_else(|| format!("links[{i}].delay: not given, and no link_delay"))?;
        if delay.0 > MAX_DELAY_NS {
            return Err(format!(
                "links[{i}].delay: {delay} is longer than the longest link delay, {}",
                Duration(MAX_DELAY_NS)
            ));
        }
        for e in [a, b].into_iter().filter(|&e| e < doc.hosts) {
            linked[e] = true;
        }
        links.push((a, b, rate.0, delay.0));
    }
    if let Some(h) = linked.iter().position(|&l| !l) {
        return Err(format!("h{h}: a host without a link"));
    }
    let f =
        FabricFile { hosts: doc.hosts, switches: doc.switches.into_iter().map(|s| (s.name, s.tier)).collect(), links };
    f.check_paths()?;
    Ok(f)
}

/// Every node's id by name: hosts `h0..`, then the switches.
fn node_ids(doc: &Doc) -> Result<HashMap<String, usize>, String> {
    let mut ids: HashMap<String, usize> = (0..doc.hosts).map(|h| (format!("h{h}"), h)).collect();
    for (i, s) in doc.switches.iter().enumerate() {
        if s.name.is_empty() || !s.name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) {
            return Err(format!("switches[{i}].name: {} is not a plain name (letters, digits and -_.)", echo(&s.name)));
        }
        if let Some(&id) = ids.get(&s.name) {
            let whose = if id < doc.hosts { "a host's name" } else { "given twice" };
            return Err(format!("switches[{i}].name: {} is {whose}", echo(&s.name)));
        }
        if s.tier.is_empty() || !s.tier.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_') {
            return Err(format!("switches[{i}].tier: {} is not a tier name (a-z, 0-9 and _)", echo(&s.tier)));
        }
        ids.insert(s.name.clone(), doc.hosts + i);
    }
    Ok(ids)
}

impl FabricFile {
    /// Hosts that no path joins (hosts do not forward: two hosts are joined when a switch
    /// next to one and a switch next to the other are connected through switches).
    fn check_paths(&self) -> Result<(), String> {
        let n = self.hosts + self.switches.len();
        let mut parent: Vec<usize> = (0..n).collect();
        fn find(p: &mut [usize], mut x: usize) -> usize {
            while p[x] != x {
                p[x] = p[p[x]];
                x = p[x];
            }
            x
        }
        for &(a, b, _, _) in &self.links {
            if a >= self.hosts && b >= self.hosts {
                let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
                parent[ra] = rb;
            }
        }
        // Each host's switch components (one unless it is linked to several).
        let mut comps: Vec<Vec<usize>> = vec![Vec::new(); self.hosts];
        for &(a, b, _, _) in &self.links {
            let (h, s) = if a < self.hosts {
                (a, b)
            } else if b < self.hosts {
                (b, a)
            } else {
                continue;
            };
            let c = find(&mut parent, s);
            if !comps[h].contains(&c) {
                comps[h].push(c);
            }
        }
        // Group hosts by their components; two groups must share one.
        let mut groups: Vec<(Vec<usize>, usize)> = Vec::new();
        for (h, mut c) in comps.into_iter().enumerate() {
            c.sort_unstable();
            if !groups.iter().any(|(g, _)| *g == c) {
                groups.push((c, h));
            }
        }
        for (i, (a, ha)) in groups.iter().enumerate() {
            for (b, hb) in &groups[i + 1..] {
                if !a.iter().any(|c| b.contains(c)) {
                    return Err(format!("no path joins h{ha} and h{hb} (hosts do not forward)"));
                }
            }
        }
        Ok(())
    }

    /// The tiers of the file's switches, in order of first appearance.
    pub fn tiers(&self) -> Vec<String> {
        let mut t: Vec<String> = Vec::new();
        for (_, tier) in &self.switches {
            if !t.contains(tier) {
                t.push(tier.clone());
            }
        }
        t
    }

    /// The rates of the hosts' first links (their access rates), per host.
    pub fn access_rates(&self) -> Vec<u64> {
        let mut r = vec![0; self.hosts];
        let mut seen = vec![false; self.hosts];
        for &(a, b, rate, _) in &self.links {
            for h in [a, b].into_iter().filter(|&h| h < self.hosts) {
                if !seen[h] {
                    (seen[h], r[h]) = (true, rate);
                }
            }
        }
        r
    }

    /// The network of the file.
    pub fn build(&self) -> Net {
        let tiers = self.tiers();
        let names: Vec<&str> = tiers.iter().map(|t| t.as_str()).collect();
        let mut net = Net::new(self.hosts, &names, true);
        for (name, tier) in &self.switches {
            net.names.push(name.clone());
            net.out_links.push(Vec::new());
            net.switch_tier.push(tiers.iter().position(|t| t == tier).expect("a listed tier") as u16);
        }
        for &(a, b, rate, delay) in &self.links {
            net.add_duplex(a, b, rate, delay);
        }
        net
    }
}

/// TOML's messages may span lines; an error is one.
fn one_line(msg: &str) -> String {
    msg.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "hosts = 2\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\n";

    fn err(body: &str) -> String {
        parse(&format!("{HEAD}{body}")).expect_err("must be refused")
    }

    #[test]
    fn a_file_is_checked_entry_by_entry() {
        let sw = "[[switches]]\nname = \"tor0\"\n";
        let up = "[[links]]\nends = [\"h0\", \"tor0\"]\n[[links]]\nends = [\"h1\", \"tor0\"]\n";
        let f = parse(&format!("{HEAD}{sw}{up}")).unwrap();
        assert_eq!((f.hosts, f.switches.len(), f.links.len(), f.tiers()), (2, 1, 2, vec!["switch".to_string()]));
        assert_eq!(f.links[0], (0, 2, 10_000_000_000, 1_000));
        assert_eq!(err(&format!("{sw}[[switches]]\nname = \"tor0\"\n{up}")), "switches[1].name: `tor0` is given twice");
        assert_eq!(err(&format!("[[switches]]\nname = \"h1\"\n{up}")), "switches[0].name: `h1` is a host's name");
        assert_eq!(
            err(&format!("{sw}{up}[[links]]\nends = [\"h0\", \"h1\"]\n")),
            "links[2]: joins two hosts, h0 and h1 (hosts do not forward: link them to switches)"
        );
        assert_eq!(
            err(&format!("{sw}{up}[[links]]\nends = [\"tor0\", \"spine9\"]\n")),
            "links[2].ends[1]: no node `spine9` (hosts are h0..h1, or a switch)"
        );
        let e = parse(&format!("hosts = 2\n{sw}{up}")).unwrap_err();
        assert_eq!(e, "links[0].rate: not given, and no link_rate");
        assert!(err(&format!("{sw}{up}colour = 3\n")).contains("unknown field `colour`"), "{}", err("colour = 3\n"));
        assert_eq!(
            err(&format!("{sw}[[links]]\nends = [\"h0\"]\n")),
            "links[0].ends: 1 name, a link joins exactly two nodes (a cable: [\"a\", \"b\"])"
        );
        assert_eq!(
            err(&format!("{sw}{up}[[links]]\nends = [\"h0\", \"tor0\", \"h1\"]\n")),
            "links[2].ends: 3 names, a link joins exactly two nodes (a cable: [\"a\", \"b\"])"
        );
        let tiers = "[[switches]]\nname = \"a\"\ntier = \"spine\"\n[[switches]]\nname = \"b\"\ntier = \"tor\"\n";
        let f = parse(&format!("{HEAD}{tiers}[[links]]\nends = [\"h0\", \"b\"]\n[[links]]\nends = [\"h1\", \"b\"]\n"))
            .unwrap();
        assert_eq!(f.tiers(), ["spine", "tor"]);
        let net = f.build();
        assert_eq!((net.tier_of(2), net.tier_of(3)), ("spine", "tor"));
        // Two cables between the same switches: two ports, each its own name, both routes.
        let two = "[[switches]]\nname = \"a\"\n[[switches]]\nname = \"b\"\n[[links]]\nends = [\"h0\", \"a\"]\n\
                   [[links]]\nends = [\"a\", \"b\"]\n[[links]]\nends = [\"b\", \"a\"]\n[[links]]\nends = [\"b\", \"h1\"]\n";
        let net = parse(&format!("{HEAD}{two}")).unwrap().build();
        let names: Vec<String> = (0..net.links.len()).map(|l| crate::metrics::port_name(&net, l)).collect();
        assert_eq!(names, ["h0->a", "a->h0", "a->b", "b->a", "b->a#2", "a->b#2", "b->h1", "h1->b"]);
        let routes = crate::routing::Routes::shortest_paths(&net);
        assert_eq!(routes.next_hops(2, 1), [2, 5]);
        assert_eq!(
            err("[[switches]]\nname = \"x\"\ntier = \"Spine\"\n"),
            "switches[0].tier: `Spine` is not a tier name (a-z, 0-9 and _)"
        );
    }
}
