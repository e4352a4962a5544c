//! Search mode: instead of every MCP schema, the catalog carries three gateway tools.
//!
//! * `mcp_search {query, top_k?, server?}` ranks the MCP tools this turn may use (BM25 over
//!   names, titles, descriptions and parameters; see [`index`]) and returns names, short
//!   descriptions, required parameters and policies.
//! * `mcp_describe {name}` returns one tool's full (sanitised) schema and annotations.
//! * `mcp_call {name, arguments}` stands for a call of the tool `name`. It does not run the
//!   tool: it implements [`Tool::forward`](kun_ports::Tool::forward), and the host runs the
//!   **target** through every gate of its own (trust, policy, allow/deny lists, plan mode,
//!   sandbox, hooks under the target's name, approval) in place of `mcp_call`. It is never a
//!   way around them.
//!
//! What search and describe show is filtered per turn exactly like the catalog: a tool of a
//! server that is not visible or not trusted in this workspace, of a blocked provider, a
//! blocked or not-allowed tool name, a tool the sandbox mode blocks, or (in plan mode) a tool
//! that is not read-only is never returned.
//!
//! Requests are read in English or Chinese: words are split and stemmed ([`tokenize`]),
//! expanded with synonyms and a bilingual glossary, and scored by concept coverage, so "remove
//! a folder" and "删除目录" both find a `delete_directory` tool.
//!
//! ```
//! use kun_mcp::{RemoteTool, identity_sanitizer, records_for_catalog};
//! use kun_mcp::search::{SearchDoc, SearchIndex};
//! let tool = |name: &str, description: &str| RemoteTool::from_json(serde_json::json!({
//!     "name": name, "description": description, "inputSchema": {"type": "object"}
//! })).unwrap();
//! let records = records_for_catalog(vec![("git".into(), vec![
//!     tool("git_log", "Shows the commit logs"),
//!     tool("git_status", "Shows the working tree status"),
//! ])], &identity_sanitizer());
//! let index = SearchIndex::build(records.iter().map(SearchDoc::from));
//! let hits = index.search("查看提交历史", 1, |_| true);
//! assert_eq!(records[hits[0].doc].name, "mcp_git_git_log");
//! ```

pub(crate) mod gateway;
mod glossary;
pub mod index;
mod lexicon;
mod query;
pub mod tokenize;

pub use index::{SearchDoc, SearchHit, SearchIndex};
