//! The typed tool boundary: the shape every tool is written in.
//!
//! A [`TypedTool`] names its argument and output types; the blanket `impl Tool` does the
//! rest, in one place for every tool:
//!
//! * the input schema comes from `Args` ([`schema_for`](crate::schema_for)) and the output
//!   schema from `Output` ([`output_schema_for`](crate::output_schema_for)) — build the spec
//!   with [`ToolSpec::typed`];
//! * arguments are parsed into `Args`; bad ones become an `invalid_arguments` result naming the
//!   problem (and an unparseable `{"__raw": …}` envelope says the payload was cut off);
//! * a successful run becomes a result whose `output` is `Output` as JSON (for programs) and
//!   whose content is [`TypedTool::render`] (for the model), plus any media blocks;
//! * an output the tool judges a failure ([`TypedTool::is_error`]: a command that exited
//!   non-zero) keeps its output and rendering, with `is_error` set;
//! * a [`ToolFailure`] becomes an error result with its code, message and details; the model
//!   reads the message, then each detail the message does not already hold as `key: value`;
//! * the pipeline hooks (`edit_guard`, `write_paths`, `approval_scope`, `call_approval`,
//!   `preflight`, …) receive typed arguments, never raw JSON keys.
//!
//! ```
//! use async_trait::async_trait;
//! use kun_ports::{ToolContext, ToolFailure, ToolSpec, TypedTool};
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//!
//! /// Arguments of `echo`.
//! #[derive(Deserialize, JsonSchema)]
//! #[serde(deny_unknown_fields)]
//! struct EchoArgs {
//!     /// What to say back.
//!     text: String,
//! }
//!
//! /// What `echo` returns.
//! #[derive(Serialize, Deserialize, JsonSchema)]
//! struct EchoOutput {
//!     text: String,
//! }
//!
//! struct Echo(ToolSpec);
//!
//! impl Echo {
//!     fn new() -> Self {
//!         Self(ToolSpec::typed::<EchoArgs, EchoOutput>("echo", "Says the text back."))
//!     }
//! }
//!
//! #[async_trait]
//! impl TypedTool for Echo {
//!     type Args = EchoArgs;
//!     type Output = EchoOutput;
//!     fn spec(&self) -> &ToolSpec {
//!         &self.0
//!     }
//!     fn render(&self, output: &EchoOutput) -> String {
//!         output.text.clone()
//!     }
//!     async fn run(&self, args: EchoArgs, _ctx: ToolContext<'_>) -> Result<EchoOutput, ToolFailure> {
//!         if args.text.is_empty() {
//!             return Err(ToolFailure::invalid("text is empty: give something to echo"));
//!         }
//!         Ok(EchoOutput { text: args.text })
//!     }
//! }
//!
//! let echo = Echo::new();
//! let spec = kun_ports::Tool::spec(&echo);
//! assert_eq!(spec.input_schema["required"], serde_json::json!(["text"]));
//! assert_eq!(spec.output_schema.as_ref().unwrap()["type"], "object");
//! ```

use crate::{
    CallApproval, CommandApproval, ContentBlock, EditGuard, ErrorCode, PathError, ReadObservation,
    Tool, ToolContext, ToolError, ToolHostContext, ToolKind, ToolResult, ToolSpec,
    output_schema_for, schema_for,
};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::fmt;

/// The key of a raw-argument envelope the host could not repair.
const RAW_ENVELOPE_KEY: &str = "__raw";

/// A failure inside a tool, shown to the model as an error result with its code.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolFailure {
    /// The code the result carries.
    pub code: ErrorCode,
    /// What went wrong and what to do next, in plain words.
    pub message: String,
    /// Extra fields for the output object (shown to the model as `key: value` lines).
    pub details: Map<String, Value>,
}

impl ToolFailure {
    /// A failure of the tool itself (`tool_execution_failed`): a file that cannot be read, a
    /// command that cannot start.
    #[must_use]
    pub fn new(message: impl Into<String>) -> Self {
        Self::coded(ErrorCode::ToolExecutionFailed, message)
    }

