//! # kun-composition
//!
//! The assembly root: the only crate that knows every concern crate. It reads the
//! configuration ([`config`]), and wires the main registry, the child registry and the host.
//! It wires; it does not decide — every decision lives in the concern crates.
//!
//! * [`Settings::load`] reads four layers (user, workspace, `--config`, flags) plus
//!   `.mcp.json`; errors name file, line and key; [`Settings::check`] reports every bad file
//!   at once and [`Settings::effective`] says where each value came from.
//! * [`assemble`] builds an [`Assembly`]: main and child registries, hooks and host.
//! * [`Assembly::reassemble`] applies reloaded settings and keeps what must survive a reload
//!   (the ledger, the read tracker, the confinement probe, and the built-in provider while the
//!   limits are unchanged).

// The README is compiled as doctests, so its examples cannot rot.
#![cfg_attr(doctest, doc = include_str!("../README.md"))]

mod agents;
mod assemble;
mod child;
pub mod config;
pub mod gui_media;
mod lists;
mod mcp;
mod memory_web;

pub use assemble::{AssembleError, AssembleOptions, Assembly, LedgerChoice, assemble};

pub use agents::{RunnerState, workspace_standing};
pub use child::{ChildRegistry, ChildRegistryBuilder};
pub use config::{ConfigError, ConfigPaths, Overrides, Settings, Source};
pub use gui_media::{ThreadStateChoice, default_artifact_dir};
pub use mcp::{
    McpAttachment, McpLaunch, attach_mcp, mcp_name_limit, search_settings, server_config,
    server_configs, start_mcp,
};
pub use memory_web::{memory_provider, memory_status, web_providers, web_status};
