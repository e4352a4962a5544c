//! # kun-registry
//!
//! The heart of kun-rs: which tools a model sees each turn, and the pipeline every call goes
//! through before a tool runs.
//!
//! * [`CapabilityRegistry`] — one flat namespace of tools contributed by
//!   [`ToolProvider`](kun_ports::ToolProvider)s. Duplicate provider ids and tool names fail at
//!   registration with a typed [`RegistryError`]; every change is all or nothing. Readers get
//!   immutable [`RegistrySnapshot`]s swapped with `arc-swap`.
//! * [`CatalogFilters`] — the catalog as a pure function of (snapshot, context).
//! * [`fingerprint_specs`] / [`CatalogDrift`] / [`TurnCatalogTracker`] — what the model was
//!   shown, how it changed, and a catalog frozen per turn.
//! * [`DispatchLanes`] — which calls of one message a runtime may run together.
//! * [`Host`] — the [`ToolHost`](kun_ports::ToolHost): listing and the 18-step pipeline.
//! * [`ledger`], [`read_tracker`], [`artifacts`], [`rate_limit`] — in-process adapters of
//!   the ports the pipeline uses.
//!
//! ## The catalog: five filters, in order
//!
//! `list_tools(ctx)` keeps a registered tool only if all of these pass:
//!
//! 1. **provider** — enabled and available, not in `blocked_provider_ids`, inside
//!    `allowed_provider_ids` when given; `gui` providers only on a GUI client surface;
//! 2. **tool lists** — not in `blocked_tool_names`, inside `allowed_tool_names` when given
//!    (an allow-list only shrinks; deny always wins);
//! 3. **plan whitelist** — when the turn is planning (`thread_mode == plan` or a plan
//!    context), only [`PlanWhitelist`] names (configurable; SPEC's eleven by default) and
//!    tools whose side effect is read-only;
//! 4. **sandbox** — the [`SandboxPolicy`](kun_ports::SandboxPolicy) does not block the tool's
//!    kind in the turn's mode (`Allowed` and `ApprovalRequired` are listed);
//!    `user_interaction` tools are exempt;
//! 5. **the tool** — its `should_advertise(ctx)` agrees.
//!
//! Tools with `model_advertised = false` are never listed but stay callable. The listing is
//! sorted by name and shares the registered tools (no schema is copied).
//! `resolve(name, ctx)` repeats filters 1–3 and 5 when a call arrives.
//!
//! ## The pipeline: eighteen steps, in order
//!
//! [`Host`] runs each call through these steps (each one a small function; the sequence reads
//! top to bottom in `pipeline/mod.rs`):
//!
//! 1. pin this turn's registry snapshot and hooks;
//! 2. abort check → `Err(Aborted)`;
//! 3. resolve → `Err(UnknownTool | NotAdvertised)`;
//! 4. tool policy `never` → `Err(DisabledByPolicy)`;
//! 5. sandbox on the declared kind → `sandbox_read_only`, `sandbox_write_blocked`,
//!    `sandbox_command_blocked`;
//! 6. raw-argument envelope (`{"__raw": "…"}` that parses to an object becomes the arguments),
//!    before the hooks, so a hook always sees the real arguments;
//! 7. PreToolUse hooks → `hook_failed`, `hook_denied`; may rewrite arguments and pre-approve;
//! 8. plan mode: file mutations other than `create_plan` → `plan_mode_write_blocked`;
//! 9. read-before-edit → `read_before_edit_required`, with the `read` to do next;
//! 10. runtime policy: sandbox on `call.tool_kind.or(declared)`, the call's write paths, and
//!     approval policy `never` → `sandbox_*`, `approval_policy_blocked`;
//! 11. explicit-approval classification → `approval_classification_failed`;
//! 12. approval, fail closed → `approval_denied`;
//! 13. abort check → `Err(Aborted)`;
//! 14. operation ledger → replay, `tool_invocation_in_progress`, `tool_outcome_unknown`;
//! 15. execute, panics caught, abort watched → `tool_execution_failed`, `Err(Aborted)`;
//! 16. PostToolUse hooks → `hook_failed`;
//! 17. rate-limit normalisation, for network-backed providers only;
//! 18. record reads, spill large outputs to the artifact store, complete the ledger.
//!
//! Only an abort, an unknown or unadvertised tool and a `never` tool are `Err`s; every other
//! failure is an error result the model can read.
//!
//! ## Smallest use
//!
//! ```
//! use std::sync::Arc;
//! use async_trait::async_trait;
//! use kun_ports::*;
//! use kun_registry::{CapabilityRegistry, CatalogFilters, Host};
//!
//! struct Echo(ToolSpec);
//! #[async_trait]
//! impl Tool for Echo {
//!     fn spec(&self) -> &ToolSpec { &self.0 }
//!     async fn execute<'a>(&self, args: serde_json::Value, _: ToolContext<'a>)
//!         -> Result<ToolResult, ToolError> { Ok(ToolResult::ok(args)) }
//! }
//! struct Builtins;
//! impl ToolProvider for Builtins {
//!     fn id(&self) -> &str { "builtin" }
//!     fn kind(&self) -> ProviderKind { ProviderKind::BuiltIn }
//!     fn policy(&self) -> ProviderPolicy { ProviderPolicy::ready() }
//!     fn tools(&self) -> Vec<Arc<dyn Tool>> {
//!         let spec = ToolSpec::new("echo", "Echoes its arguments.", serde_json::json!({"type": "object"}))
//!             .with_policy(ToolPolicy::Auto);
//!         vec![Arc::new(Echo(spec))]
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let mut sandbox = MockSandboxPolicy::new();
//! sandbox.expect_check_tool().return_const(SandboxVerdict::Allowed);
//! let filters = CatalogFilters::new(Arc::new(sandbox));
//! let registry = Arc::new(CapabilityRegistry::with_providers(filters, vec![Arc::new(Builtins)]).unwrap());
//! let host = Host::builder(registry).build();
//!
//! let ctx = ToolHostContext::builder("thread", "turn").workspace("/tmp").build();
//! assert_eq!(host.list_tools(&ctx).len(), 1);
//! let call = ToolCall::new("call_1", "echo", serde_json::json!({"text": "hi"}));
//! let result = host.execute(call, &ctx).await.unwrap();
//! assert_eq!(result.output["text"], "hi");
//! # }
//! ```