    /// A failure with a specific code.
    #[must_use]
    pub fn coded(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            details: Map::new(),
        }
    }

    /// Bad arguments (`invalid_arguments`).
    #[must_use]
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::coded(ErrorCode::InvalidArguments, message)
    }

    /// Adds a detail field.
    #[must_use]
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.details.insert(key.to_owned(), value.into());
        self
    }

    /// The error result the model sees: `{code, error, ...details}` for programs; for the
    /// model, the message, then each detail the message does not already hold, as
    /// `key: value` (strings as they are, other values as compact JSON).
    ///
    /// ```
    /// use kun_ports::ToolFailure;
    /// let failure = ToolFailure::new("a.txt does not exist").with("path", "a.txt").with("tried", 2);
    /// assert_eq!(failure.into_result().model_text(), "a.txt does not exist\ntried: 2");
    /// ```
    #[must_use]
    pub fn into_result(self) -> ToolResult {
        let text = self.model_text();
        ToolResult::failure_with(self.code, self.message, self.details).with_text(text)
    }

    /// The text of [`ToolFailure::into_result`].
    fn model_text(&self) -> String {
        let mut text = self.message.clone();
        for (key, value) in &self.details {
            let shown = match value {
                Value::Null => continue,
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            if value.is_string() && self.message.contains(shown.as_str()) {
                continue;
            }
            text.push('\n');
            text.push_str(key);
            text.push_str(": ");
            text.push_str(&shown);
        }
        text
    }
}

impl fmt::Display for ToolFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ToolFailure {}

impl From<PathError> for ToolFailure {
    fn from(err: PathError) -> Self {
        Self::coded(err.code, err.message)
    }
}

impl From<std::io::Error> for ToolFailure {
    fn from(err: std::io::Error) -> Self {
        Self::new(err.to_string())
    }
}

/// Parses a tool's arguments into `T`.
///
/// `null` counts as `{}`. An unparseable `{"__raw": "..."}` envelope (the host could not
/// repair it) means the model's output limit cut the JSON off: the error says so and how to
/// retry with smaller payloads.
///
/// # Errors
/// `invalid_arguments` naming the problem (missing field, wrong type, unknown field).
pub fn parse_args<T: DeserializeOwned>(tool: &str, arguments: Value) -> Result<T, ToolFailure> {
    if let Some(raw) = arguments.get(RAW_ENVELOPE_KEY).and_then(Value::as_str) {
        let received = raw.chars().count();
        return Err(ToolFailure::invalid(format!(
            "the arguments for {tool} were not valid JSON ({received} characters arrived), most \
             likely cut off by your output limit; retry with a much smaller payload: write a short \
             first version, then extend it with several small edit calls"
        ))
        .with("received_chars", received));
    }
    let arguments = if arguments.is_null() {
        Value::Object(Map::new())
    } else {
        arguments
    };
    serde_json::from_value(arguments)
        .map_err(|err| ToolFailure::invalid(format!("invalid arguments for {tool}: {err}")))
}

impl ToolSpec {
    /// A spec whose input schema comes from `A` and output schema from `O` (both sanitised),
    /// with the defaults of [`ToolSpec::new`].
    #[must_use]
    pub fn typed<A: JsonSchema, O: JsonSchema>(
        name: impl Into<String>,
        description: impl Into<String>,
    ) -> Self {
        Self::new(name, description, schema_for::<A>()).with_output_schema(output_schema_for::<O>())
    }
}

/// A tool written with typed arguments and output; see the module docs. Every type that
/// implements it is a [`Tool`].
#[async_trait]
pub trait TypedTool: Send + Sync + 'static {
    /// The arguments, as the input schema describes them.
    type Args: DeserializeOwned + JsonSchema + Send + 'static;
    /// A successful result, as the output schema describes it. It is serialised into the
    /// result's `output`; leave empty optional fields out (`skip_serializing_if`), never
    /// `null`.
    type Output: Serialize + DeserializeOwned + JsonSchema + Send + Sync + 'static;

    /// Static metadata; build it with [`ToolSpec::typed`].
    fn spec(&self) -> &ToolSpec;

    /// The text the model reads for a successful result: compact and conventional (numbered
    /// lines, `path:line:col:text`, a unified diff), no null or false fields, no absolute
    /// paths the model did not ask for.
    fn render(&self, output: &Self::Output) -> String;

    /// Media blocks after the text (an image, audio); none by default.
    fn media(&self, _output: &Self::Output) -> Vec<ContentBlock> {
        Vec::new()
    }

    /// Whether a run that produced an output still failed (a command that exited non-zero,
    /// a check that failed): the result keeps the output and rendering, with `is_error` set.
    /// No by default.
    fn is_error(&self, _output: &Self::Output) -> bool {
        false
    }

    /// See [`Tool::call_approval`].
    fn call_approval(&self, _args: &Self::Args) -> CallApproval {
        CallApproval::AsDeclared
    }

    /// See [`Tool::preflight`].
    ///
    /// # Errors
    /// The failure the model reads instead of an approval prompt.
    fn preflight(&self, _args: &Self::Args, _ctx: &ToolHostContext) -> Result<(), ToolFailure> {
        Ok(())
    }

    /// See [`Tool::should_advertise`].
    fn should_advertise(&self, _ctx: &ToolHostContext) -> bool {
        true
    }

    /// See [`Tool::explicit_approval`].
    ///
    /// # Errors
    /// A message when the call cannot be classified (`approval_classification_failed`).
    fn explicit_approval(
        &self,
        _args: &Self::Args,
        _ctx: &ToolHostContext,
    ) -> Result<bool, String> {
        Ok(false)
    }

    /// See [`Tool::approval_scope`].
    fn approval_scope(
        &self,
        _args: &Self::Args,
        _ctx: &ToolHostContext,
    ) -> Option<CommandApproval> {
        None
    }

    /// See [`Tool::call_kind`].
    fn call_kind(&self, _args: &Self::Args) -> Option<ToolKind> {
        None
    }

    /// See [`Tool::edit_guard`].
    fn edit_guard(&self, _args: &Self::Args) -> Option<EditGuard> {
        None
    }

    /// See [`Tool::write_paths`].
    fn write_paths(&self, _args: &Self::Args) -> Vec<String> {
        Vec::new()
    }

    /// See [`Tool::observed_read`].
    fn observed_read(
        &self,
        _args: &Self::Args,
        _output: &Self::Output,
        _ctx: &ToolHostContext,
    ) -> Option<ReadObservation> {
        None
    }

    /// Runs the call with parsed arguments.
    ///
    /// # Errors
    /// A [`ToolFailure`] the model reads as an error result.
    async fn run(
        &self,
        args: Self::Args,
        ctx: ToolContext<'_>,
    ) -> Result<Self::Output, ToolFailure>;
}

