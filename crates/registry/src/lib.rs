//! # kun-registry
//!
//! The capability catalog and the execution pipeline.

pub mod artifacts;
pub mod ledger;
pub mod rate_limit;
pub mod read_tracker;
