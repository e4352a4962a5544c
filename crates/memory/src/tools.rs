//! The memory tools, on any [`MemoryStore`]:
//!
//! | tool            | kind          | policy     | side effect | arguments                        |
//! |-----------------|---------------|------------|-------------|----------------------------------|
//! | `memory_create` | `file_change` | on-request | unknown     | `content`, `scope`, `tags?`      |
//! | `memory_update` | `file_change` | on-request | unknown     | `id`, `content?`, `tags?`        |
//! | `memory_delete` | `file_change` | on-request | unknown     | `id`                             |
//! | `memory_search` | `tool_call`   | auto       | read-only   | `query`, `scope?`, `limit?`      |
//!
//! The writes are `file_change`, so the sandbox treats them as writes (read-only mode refuses
//! them, plan mode hides them). Every call is placed by the turn's primary workspace root
//! ([`place_for`]). Bad input (over 16 KiB, blank, an id not visible here) is
//! `invalid_arguments`; a store that fails is `tool_execution_failed`.

use crate::place_for;
use crate::render::render_memories;
use async_trait::async_trait;
use kun_ports::{
    Memory, MemoryChange, MemoryError, MemoryErrorKind, MemoryQuery, MemoryScope, MemoryStore,
    NewMemory, SideEffect, ToolContext, ToolFailure, ToolKind, ToolPolicy, ToolSpec, TypedTool,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Results `memory_search` returns when no limit is given.
pub const DEFAULT_SEARCH_LIMIT: usize = 8;
/// The most results `memory_search` returns.
pub const MAX_SEARCH_LIMIT: usize = 50;

fn failure(err: MemoryError) -> ToolFailure {
    match err.kind {
        MemoryErrorKind::Invalid | MemoryErrorKind::NotFound => ToolFailure::invalid(err.message),
        MemoryErrorKind::Unavailable | MemoryErrorKind::Storage => ToolFailure::new(err.message),
    }
}

fn write_spec<A: JsonSchema, O: JsonSchema>(name: &str, description: &str) -> ToolSpec {
    ToolSpec::typed::<A, O>(name, description)
        .with_kind(ToolKind::FileChange)
        .with_policy(ToolPolicy::OnRequest)
        .with_side_effect(SideEffect::Unknown)
}

/// The first line of a memory, cut to 80 characters, for confirmations.
fn headline(content: &str) -> String {
    let line = content.lines().next().unwrap_or_default();
    let cut: String = line.chars().take(80).collect();
    if cut.len() < content.trim_end().len() {
        format!("{cut}…")
    } else {
        cut
    }
}

/// Arguments of `memory_create`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateArgs {
    /// The fact to remember: one short, self-contained statement (at most 16 KiB).
    pub content: String,
    /// Who it is for: `user` (every workspace), `workspace` (this directory) or `project`
    /// (every clone of this repository).
    pub scope: MemoryScope,
    /// Optional labels (at most 16, each at most 64 bytes).
    #[serde(default)]
    pub tags: Option<Vec<String>>,
}

/// `memory_create`.
pub struct MemoryCreateTool {
    spec: ToolSpec,
    store: Arc<dyn MemoryStore>,
}

impl MemoryCreateTool {
    /// The tool on `store`.
    #[must_use]
    pub fn new(store: Arc<dyn MemoryStore>) -> Self {
        Self {
            spec: write_spec::<CreateArgs, Memory>(
                "memory_create",
                "Remember a fact for later turns and sessions: a user preference (scope user), \
                 something about this directory (workspace) or this repository (project). One \
                 short statement per memory; never store secrets.",
            ),
            store,
        }
    }
}

#[async_trait]
impl TypedTool for MemoryCreateTool {
    type Args = CreateArgs;
    type Output = Memory;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn render(&self, memory: &Memory) -> String {
        format!(
            "created {} ({}): {}",
            memory.id,
            memory.scope,
            headline(&memory.content)
        )
    }

    async fn run(&self, args: CreateArgs, ctx: ToolContext<'_>) -> Result<Memory, ToolFailure> {
        let place = place_for(ctx.turn.primary_root());
        let memory = NewMemory {
            scope: args.scope,
            content: args.content,
            tags: args.tags.unwrap_or_default(),
        };
        self.store.create(&place, memory).await.map_err(failure)
    }
}

/// Arguments of `memory_update`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateArgs {
    /// The memory's id, as search shows it (`m42`).
    pub id: String,
    /// New text, replacing the old.
    #[serde(default)]
    pub content: Option<String>,
    /// New tags, replacing the old (`[]` removes them).
    #[serde(default)]
    pub tags: Option<Vec<String>>,
}

/// `memory_update`.
pub struct MemoryUpdateTool {
    spec: ToolSpec,
    store: Arc<dyn MemoryStore>,
}