/// Parses arguments for a pipeline hook; `None` when they do not fit (the run then reports
/// `invalid_arguments`).
fn typed_args<T: TypedTool + ?Sized>(tool: &T, arguments: &Value) -> Option<T::Args> {
    parse_args::<T::Args>(&tool.spec().name, arguments.clone()).ok()
}

#[async_trait]
impl<T: TypedTool> Tool for T {
    fn spec(&self) -> &ToolSpec {
        TypedTool::spec(self)
    }

    fn should_advertise(&self, ctx: &ToolHostContext) -> bool {
        TypedTool::should_advertise(self, ctx)
    }

    fn explicit_approval(&self, arguments: &Value, ctx: &ToolHostContext) -> Result<bool, String> {
        typed_args(self, arguments).map_or(Ok(false), |args| {
            TypedTool::explicit_approval(self, &args, ctx)
        })
    }

    fn approval_scope(&self, arguments: &Value, ctx: &ToolHostContext) -> Option<CommandApproval> {
        typed_args(self, arguments).and_then(|args| TypedTool::approval_scope(self, &args, ctx))
    }

    fn call_kind(&self, arguments: &Value) -> Option<ToolKind> {
        typed_args(self, arguments).and_then(|args| TypedTool::call_kind(self, &args))
    }

    fn edit_guard(&self, arguments: &Value) -> Option<EditGuard> {
        typed_args(self, arguments).and_then(|args| TypedTool::edit_guard(self, &args))
    }

    fn write_paths(&self, arguments: &Value) -> Vec<String> {
        typed_args(self, arguments)
            .map(|args| TypedTool::write_paths(self, &args))
            .unwrap_or_default()
    }

    fn call_approval(&self, arguments: &Value) -> CallApproval {
        typed_args(self, arguments).map_or(CallApproval::AsDeclared, |args| {
            TypedTool::call_approval(self, &args)
        })
    }

    /// Arguments that do not parse pass: the run reports them (`invalid_arguments`).
    fn preflight(&self, arguments: &Value, ctx: &ToolHostContext) -> Result<(), ToolFailure> {
        typed_args(self, arguments).map_or(Ok(()), |args| TypedTool::preflight(self, &args, ctx))
    }

    fn observed_read(
        &self,
        arguments: &Value,
        output: &Value,
        ctx: &ToolHostContext,
    ) -> Option<ReadObservation> {
        let args = typed_args(self, arguments)?;
        // Straight from the borrowed tree: no copy of the output (a page of text, often).
        let output = <T::Output as serde::Deserialize>::deserialize(output).ok()?;
        TypedTool::observed_read(self, &args, &output, ctx)
    }

    async fn execute<'a>(
        &self,
        arguments: Value,
        ctx: ToolContext<'a>,
    ) -> Result<ToolResult, ToolError> {
        let args = match parse_args::<T::Args>(&TypedTool::spec(self).name, arguments) {
            Ok(args) => args,
            Err(failure) => return Ok(failure.into_result()),
        };
        match self.run(args, ctx).await {
            Ok(output) => Ok(typed_result(self, &output)),
            Err(failure) => Ok(failure.into_result()),
        }
    }
}

