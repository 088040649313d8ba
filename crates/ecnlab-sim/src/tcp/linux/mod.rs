//! The `linux` host profile (`transport.profile = "linux"`): a TCP that does what Linux
//! does, beside the `textbook` NewReno of `tcp::sender` / `tcp::receiver`, which stays as
//! it is for the catalog entries that reproduce ns-2 simulations.
//!
//! Layout:
//! - [`ca`]: the congestion-control interface (`tcp_congestion_ops`) and Reno.
//! - [`sack_option`]: how SACK blocks travel from the receiver to the sender.
//! - [`sender`]: the sender (loss recovery, PRR, RTO), on the SACK [`scoreboard`].
//! - [`algorithm`]: `transport.cc` to a congestion control, dispatched by enum.
//! - `interim_receiver`: a stand-in receiver until branch `linux-cc` is merged.

pub mod algorithm;
pub mod ca;
pub mod interim_receiver;
pub mod sack_option;
pub mod scoreboard;
pub mod sender;

pub use interim_receiver::InterimReceiver;
pub use sender::LinuxSender;
