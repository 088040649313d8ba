//! # ecnlab-sim
pub mod packet;
pub mod tcp;