/// A successful typed output as a result: the JSON for programs, the rendering (and media)
/// for the model.
fn typed_result<T: TypedTool>(tool: &T, output: &T::Output) -> ToolResult {
    let mut content = vec![ContentBlock::text(tool.render(output))];
    content.extend(tool.media(output));
    match serde_json::to_value(output) {
        Ok(json) => {
            let mut result = ToolResult::ok(json).with_content(content);
            result.is_error = tool.is_error(output);
            result
        }
        Err(err) => {
            ToolFailure::new(format!("the result could not be encoded: {err}")).into_result()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NoProgress, OpenCatalog, SandboxPolicy, ToolTurn};
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Args {
        path: String,
    }

    #[derive(Debug, Serialize, Deserialize, JsonSchema)]
    struct Out {
        lines: Vec<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        notice: Option<String>,
    }

    struct Lines(ToolSpec);

    #[async_trait]
    impl TypedTool for Lines {
        type Args = Args;
        type Output = Out;
        fn spec(&self) -> &ToolSpec {
            &self.0
        }
        fn render(&self, output: &Out) -> String {
            output.lines.join("\n")
        }
        fn write_paths(&self, args: &Args) -> Vec<String> {
            vec![args.path.clone()]
        }
        async fn run(&self, args: Args, _ctx: ToolContext<'_>) -> Result<Out, ToolFailure> {
            if args.path == "missing" {
                return Err(ToolFailure::new("no such file").with("path", args.path));
            }
            Ok(Out {
                lines: vec!["a".into(), "b".into()],
                notice: None,
            })
        }
    }

    /// A sandbox that is never asked (the test tool resolves no path).
    struct Unused;

    impl SandboxPolicy for Unused {
        fn check_tool(
            &self,
            _tool_name: &str,
            _query: crate::SandboxQuery,
            _mode: crate::SandboxMode,
        ) -> crate::SandboxVerdict {
            crate::SandboxVerdict::Allowed
        }
        fn resolve_path(
            &self,
            input: &str,
            _roots: &[std::path::PathBuf],
            _mode: crate::SandboxMode,
            _access: crate::PathAccess,
        ) -> Result<crate::ResolvedPath, PathError> {
            Err(PathError {
                code: ErrorCode::InvalidArguments,
                message: format!("{input}: no paths in this test"),
            })
        }
        fn confinement_tier(&self) -> crate::ConfinementTier {
            crate::ConfinementTier::None
        }
    }

    fn tool() -> Lines {
        Lines(ToolSpec::typed::<Args, Out>("lines", "Lists lines."))
    }

    async fn call(tool: &Lines, args: Value) -> ToolResult {
        let host = crate::ToolHostContext::builder("t", "u")
            .workspace("/ws")
            .build();
        let sandbox = Unused;
        let ctx = ToolContext {
            turn: ToolTurn::of(&host, &OpenCatalog),
            call_id: "c",
            sandbox: &sandbox as &dyn SandboxPolicy,
            progress: &NoProgress,
        };
        Tool::execute(tool, args, ctx).await.unwrap()
    }

    #[test]
    fn hooks_see_typed_arguments() {
        let t = tool();
        assert_eq!(Tool::write_paths(&t, &json!({"path": "a.txt"})), ["a.txt"]);
        assert!(Tool::write_paths(&t, &json!({"file": "a.txt"})).is_empty());
        let spec = Tool::spec(&t);
        assert_eq!(spec.input_schema["required"], json!(["path"]));
        assert_eq!(
            spec.output_schema.as_ref().unwrap()["required"],
            json!(["lines"])
        );
    }

    #[tokio::test]
    async fn results_carry_output_and_rendering() {
        let ok = call(&tool(), json!({"path": "a"})).await;
        assert!(!ok.is_error);
        assert_eq!(ok.output, json!({"lines": ["a", "b"]}));
        assert_eq!(ok.model_text(), "a\nb");

        let bad = call(&tool(), json!({"path": 3})).await;
        assert_eq!(bad.error_code(), Some("invalid_arguments"));

        let raw = call(&tool(), json!({"__raw": "{\"path\": \"a"})).await;
        assert!(raw.model_text().contains("cut off"), "{}", raw.model_text());

        let failed = call(&tool(), json!({"path": "missing"})).await;
        assert_eq!(failed.error_code(), Some("tool_execution_failed"));
        assert_eq!(failed.model_text(), "no such file\npath: missing");
    }
}
