//! # kun-composition
//!
//! The assembly root: the only crate that knows every concern crate. It reads the
//! configuration ([`config`]), and wires the main registry, the child registry and the host.
//! It wires; it does not decide — every decision lives in the concern crates.

mod assemble;
mod child;
pub mod config;

pub use assemble::{AssembleError, AssembleOptions, Assembly, LedgerChoice, assemble};

pub use child::ChildRegistryBuilder;
pub use config::{ConfigError, ConfigPaths, Overrides, Settings, Source};
