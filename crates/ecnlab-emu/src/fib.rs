//! The forwarding table: destination MAC -> egress port.
//!
//! Static entries (from the configuration) win over learned ones and never move. Learning
//! follows a plain transparent bridge (IEEE 802.1D): the source MAC of every frame is bound
//! to its ingress port. Unknown unicast, broadcast and multicast destinations are flooded.
//! No aging: an emulation run is short and its hosts do not move. The learned table is
//! bounded (as a switch's MAC table is): when it is full, new source addresses are not
//! learned and frames to them are flooded, so a flood of random source MACs cannot grow
//! the switch's memory.

use crate::wire::Mac;
use std::collections::HashMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Forward {
    /// To one port.
    Port(u8),
    /// To every port but the ingress one.
    Flood,
    /// The destination sits behind the ingress port: filter.
    Filter,
}

/// Learned entries at most (a small switch's MAC table).
pub const DEFAULT_MAX_LEARNED: usize = 8192;

pub struct Fib {
    statics: HashMap<Mac, u8>,
    learned: HashMap<Mac, u8>,
    learn: bool,
    max_learned: usize,
}

impl Fib {
    pub fn new(learn: bool) -> Self {
        Fib::with_capacity(learn, DEFAULT_MAX_LEARNED)
    }
    pub fn with_capacity(learn: bool, max_learned: usize) -> Self {
        Fib { statics: HashMap::new(), learned: HashMap::with_capacity(max_learned.min(1024)), learn, max_learned }
    }
    pub fn add_static(&mut self, mac: Mac, port: u8) {
        self.statics.insert(mac, port);
    }
    pub fn learned_len(&self) -> usize {
        self.learned.len()
    }

    /// Learn from a frame's source address (multicast sources are never learned). Returns
    /// false only if the address is new and the table is full.
    #[inline]
    pub fn learn(&mut self, src: &Mac, in_port: u8) -> bool {
        if !self.learn || src[0] & 1 == 1 || self.statics.contains_key(src) {
            return true;
        }
        let full = self.learned.len() >= self.max_learned;
        match self.learned.get_mut(src) {
            Some(p) => *p = in_port,
            None if full => return false,
            None => {
                self.learned.insert(*src, in_port);
            }
        }
        true
    }

    /// Where a frame for `dst` that arrived on `in_port` goes.
    #[inline]
    pub fn lookup(&self, dst: &Mac, in_port: u8) -> Forward {
        if dst[0] & 1 == 1 {
            return Forward::Flood; // broadcast or multicast
        }
        match self.statics.get(dst).or_else(|| self.learned.get(dst)) {
            Some(&p) if p == in_port => Forward::Filter,
            Some(&p) => Forward::Port(p),
            None => Forward::Flood,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Mac = [2, 0, 0, 0, 0, 1];
    const B: Mac = [2, 0, 0, 0, 0, 2];
    const BCAST: Mac = [0xff; 6];
    const MCAST: Mac = [0x33, 0x33, 0, 0, 0, 1];

    #[test]
    fn learns_floods_and_filters() {
        let mut f = Fib::new(true);
        assert_eq!(f.lookup(&B, 0), Forward::Flood);
        f.learn(&A, 0);
        f.learn(&B, 2);
        assert_eq!(f.lookup(&B, 0), Forward::Port(2));
        assert_eq!(f.lookup(&A, 2), Forward::Port(0));
        assert_eq!(f.lookup(&A, 0), Forward::Filter);
        assert_eq!(f.lookup(&BCAST, 0), Forward::Flood);
        assert_eq!(f.lookup(&MCAST, 1), Forward::Flood);
        // A host that moves is re-learned.
        f.learn(&B, 1);
        assert_eq!(f.lookup(&B, 0), Forward::Port(1));
        // Multicast sources are never learned.
        f.learn(&MCAST, 3);
        assert_eq!(f.learned_len(), 2);
    }

    #[test]
    fn the_learned_table_is_bounded() {
        let mut f = Fib::with_capacity(true, 3);
        for i in 0..3u8 {
            assert!(f.learn(&[2, 0, 0, 0, 1, i], 1));
        }
        assert!(!f.learn(&[2, 0, 0, 0, 1, 9], 2), "full: not learned");
        assert_eq!(f.learned_len(), 3);
        assert_eq!(f.lookup(&[2, 0, 0, 0, 1, 9], 0), Forward::Flood);
        // Known addresses still move.
        assert!(f.learn(&[2, 0, 0, 0, 1, 0], 2));
        assert_eq!(f.lookup(&[2, 0, 0, 0, 1, 0], 0), Forward::Port(2));
    }

    #[test]
    fn static_entries_win_and_do_not_move() {
        let mut f = Fib::new(true);
        f.add_static(B, 3);
        f.learn(&B, 1);
        assert_eq!(f.lookup(&B, 0), Forward::Port(3));
        let mut nolearn = Fib::new(false);
        nolearn.learn(&A, 0);
        assert_eq!(nolearn.lookup(&A, 1), Forward::Flood);
    }
}