// The README is compiled as doctests, so its examples cannot rot.
#![cfg_attr(doctest, doc = include_str!("../README.md"))]

pub mod artifacts;
pub mod ledger;
pub mod rate_limit;
pub mod read_tracker;

mod canonical;
mod drift;
mod envelope;
mod filters;
mod fingerprint;
mod lanes;
mod pinning;
mod pipeline;
mod registry;
mod snapshot;
mod turn_catalog;

pub use canonical::canonical_hash_hex;
pub use drift::CatalogDrift;
pub use envelope::{MAX_RAW_ENVELOPE_BYTES, normalize_raw_envelope};
pub use filters::{CatalogFilters, PlanWhitelist};
pub use fingerprint::{
    CatalogFingerprint, Digest, ToolHash, fingerprint_catalog, fingerprint_specs,
};
pub use lanes::{
    DEFAULT_MAX_READ_ONLY_BATCH, DELEGATE_TASK, DispatchBatch, DispatchLanes, Lane,
    PARALLEL_READ_ONLY_TOOLS,
};
pub use pinning::{DEFAULT_PINNED_TURNS, TurnPins};
pub use pipeline::{DEFAULT_ARTIFACT_THRESHOLD_BYTES, Host, HostBuilder};
pub use registry::{CapabilityRegistry, ProviderDiagnostic, RegistryError};
pub use snapshot::{MAX_TOOL_NAME_LEN, RegistrySnapshot, is_valid_tool_name};
pub use turn_catalog::{
    CatalogChange, DEFAULT_TRACKED_THREADS, FrozenCatalog, TurnCatalog, TurnCatalogTracker,
};
