//! The hook engine: runs the configured chains for each phase.
//!
//! Chains, in order: built-in hooks first, then configured groups in file order, and within a
//! group its hooks in order. Hooks run one after another (Claude Code runs matching hooks in
//! parallel; a chain needs an order, so each hook sees what earlier ones did).
//!
//! | phase | each hook may | a crash or timeout |
//! |---|---|---|
//! | PreToolUse | rewrite the arguments (the next hook sees them), pre-approve (`allow`, kept unless a later hook denies; `ask` withdraws it), deny (stops the chain) | `Err(HookFailure)`: the host answers `hook_failed` |
//! | PostToolUse | replace the output, set `is_error`, block (sets `is_error` and attaches the reason as `hook_reason`) | `Err(HookFailure)` |
//! | UserPromptSubmit | deny the turn (stops the chain), add context | a warning (fails open) |
//! | TurnStart, TurnEnd, PreCompact | add context, warn; blocks are ignored with a warning | a warning |
//!
//! Matchers select hooks in the tool phases only; loop phases run every group.

use crate::command::run_command_hook;
use crate::config::{HookSpec, HooksConfig};
use crate::design_quality::DesignReview;
use crate::protocol::{HookReply, HookRequest, ToolFacts, Verdict, attach_block_reason};
use crate::workflow::run_workflow_hook;
use async_trait::async_trait;
use kun_ports::{
    ContentBlock, HookFailure, HookPhase, HookRunner, HookToolCall, HookTurnEvent, HookTurnOutcome,
    PostToolOutcome, PreToolDecision, PreToolOutcome, ToolResult,
};

/// A hook built into the engine, enabled with [`HookEngineBuilder::builtin`]. Built-in hooks
/// run before configured ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BuiltinHook {
    /// PostToolUse review of front-end files after `write`/`edit` (see
    /// [`crate::design_quality`]).
    DesignQuality,
}

/// Why an engine could not be built.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The HTTP client for workflow hooks could not be created.
    #[error("could not create the HTTP client for workflow hooks: {0}")]
    HttpClient(String),
}

/// Builds a [`HookEngine`].
#[derive(Debug, Default)]
pub struct HookEngineBuilder {
    config: HooksConfig,
    builtins: Vec<BuiltinHook>,
}

impl HookEngineBuilder {
    /// Uses this configuration (replacing any given before).
    #[must_use]
    pub fn config(mut self, config: HooksConfig) -> Self {
        self.config = config;
        self
    }

    /// Enables a built-in hook.
    #[must_use]
    pub fn builtin(mut self, hook: BuiltinHook) -> Self {
        if !self.builtins.contains(&hook) {
            self.builtins.push(hook);
        }
        self
    }

    /// Builds the engine.
    ///
    /// # Errors
    /// When the HTTP client for workflow hooks cannot be created.
    pub fn build(self) -> Result<HookEngine, EngineError> {
        let has_workflow = HookPhase::ALL.iter().any(|phase| {
            self.config.groups(*phase).iter().any(|group| {
                group
                    .hooks
                    .iter()
                    .any(|hook| matches!(hook, HookSpec::Workflow(_)))
            })
        });
        let client = if has_workflow {
            Some(
                reqwest::Client::builder()
                    .build()
                    .map_err(|err| EngineError::HttpClient(err.to_string()))?,
            )
        } else {
            None
        };
        let design = if self.builtins.contains(&BuiltinHook::DesignQuality) {
            Some(DesignReview)
        } else {
            None
        };
        Ok(HookEngine {
            config: self.config,
            client,
            design,
        })
    }
}

/// Runs hooks: implements [`HookRunner`] over a [`HooksConfig`] and the enabled built-ins.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use kun_hooks::{BuiltinHook, HookEngine, HooksConfig};
/// let config = HooksConfig::from_json_str(
///     r#"{"PreToolUse": [{"matcher": "bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}]}"#,
/// )?;
/// let engine = HookEngine::builder()
///     .config(config)
///     .builtin(BuiltinHook::DesignQuality)
///     .build()?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct HookEngine {
    config: HooksConfig,
    client: Option<reqwest::Client>,
    design: Option<DesignReview>,
}

impl HookEngine {
    /// A builder with no hooks and no built-ins.
    #[must_use]
    pub fn builder() -> HookEngineBuilder {
        HookEngineBuilder::default()
    }

    /// The configuration this engine runs.
    #[must_use]
    pub const fn config(&self) -> &HooksConfig {
        &self.config
    }

    /// The configured hooks of a tool phase that match a tool, in chain order.
    fn tool_hooks<'a>(
        &'a self,
        phase: HookPhase,
        tool: &'a str,
    ) -> impl Iterator<Item = &'a HookSpec> + 'a {
        self.config
            .groups(phase)
            .iter()
            .filter(move |group| group.matcher.matches(tool))
            .flat_map(|group| group.hooks.iter())
    }

    /// Runs one hook. `Err` carries the failure message of a crash or timeout.
    async fn run(&self, hook: &HookSpec, request: &HookRequest<'_>) -> Result<HookReply, String> {
        let label = hook.label();
        match hook {
            HookSpec::Command(command) => run_command_hook(command, &label, request).await,
            HookSpec::Workflow(workflow) => match &self.client {
                Some(client) => Ok(run_workflow_hook(client, workflow, &label, request).await),
                None => Ok(HookReply::warning(format!(
                    "{} workflow hook `{label}` has no HTTP client; it was skipped",
                    request.phase.as_str()
                ))),
            },
        }
    }
}

