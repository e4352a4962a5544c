//! # kun-gui
//!
//! The GUI tools of kun-rs, on ports only:
//!
//! * [`plan`]: `create_plan`, listed only in a plan context, writing only the reserved plan
//!   file;
//! * [`goals`] and [`todos`]: `get_goal`, `create_goal`, `update_goal`, `todo_list`,
//!   `todo_write` on a [`ThreadState`](kun_ports::ThreadState) store ([`state`]: in memory, or
//!   a file per thread);
//! * [`input`]: `user_input` and `request_user_input` (exempt from sandbox and approval), and
//!   a terminal [`UserInputChannel`](kun_ports::UserInputChannel);
//! * [`computer`]: `computer_use` over a [`ComputerBackend`](kun_ports::ComputerBackend), with
//!   an X11 backend;
//! * [`provider`]: the providers that carry them. Only the goal-and-todo provider is of kind
//!   `gui` (listed for a GUI client surface only); `computer_use`'s provider is not
//!   [`Delegable`](kun_ports::Delegable), so a child agent can never receive it.
//!
//! ```
//! use std::sync::Arc;
//! use kun_gui::{GoalTodoProvider, MemoryThreadState};
//! use kun_ports::{ProviderKind, ToolProvider};
//! let gui = GoalTodoProvider::new(Arc::new(MemoryThreadState::default()));
//! assert_eq!(gui.kind(), ProviderKind::Gui);
//! let names: Vec<String> = gui.tools().iter().map(|t| t.spec().name.clone()).collect();
//! assert_eq!(names, ["get_goal", "create_goal", "update_goal", "todo_list", "todo_write"]);
//! ```

pub mod computer;
pub mod goals;
pub mod input;
pub mod limits;
pub mod plan;
pub mod provider;
pub mod state;
pub mod todos;

pub use computer::{ComputerUse, ComputerUseMode, X11Desktop};
pub use input::TerminalUserInput;
pub use provider::{ComputerUseProvider, GoalTodoProvider, PlanProvider, UserInputProvider};
pub use state::{FileThreadState, MemoryThreadState, PinnedThreadState, default_thread_state_dir};
