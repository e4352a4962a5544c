//! The providers of kun-gui's tools.
//!
//! | provider | id | kind | tools | delegable |
//! |---|---|---|---|---|
//! | [`GoalTodoProvider`] | `gui` | `gui` (listed for a GUI client surface only) | `get_goal`, `create_goal`, `update_goal`, `todo_list`, `todo_write` | yes |
//! | [`PlanProvider`] | `plan` | `built-in` | `create_plan` (listed in a plan context only) | yes |
//! | [`UserInputProvider`] | `user_input` | `built-in` | `user_input`, `request_user_input` | yes |
//! | [`ComputerUseProvider`] | `computer_use` | `extension` | `computer_use` | **no** |
//!
//! `computer_use` drives the user's desktop: it belongs to the main registry only. Its
//! provider does not implement [`Delegable`], so the child registry, whose every entrance
//! takes `P: Delegable`, cannot receive it:
//!
//! ```compile_fail,E0277
//! use std::sync::Arc;
//! use kun_gui::{ComputerUseMode, ComputerUseProvider, X11Desktop};
//! use kun_ports::Delegable;
//! fn child_registry_entrance<P: Delegable>(_provider: Arc<P>) {}
//! let provider = ComputerUseProvider::new(
//!     Arc::new(X11Desktop::new(None)), None, ComputerUseMode::Always, 50, Ok(()),
//! );
//! child_registry_entrance(Arc::new(provider)); // error: not `Delegable`
//! ```
//!
//! The other providers are:
//!
//! ```
//! use std::sync::Arc;
//! use kun_gui::{GoalTodoProvider, MemoryThreadState, PlanProvider, UserInputProvider};
//! use kun_ports::Delegable;
//! fn child_registry_entrance<P: Delegable>(_provider: Arc<P>) {}
//! child_registry_entrance(Arc::new(GoalTodoProvider::new(Arc::new(MemoryThreadState::default()))));
//! child_registry_entrance(Arc::new(PlanProvider::new(".kun/plans")));
//! child_registry_entrance(Arc::new(UserInputProvider::new()));
//! ```

use crate::computer::{ComputerUse, ComputerUseMode};
use crate::goals::{CreateGoal, GetGoal, UpdateGoal};
use crate::input::{RequestUserInput, UserInput};
use crate::plan::CreatePlan;
use crate::todos::{TodoList, TodoWrite};
use kun_ports::{
    ArtifactStore, ComputerBackend, Delegable, ProviderKind, ProviderPolicy, ThreadState, Tool,
    ToolProvider,
};
use std::path::PathBuf;
use std::sync::Arc;

/// The goal and todo tools over one thread-state store (kind `gui`).
pub struct GoalTodoProvider {
    tools: Vec<Arc<dyn Tool>>,
}

impl GoalTodoProvider {
    /// The five tools over `store`.
    #[must_use]
    pub fn new(store: Arc<dyn ThreadState>) -> Self {
        Self {
            tools: vec![
                Arc::new(GetGoal::new(Arc::clone(&store))),
                Arc::new(CreateGoal::new(Arc::clone(&store))),
                Arc::new(UpdateGoal::new(Arc::clone(&store))),
                Arc::new(TodoList::new(Arc::clone(&store))),
                Arc::new(TodoWrite::new(store)),
            ],
        }
    }
}

impl ToolProvider for GoalTodoProvider {
    fn id(&self) -> &str {
        "gui"
    }
    fn kind(&self) -> ProviderKind {
        ProviderKind::Gui
    }
    fn policy(&self) -> ProviderPolicy {
        ProviderPolicy::ready()
    }
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.tools.clone()
    }
}

impl Delegable for GoalTodoProvider {}

/// `create_plan`.
pub struct PlanProvider {
    tool: Arc<dyn Tool>,
}

impl PlanProvider {
    /// `create_plan` writing into `plan_dir` (relative to the workspace) by default.
    #[must_use]
    pub fn new(plan_dir: impl Into<PathBuf>) -> Self {
        Self {
            tool: Arc::new(CreatePlan::new(plan_dir)),
        }
    }
}

impl ToolProvider for PlanProvider {
    fn id(&self) -> &str {
        "plan"
    }
    fn kind(&self) -> ProviderKind {
        ProviderKind::BuiltIn
    }
    fn policy(&self) -> ProviderPolicy {
        ProviderPolicy::ready()
    }
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        vec![Arc::clone(&self.tool)]
    }
}

impl Delegable for PlanProvider {}

/// `user_input` and `request_user_input`.
pub struct UserInputProvider {
    tools: Vec<Arc<dyn Tool>>,
}

impl Default for UserInputProvider {
    fn default() -> Self {
        Self::new()
    }
}

impl UserInputProvider {
    /// Both tools.
    #[must_use]
    pub fn new() -> Self {
        Self {
            tools: vec![
                Arc::new(UserInput::new()),
                Arc::new(RequestUserInput::new()),
            ],
        }
    }
}

impl ToolProvider for UserInputProvider {
    fn id(&self) -> &str {
        "user_input"
    }
    fn kind(&self) -> ProviderKind {
        ProviderKind::BuiltIn
    }
    fn policy(&self) -> ProviderPolicy {
        ProviderPolicy::ready()
    }
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.tools.clone()
    }
}

impl Delegable for UserInputProvider {}

/// `computer_use`: main registry only (not [`Delegable`]; see the module docs).
pub struct ComputerUseProvider {
    tool: Arc<dyn Tool>,
    policy: ProviderPolicy,
}

impl ComputerUseProvider {
    /// `computer_use` over `backend`. `mode` off disables the provider; `desktop` is the
    /// backend's state at start-up (`Err` with the reason when there is no desktop, which
    /// makes the provider unavailable).
    #[must_use]
    pub fn new(
        backend: Arc<dyn ComputerBackend>,
        artifacts: Option<Arc<dyn ArtifactStore>>,
        mode: ComputerUseMode,
        actions_per_turn: u32,
        desktop: Result<(), String>,
    ) -> Self {
        let policy = match (mode, desktop) {
            (ComputerUseMode::Off, _) => ProviderPolicy::disabled(
                "computer_use is off; set [computer_use] mode = \"auto\" or \"always\" in your \
                 user config to enable it",
            ),
            (_, Ok(())) => ProviderPolicy::ready(),
            (_, Err(reason)) => ProviderPolicy::unavailable(reason),
        };
        Self {
            tool: Arc::new(ComputerUse::new(backend, artifacts, mode, actions_per_turn)),
            policy,
        }
    }
}

impl ToolProvider for ComputerUseProvider {
    fn id(&self) -> &str {
        "computer_use"
    }
    fn kind(&self) -> ProviderKind {
        ProviderKind::Extension
    }
    fn policy(&self) -> ProviderPolicy {
        self.policy.clone()
    }
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        vec![Arc::clone(&self.tool)]
    }
}