impl MemoryUpdateTool {
    /// The tool on `store`.
    #[must_use]
    pub fn new(store: Arc<dyn MemoryStore>) -> Self {
        Self {
            spec: write_spec::<UpdateArgs, Memory>(
                "memory_update",
                "Correct a remembered fact: replace its content, its tags, or both. Find the id \
                 with memory_search first.",
            ),
            store,
        }
    }
}

#[async_trait]
impl TypedTool for MemoryUpdateTool {
    type Args = UpdateArgs;
    type Output = Memory;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn render(&self, memory: &Memory) -> String {
        format!(
            "updated {} ({}): {}",
            memory.id,
            memory.scope,
            headline(&memory.content)
        )
    }

    async fn run(&self, args: UpdateArgs, ctx: ToolContext<'_>) -> Result<Memory, ToolFailure> {
        let place = place_for(ctx.turn.primary_root());
        let change = MemoryChange {
            content: args.content,
            tags: args.tags,
        };
        self.store
            .update(&place, &args.id, change)
            .await
            .map_err(failure)
    }
}

/// Arguments of `memory_delete`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteArgs {
    /// The memory's id, as search shows it (`m42`).
    pub id: String,
}

/// What `memory_delete` returns.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Deleted {
    /// The id that was deleted.
    pub id: String,
}

/// `memory_delete`.
pub struct MemoryDeleteTool {
    spec: ToolSpec,
    store: Arc<dyn MemoryStore>,
}

impl MemoryDeleteTool {
    /// The tool on `store`.
    #[must_use]
    pub fn new(store: Arc<dyn MemoryStore>) -> Self {
        Self {
            spec: write_spec::<DeleteArgs, Deleted>(
                "memory_delete",
                "Forget a remembered fact that is wrong or obsolete. Find the id with \
                 memory_search first.",
            ),
            store,
        }
    }
}

#[async_trait]
impl TypedTool for MemoryDeleteTool {
    type Args = DeleteArgs;
    type Output = Deleted;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn render(&self, deleted: &Deleted) -> String {
        format!("deleted {}", deleted.id)
    }

    async fn run(&self, args: DeleteArgs, ctx: ToolContext<'_>) -> Result<Deleted, ToolFailure> {
        let place = place_for(ctx.turn.primary_root());
        if self.store.delete(&place, &args.id).await.map_err(failure)? {
            Ok(Deleted { id: args.id })
        } else {
            Err(failure(MemoryError::not_found(&args.id)))
        }
    }
}

/// Arguments of `memory_search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// Keywords (English words match as prefixes; Chinese and Japanese as substrings).
    pub query: String,
    /// Only this scope; every scope visible here when left out.
    #[serde(default)]
    pub scope: Option<MemoryScope>,
    /// At most this many results (default 8, at most 50).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// What `memory_search` returns.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Found {
    /// The query, as given.
    pub query: String,
    /// The matches, best first.
    pub memories: Vec<Memory>,
}

/// `memory_search`.
pub struct MemorySearchTool {
    spec: ToolSpec,
    store: Arc<dyn MemoryStore>,
}

impl MemorySearchTool {
    /// The tool on `store`.
    #[must_use]
    pub fn new(store: Arc<dyn MemoryStore>) -> Self {
        Self {
            spec: ToolSpec::typed::<SearchArgs, Found>(
                "memory_search",
                "Search remembered facts (the user's, this workspace's and this project's) by \
                 keywords. Results are `- [id] (scope) content`, best match first.",
            )
            .with_kind(ToolKind::ToolCall)
            .with_policy(ToolPolicy::Auto)
            .with_side_effect(SideEffect::ReadOnly),
            store,
        }
    }
}

#[async_trait]
impl TypedTool for MemorySearchTool {
    type Args = SearchArgs;
    type Output = Found;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn render(&self, found: &Found) -> String {
        if found.memories.is_empty() {
            return format!("no memories match `{}`", found.query);
        }
        render_memories(&found.memories)
    }

    async fn run(&self, args: SearchArgs, ctx: ToolContext<'_>) -> Result<Found, ToolFailure> {
        let limit = args.limit.unwrap_or(DEFAULT_SEARCH_LIMIT);
        if limit == 0 || limit > MAX_SEARCH_LIMIT {
            return Err(ToolFailure::invalid(format!(
                "limit must be between 1 and {MAX_SEARCH_LIMIT}; {limit} was given"
            )));
        }
        let place = place_for(ctx.turn.primary_root());
        let query = MemoryQuery {
            text: args.query.clone(),
            scopes: args.scope.into_iter().collect(),
            limit,
        };
        let memories = self.store.search(&place, &query).await.map_err(failure)?;
        Ok(Found {
            query: args.query,
            memories,
        })
    }
}
