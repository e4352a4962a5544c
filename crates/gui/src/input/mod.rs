//! Asking the person: the `user_input` and `request_user_input` tools, and the terminal
//! adapter of [`UserInputChannel`](kun_ports::UserInputChannel) that `kun-tools call` uses.
//!
//! Both tools are always listed and exempt from the sandbox and approval gates (they only
//! ask). Where nobody can be asked (no terminal, a client without elicitation) they fail with
//! `user_input_unavailable` and the message "structured user input is not available in this
//! client context"; a person who declines or dismisses the question is a normal result
//! saying so.

mod terminal;
mod tools;

pub use terminal::TerminalUserInput;
pub use tools::{
    FieldArg, FieldType, InputOutput, InputStatus, RequestUserInput, RequestUserInputArgs,
    UNAVAILABLE, UserInput, UserInputArgs,
};
