//! # kun-delegation
//!
//! `delegate_task`: a parent agent hands a self-contained task to a child agent that works
//! with a narrower set of tools, through the same gates, and reports back.
//!
//! * **Profiles** ([`ProfileSet`]): built-in (`explore`, `design-reviewer`,
//!   `over-engineering-reviewer`: read-only; `general`: inherit) < host-supplied < the
//!   workspace's `.kun/agents/*.md` and `.claude/agents/**/*.md` (Claude Code's sub-agent
//!   format). An untrusted workspace may narrow a profile, never widen it.
//! * **Narrowing** ([`child_lists`]): the child's allow-list is the profile's intersected with
//!   the parent's; deny lists only grow; `delegate_task` is always blocked for children.
//! * **The tool** ([`DelegationProvider`], [`DelegateTaskTool`]): a FIFO semaphore
//!   ([`DelegationSlots`], cancellable while queued), a nested turn of the parent's context
//!   (same sandbox and approval policy; approvals to the parent's approver naming the
//!   profile, [`ChildApprover`]), the child host, and usage returned to the parent.
//! * **Runners** ([`ChildAgentRunner`](kun_ports::ChildAgentRunner)): [`OpenAiRunner`] against
//!   any OpenAI-compatible chat-completions endpoint, and [`ScriptedRunner`] for tests; both
//!   run one loop ([`agent_loop`]) and pass the port's contract suite.
//! * Feature `test-server`: `test_server::OpenAiTestServer`, a scripted local endpoint.
//!
//! ```
//! use kun_delegation::{ProfileSet, READ_ONLY_TOOLS, ToolChoice, child_lists};
//! use kun_ports::ToolLists;
//!
//! let profiles = ProfileSet::builtin();
//! let explore = profiles.get("explore").unwrap();
//! assert_eq!(explore.tools, ToolChoice::ReadOnly);
//!
//! // A parent limited to read and bash: the read-only child keeps read only.
//! let parent = ToolLists {
//!     allowed_tool_names: Some(["read", "bash"].into_iter().collect()),
//!     ..ToolLists::default()
//! };
//! let child = child_lists(&parent, explore);
//! assert_eq!(child.allowed_tool_names.unwrap().sorted(), ["read"]);
//! assert!(child.blocked_tool_names.contains("delegate_task"));
//! # let _ = READ_ONLY_TOOLS;
//! ```

pub mod agent_file;
pub mod agent_loop;
mod approver;
mod narrowing;
mod openai;
mod profile;
mod profiles;
mod provider;
mod scripted;
mod slots;
mod tool;

#[cfg(feature = "test-server")]
pub mod test_server;

pub use agent_file::{AGENT_DIRS, Diagnostic, MAX_AGENT_FILE_BYTES, workspace_profiles};
pub use approver::ChildApprover;
pub use narrowing::{DELEGATE_TASK, child_lists, mcp_provider_id};
pub use openai::{OpenAiRunner, OpenAiSettings};
pub use profile::{AgentProfile, ProfileOrigin, READ_ONLY_TOOLS, ToolChoice, builtin_profiles};
pub use profiles::ProfileSet;
pub use provider::{DELEGATION_PROVIDER_ID, DelegationProvider, NO_RUNNER};
pub use scripted::{ScriptedReply, ScriptedRequest, ScriptedRunner};
pub use slots::{AbortedWhileQueued, DelegationSlots};
pub use tool::{DelegateTaskArgs, DelegateTaskOutput, DelegateTaskTool, DelegationRuntime, Usage};
