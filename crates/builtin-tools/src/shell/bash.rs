//! `bash`: run one command line in the workspace and return its exit code and output.
//!
//! The model reads the output (after the truncation notice, with the path of the full output,
//! when it was cut), then `exit code N`. A non-zero exit is an error result that keeps both.

use super::ShellConfig;
use super::run::{CapturedOutput, abnormal_end, call_timeout, run_script};
use super::scope::command_scope;
use crate::Failure;
use async_trait::async_trait;
use kun_ports::{
    CommandConfinement, SideEffect, ToolContext, ToolKind, ToolPolicy, ToolSpec, TypedTool,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;

/// The arguments of `bash`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashArgs {
    /// The command line to run with `bash -c` in the workspace root.
    command: String,
    /// Stop the command (and everything it started) after this many seconds. Default 900;
    /// larger values are capped at the configured maximum.
    timeout_seconds: Option<u64>,
    /// A few words on what the command does, shown to whoever approves it.
    description: Option<String>,
}

/// What `bash` returns for a command that exited.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BashOutput {
    /// The exit code (128 + the signal when a signal ended it).
    pub exit_code: i32,
    /// What it printed.
    #[serde(flatten)]
    pub captured: CapturedOutput,
}

/// The `bash` tool (command_execution, on-request). Output: [`BashOutput`]; an error result
/// (with the output) when the exit code is not 0, `tool_timeout` when the timeout passed.
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
        let spec = ToolSpec::typed::<BashArgs, BashOutput>("bash", description)
            .with_kind(ToolKind::CommandExecution)
            .with_policy(ToolPolicy::OnRequest)
            .with_side_effect(SideEffect::Unknown);
        Self {
            spec,
            config,
            confinement,
        }
    }

    async fn run_command(
        &self,
        args: BashArgs,
        ctx: &ToolContext<'_>,
    ) -> Result<BashOutput, Failure> {
        if args.command.trim().is_empty() {
            return Err(Failure::invalid(
                "command is empty; pass the command line to run",
            ));
        }
        let timeout = call_timeout(&self.config, args.timeout_seconds)?;
        tracing::debug!(command = %args.command, description = ?args.description, "bash");
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
        Ok(BashOutput {
            exit_code: run.finished.ending.exit_code().unwrap_or(-1),
            captured: run.captured(),
        })
    }
}

#[async_trait]
impl TypedTool for BashTool {
    type Args = BashArgs;
    type Output = BashOutput;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// The output, then `exit code N`.
    fn render(&self, output: &BashOutput) -> String {
        let mut text = String::new();
        output.captured.render_into(&mut text);
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&format!("exit code {}", output.exit_code));
        text
    }

    /// A non-zero exit.
    fn is_error(&self, output: &BashOutput) -> bool {
        output.exit_code != 0
    }

    /// The parsed command prefix (`git status`, `ls`); `None` for compound commands.
    fn approval_scope(&self, args: &BashArgs) -> Option<String> {
        command_scope(&args.command)
    }

    async fn run(&self, args: BashArgs, ctx: ToolContext<'_>) -> Result<BashOutput, Failure> {
        self.run_command(args, &ctx).await
    }
}
