//! Dispatch lanes: which of a model message's tool calls a runtime may run together.

use crate::snapshot::RegistrySnapshot;
use kun_ports::{ApprovalPolicy, ProviderKind, ToolCall, ToolKind};
use std::ops::Range;

/// The default cap of a read-only batch.
pub const DEFAULT_MAX_READ_ONLY_BATCH: usize = 3;

/// The built-in tools that may run in parallel.
pub const PARALLEL_READ_ONLY_TOOLS: [&str; 5] = ["read", "grep", "glob", "find", "ls"];

/// The delegation tool.
pub const DELEGATE_TASK: &str = "delegate_task";

/// How a call may be dispatched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Lane {
    /// Alone, in order.
    Serial,
    /// With neighbouring read-only calls, up to the cap.
    ReadOnly,
    /// With neighbouring delegations.
    Delegation,
}

/// A run of consecutive calls of one lane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DispatchBatch {
    /// The lane every call of the batch has.
    pub lane: Lane,
    /// The calls' indices.
    pub calls: Range<usize>,
}

/// Classifies and batches calls against one registry snapshot and approval policy.
///
/// A call's lane ([`DispatchLanes::classify`]):
///
/// | lane | when |
/// |---|---|
/// | [`Lane::Serial`] | the approval policy is `always`, `untrusted` or `never` (prompts must come one at a time), or nothing below applies |
/// | [`Lane::Delegation`] | `delegate_task` served by a `delegation` provider |
/// | [`Lane::ReadOnly`] | `read`, `grep`, `glob`, `find` or `ls` served by a `built-in` provider, declared `tool_call`, and not claimed as another kind by the call |
///
/// The provider kind is looked up in the registry snapshot, never guessed from the name: an
/// MCP tool that happens to be called `read` is serial.
///
/// Batching ([`DispatchLanes::batches`]) cuts the calls, in order, into runs of one lane:
/// a serial call is a batch of one, read-only runs are capped (3 by default), delegation runs
/// are not. Lanes never mix within a batch.
#[derive(Debug, Clone, Copy)]
pub struct DispatchLanes<'a> {
    snapshot: &'a RegistrySnapshot,
    approval: ApprovalPolicy,
    max_read_only_batch: usize,
}

impl<'a> DispatchLanes<'a> {
    /// Lanes for a turn with this approval policy, with the default read-only cap.
    #[must_use]
    pub const fn new(snapshot: &'a RegistrySnapshot, approval: ApprovalPolicy) -> Self {
        Self {
            snapshot,
            approval,
            max_read_only_batch: DEFAULT_MAX_READ_ONLY_BATCH,
        }
    }

    /// The same lanes with another read-only cap (at least 1).
    #[must_use]
    pub fn with_max_read_only_batch(mut self, max: usize) -> Self {
        self.max_read_only_batch = max.max(1);
        self
    }

    /// The lane of one call.
    #[must_use]
    pub fn classify(&self, call: &ToolCall) -> Lane {
        if matches!(
            self.approval,
            ApprovalPolicy::Always | ApprovalPolicy::Untrusted | ApprovalPolicy::Never
        ) {
            return Lane::Serial;
        }
        let Some(tool) = self.snapshot.get(&call.tool_name) else {
            return Lane::Serial;
        };
        if call.tool_name == DELEGATE_TASK && tool.provider_kind() == ProviderKind::Delegation {
            return Lane::Delegation;
        }
        let read_only = PARALLEL_READ_ONLY_TOOLS.contains(&call.tool_name.as_str())
            && tool.provider_kind() == ProviderKind::BuiltIn
            && tool.spec().kind == ToolKind::ToolCall
            && call.tool_kind.is_none_or(|k| k == ToolKind::ToolCall);
        if read_only {
            Lane::ReadOnly
        } else {
            Lane::Serial
        }
    }

    /// The batch starting at `start`, or `None` past the end.
    #[must_use]
    pub fn batch_at(&self, calls: &[ToolCall], start: usize) -> Option<DispatchBatch> {
        let lane = self.classify(calls.get(start)?);
        let cap = match lane {
            Lane::Serial => 1,
            Lane::ReadOnly => self.max_read_only_batch,
            Lane::Delegation => usize::MAX,
        };
        let mut end = start + 1;
        while end < calls.len() && end - start < cap && self.classify(&calls[end]) == lane {
            end += 1;
        }
        Some(DispatchBatch {
            lane,
            calls: start..end,
        })
    }

    /// All batches of `calls`, in order; together they cover every call once.
    #[must_use]
    pub fn batches(&self, calls: &[ToolCall]) -> Vec<DispatchBatch> {
        let mut out = Vec::new();
        let mut start = 0;
        while let Some(batch) = self.batch_at(calls, start) {
            start = batch.calls.end;
            out.push(batch);
        }
        out
    }
}
