//! The `linux` host profile (`transport.profile = "linux"`): a TCP that does what Linux
//! does, beside the `textbook` NewReno of `tcp::sender` / `tcp::receiver`, which stays as
//! it is for the catalog entries that reproduce ns-2 simulations.
//!
//! Layout:
//! - [`ca`]: the congestion-control interface (`tcp_congestion_ops`) and Reno.
//! - [`cubic`]: CUBIC (RFC 9438) as `tcp_cubic.c`, HyStart included.
//! - [`dctcp`]: DCTCP as `tcp_dctcp.c`.
//! - [`dctcp_dualq`]: the dual-AQM paper's modified DCTCP on whole segments and PRR.
//! - [`sack_option`]: how SACK blocks travel from the receiver to the sender.

pub mod ca;
pub mod cubic;
pub mod dctcp;
pub mod dctcp_dualq;
pub mod sack_option;