#[async_trait]
impl HookRunner for HookEngine {
    fn is_empty(&self) -> bool {
        self.design.is_none()
            && !self.config.has_hooks(HookPhase::PreToolUse)
            && !self.config.has_hooks(HookPhase::PostToolUse)
    }

    async fn pre_tool_use(&self, call: &HookToolCall) -> Result<PreToolOutcome, HookFailure> {
        let phase = HookPhase::PreToolUse;
        let mut outcome = PreToolOutcome::default();
        let mut arguments = call.arguments.clone();
        let mut rewritten = false;
        let mut allowed = false;
        for hook in self.tool_hooks(phase, &call.tool_name) {
            let request = HookRequest {
                phase,
                turn: &call.turn,
                tool: Some(ToolFacts {
                    name: &call.tool_name,
                    call_id: &call.call_id,
                    input: &arguments,
                    response: None,
                }),
                prompt: None,
            };
            let reply = self
                .run(hook, &request)
                .await
                .map_err(|message| HookFailure { message })?;
            outcome.warnings.extend(reply.warnings);
            outcome.additional_context.extend(reply.context);
            match reply.updated_input {
                Some(new) if new.is_object() => {
                    arguments = new;
                    rewritten = true;
                }
                Some(_) => outcome.warnings.push(format!(
                    "PreToolUse hook `{}` gave updatedInput that is not an object; the \
                     arguments were kept",
                    hook.label()
                )),
                None => {}
            }
            match reply.verdict {
                Verdict::Block { reason } => {
                    outcome.decision = PreToolDecision::Deny { reason };
                    outcome.arguments = rewritten.then_some(arguments);
                    return Ok(outcome);
                }
                Verdict::Allow => allowed = true,
                Verdict::Ask => allowed = false,
                Verdict::NoOpinion => {}
            }
        }
        if allowed {
            outcome.decision = PreToolDecision::Allow;
        }
        outcome.arguments = rewritten.then_some(arguments);
        Ok(outcome)
    }

    async fn post_tool_use(
        &self,
        call: &HookToolCall,
        result: ToolResult,
    ) -> Result<PostToolOutcome, HookFailure> {
        let phase = HookPhase::PostToolUse;
        let mut outcome = PostToolOutcome {
            result,
            warnings: Vec::new(),
            additional_context: Vec::new(),
        };
        if let Some(design) = &self.design {
            design
                .annotate(call, &mut outcome.result, &mut outcome.additional_context)
                .await;
        }
        for hook in self.tool_hooks(phase, &call.tool_name) {
            let request = HookRequest {
                phase,
                turn: &call.turn,
                tool: Some(ToolFacts {
                    name: &call.tool_name,
                    call_id: &call.call_id,
                    input: &call.arguments,
                    response: Some(&outcome.result),
                }),
                prompt: None,
            };
            let reply = self
                .run(hook, &request)
                .await
                .map_err(|message| HookFailure { message })?;
            outcome.warnings.extend(reply.warnings);
            outcome.additional_context.extend(reply.context);
            if let Some(output) = reply.output {
                // The tool's rendering described the old output; the model now reads the new
                // one, rendered generically.
                outcome.result.output = output;
                outcome.result.content.clear();
            }
            if let Some(is_error) = reply.is_error {
                outcome.result.is_error = is_error;
            }
            if let Verdict::Block { reason } = reply.verdict {
                outcome.result.is_error = true;
                if !outcome.result.content.is_empty() {
                    outcome
                        .result
                        .content
                        .push(ContentBlock::text(format!("blocked by a hook: {reason}")));
                }
                attach_block_reason(&mut outcome.result.output, reason);
            }
        }
        Ok(outcome)
    }

    async fn turn_event(&self, event: &HookTurnEvent) -> HookTurnOutcome {
        let phase = event.phase;
        let mut outcome = HookTurnOutcome::default();
        if matches!(phase, HookPhase::PreToolUse | HookPhase::PostToolUse) {
            outcome.warnings.push(format!(
                "{} is a tool phase; run it through pre_tool_use/post_tool_use, not turn_event",
                phase.as_str()
            ));
            return outcome;
        }
        let hooks = self
            .config
            .groups(phase)
            .iter()
            .flat_map(|group| group.hooks.iter());
        for hook in hooks {
            let request = HookRequest {
                phase,
                turn: &event.turn,
                tool: None,
                prompt: event.prompt.as_deref(),
            };
            let reply = match self.run(hook, &request).await {
                Ok(reply) => reply,
                Err(message) => {
                    outcome
                        .warnings
                        .push(format!("{message}; the turn went on without it"));
                    continue;
                }
            };
            outcome.warnings.extend(reply.warnings);
            outcome.additional_context.extend(reply.context);
            if let Verdict::Block { reason } = reply.verdict {
                if phase == HookPhase::UserPromptSubmit {
                    outcome.denied = Some(reason);
                    break;
                }
                outcome.warnings.push(format!(
                    "{} hook `{}` tried to block, but {} hooks only observe: {reason}",
                    phase.as_str(),
                    hook.label(),
                    phase.as_str()
                ));
            }
        }
        outcome
    }
}
