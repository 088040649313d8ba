use super::*;
const HEAD: &str = "name = \"t\"\nduration = \"1ms\"\n";

fn err(toml_text: &str) -> String {
    Scenario::from_toml(toml_text).and_then(|s| s.validate().map(|_| s)).expect_err("must be rejected")
}

#[test]
fn errors_inside_tagged_tables_name_the_field() {
    let star = "[topology]\nkind = \"star\"\nhosts = 2\nlink_delay = \"1us\"\n";
    let e = err(&format!("{HEAD}{star}link_rate = \"-1Gbps\"\n"));
    assert!(e.starts_with("topology.link_rate: "), "{e}");
    let e = err(&format!("{HEAD}{star}link_rate = \"1Gbps\"\n[[traffic]]\nkind = \"poisson\"\ncdf = \"websearch\"\nload = 0.5\nflows = \"many\"\n"));
    assert!(e.starts_with("traffic[0].flows: invalid type"), "{e}");
    let e = err(&format!(
        "{HEAD}{star}link_rate = \"1Gbps\"\n[rtt_variation]\ndelay = {{ dist = \"fixed\", value = \"x\" }}\n"
    ));
    assert!(e.starts_with("rtt_variation.delay.value: "), "{e}");
    let e = err(&format!("{HEAD}[topology]\nkind = \"stra\"\n"));
    assert_eq!(e, "topology.kind: unknown variant `stra` (did you mean `star`?)");
}

#[test]
fn tagged_tables_round_trip_through_json() {
    let text = format!(
        "{HEAD}[topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 1\nhosts_per_leaf = 2\n\
         link_rate = \"10Gbps\"\nhost_delay = \"1us\"\ncore_delay = \"1us\"\n\
         [[traffic]]\nkind = \"incast\"\nreceiver = 0\nsenders = [1, 2]\nsize_min = \"1KB\"\nsize_max = \"2KB\"\nqueries = 1\n"
    );
    let s = Scenario::from_toml(&text).unwrap();
    let json = serde_json::to_string(&s).unwrap();
    assert!(json.contains("\"kind\":\"leaf_spine\"") && json.contains("\"kind\":\"incast\""), "{json}");
    let back = Scenario::from_json(&json).unwrap();
    assert_eq!(serde_json::to_string(&back).unwrap(), json);
}

#[test]
fn a_threshold_above_the_buffer_is_rejected() {
    let star = "[topology]\nkind = \"star\"\nhosts = 2\nlink_rate = \"1Gbps\"\nlink_delay = \"1us\"\n";
    let e = err(&format!(
        "{HEAD}{star}[switch]\nbuffer = \"50KB\"\n[marking]\nscheme = \"mq_ecn\"\n[marking.mq_ecn]\nk = \"60KB\"\n"
    ));
    assert!(e.starts_with("marking.mq_ecn.k: 60KB is not below the port buffer"), "{e}");
    // The same K is fine when another scheme is chosen: only the active scheme's count.
    assert!(Scenario::from_toml(&format!(
        "{HEAD}{star}[switch]\nbuffer = \"50KB\"\n[marking.mq_ecn]\nk = \"60KB\"\n[[flows]]\nsrc = 0\ndst = 1\n"
    ))
    .unwrap()
    .validate()
    .is_ok());
}

/// The memory estimate counts a fabric's switches, links and multipath next hops without
/// building it: exactly what building it gives, for every kind that counts them.
#[test]
fn the_memory_estimate_counts_fabrics_as_built() {
    let kinds = [
        "kind = \"leaf_spine\"\nleaves = 5\nspines = 3\nhosts_per_leaf = 4\nlink_rate = \"10Gbps\"\nhost_delay = \"1us\"\ncore_delay = \"1us\"",
        "kind = \"fat_tree\"\nk = 6\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"",
        "kind = \"fat_tree\"\nk = 2\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"",
        "kind = \"clos\"\npods = 3\nleaves_per_pod = 2\nspines_per_pod = 3\nsuper_spines_per_plane = 2\nhosts_per_leaf = 3\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"",
        "kind = \"clos\"\npods = 2\nleaves_per_pod = 3\nspines_per_pod = 1\nsuper_spines_per_plane = 1\nhosts_per_leaf = 2\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"",
    ];
    for kind in kinds {
        let s = Scenario::from_toml(&format!("{HEAD}[topology]\n{kind}\n[[flows]]\nsrc = 0\ndst = 1\n")).unwrap();
        s.validate().unwrap();
        let net = crate::topology::Net::build(&s.topology).unwrap();
        let routes = crate::routing::Routes::shortest_paths(&net);
        let built = ((net.n_nodes() - net.n_hosts) as u64, net.links.len() as u64, routes.multipath_hops() as u64);
        assert_eq!(s.shape(net.n_hosts as u64), built, "{kind}");
        assert_eq!(s.n_hosts(), net.n_hosts, "{kind}");
    }
}

/// A fabric too big for the memory there is is refused before anything is built, naming
/// its routes; one of 6,144 hosts (a k = 30 fat-tree has 6,750) fits in 2 GB.
#[test]
fn fabrics_are_limited_by_memory_only() {
    let ft = |k: usize| {
        Scenario::from_toml(&format!(
            "{HEAD}[topology]\nkind = \"fat_tree\"\nk = {k}\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\n\
             [[flows]]\nsrc = 0\ndst = 1\n"
        ))
        .unwrap()
    };
    let e = ft(48).check_memory(8_000_000_000).unwrap_err();
    assert!(e.starts_with("topology: this scenario needs at least 13.6 GB"), "{e}");
    assert!(e.contains("routes of 30528 nodes to 27648 hosts"), "{e}");
    ft(30).check_memory(2_000_000_000).unwrap();
    ft(48).validate().unwrap();
    assert!(ft(64).validate().unwrap_err().starts_with("topology: 65536 hosts, at most 65535"));
}
