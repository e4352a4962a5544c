//! `bash`: run one command line in the workspace and return its exit code and output.

use super::ShellConfig;
use super::escalation::{SandboxArg, check_justification};
use super::run::{abnormal_end, call_timeout, run_script};
use super::scope::command_approval;
use crate::{Failure, Outcome, finish, parse_args, schema_for};
use async_trait::async_trait;
use kun_ports::{
    CommandApproval, CommandConfinement, CommandRunner, SideEffect, Tool, ToolContext, ToolError,
    ToolHostContext, ToolKind, ToolPolicy, ToolResult, ToolSpec,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use std::fmt;
use std::sync::Arc;

/// The arguments of `bash`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct BashArgs {
    /// The command line to run with `bash -c` in the workspace root.
    command: String,
    /// Stop the command (and everything it started) after this many seconds. Default 900;
    /// larger values are capped at the configured maximum.
    timeout_seconds: Option<u64>,
    /// A few words on what the command does, shown to whoever approves it.
    description: Option<String>,
    /// `confined` (default): run in the sandbox. `escalated`: run outside it, with full
    /// access to this machine; the user is always asked first. Use it only after the same
    /// command failed because of the sandbox (no network, a write outside the workspace).
    #[serde(default)]
    sandbox: SandboxArg,
    /// With `sandbox: "escalated"`: one sentence for the user on why the command must run
    /// outside the sandbox.
    justification: Option<String>,
}

/// The `bash` tool (command_execution, on-request). Output:
/// `{exit_code, output, truncated, full_output_path?, notice?, duration_ms}`; an error result
/// when the exit code is not 0, `tool_timeout` when the timeout passed.
pub struct BashTool {
    spec: ToolSpec,
    config: ShellConfig,
    confinement: Arc<dyn CommandConfinement>,
}

impl fmt::Debug for BashTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BashTool")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl BashTool {
    /// A `bash` tool with the default configuration.
    #[must_use]
    pub fn new(confinement: Arc<dyn CommandConfinement>) -> Self {
        Self::with_config(confinement, ShellConfig::default())
    }

    /// A `bash` tool with `config`.
    #[must_use]
    pub fn with_config(confinement: Arc<dyn CommandConfinement>, config: ShellConfig) -> Self {
        let description = format!(
            "Run a shell command line with `bash -c` in the workspace root and return its exit code and \
             combined stdout/stderr. stdin is closed and nothing is interactive. The command and \
             everything it starts are killed after timeout_seconds (default {default} s, at most {max} s) \
             and when the command itself exits, so do not leave servers running in the background here: \
             use background_shell for those. Long output keeps its last {lines} lines / {bytes} and \
             says where the full output was saved.",
            default = config.timeouts.default.as_secs(),
            max = config.timeouts.max.as_secs(),
            lines = config.limits.max_lines,
            bytes = crate::output::format_size(config.limits.max_bytes as u64),
        );
        let spec = ToolSpec::new("bash", description, schema_for::<BashArgs>())
            .with_kind(ToolKind::CommandExecution)
            .with_command_runner(CommandRunner::Confinement)
            .with_policy(ToolPolicy::OnRequest)
            .with_side_effect(SideEffect::Unknown);
        Self {
            spec,
            config,
            confinement,
        }
    }

    async fn run(&self, arguments: Value, ctx: &ToolContext<'_>) -> Outcome {
        let args: BashArgs = parse_args("bash", arguments)?;
        if args.command.trim().is_empty() {
            return Err(Failure::invalid(
                "command is empty; pass the command line to run",
            ));
        }
        let timeout = call_timeout(&self.config, args.timeout_seconds)?;
        tracing::debug!(
            command = %args.command,
            description = ?args.description,
            sandbox = ?args.sandbox,
            "bash"
        );
        let run = run_script(
            &args.command,
            ctx,
            &self.config,
            self.confinement.as_ref(),
            timeout,
            &mut |_| {},
        )
        .await?;
        if let Some(failure) = abnormal_end(&run, timeout) {
            return Err(failure);
        }
        Ok(Value::Object(run.fields()))
    }
}

#[async_trait]
impl Tool for BashTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// An escalated call must carry a justification (checked before anyone is asked).
    fn explicit_approval(&self, arguments: &Value, _ctx: &ToolHostContext) -> Result<bool, String> {
        match serde_json::from_value::<BashArgs>(arguments.clone()) {
            Ok(args) => {
                check_justification(args.sandbox, args.justification.as_deref()).map(|()| false)
            }
            // Bad arguments are reported by the run itself (`invalid_arguments`).
            Err(_) => Ok(false),
        }
    }

    /// The command's grant keys (`cargo test`, or one call only, and why), whether it is
    /// known safe, and whether it asks to run outside the sandbox; see [`command_approval`].
    fn approval_scope(&self, arguments: &Value, ctx: &ToolHostContext) -> Option<CommandApproval> {
        let args: BashArgs = serde_json::from_value(arguments.clone()).ok()?;
        Some(command_approval(
            &args.command,
            &ctx.workspace_roots,
            args.sandbox.into(),
            args.justification.as_deref(),
        ))
    }

    async fn execute<'a>(
        &self,
        arguments: Value,
        ctx: ToolContext<'a>,
    ) -> Result<ToolResult, ToolError> {
        let mut result = finish(self.run(arguments, &ctx).await);
        if !result.is_error {
            let exit_code = result.output.get("exit_code").and_then(Value::as_i64);
            result.is_error = exit_code != Some(0);
        }
        Ok(result)
    }
}
