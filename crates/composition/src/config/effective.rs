//! The effective configuration as a list of `key = value (source)` lines, for `doctor`, and a
//! check of every configuration file on its own, so that all bad files are reported at once.

use super::{Authority, ConfigError, ConfigPaths, Settings, Source, read_file, read_mcp_json};
use kun_builtin_tools::OutputLimits;
use kun_ports::HookPhase;
use serde::Serialize;
use serde_json::{Value, json};

/// The default `bash` timeout in seconds when `limits.bash_timeout_seconds` is unset.
pub const DEFAULT_BASH_TIMEOUT_SECONDS: u32 = 900;

/// One effective value and the layer it came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EffectiveValue {
    /// The dotted key (`sandbox`, `limits.max_output_lines`, `mcp_servers.time`).
    pub key: String,
    /// The value in effect (defaults filled in; `null` for an unset optional list).
    pub value: Value,
    /// Where it came from.
    pub source: Source,
}

impl Settings {
    /// Every effective value with its source, in a fixed order: the top-level keys and
    /// `[sandbox]`, then `[tools]`, `[limits]` (defaults filled in), `[mcp]`, `[shell]`,
    /// `[serve]`, `[trust]`, `hooks`, and one line per MCP server sorted by name.
    #[must_use]
    pub fn effective(&self) -> Vec<EffectiveValue> {
        let defaults = OutputLimits::default();
        let limits = &self.limits;
        let mut values = vec![
            ("sandbox", json!(self.sandbox)),
            ("sandbox.network", json!(self.sandbox_options.network)),
            (
                "sandbox.protected_path_exceptions",
                json!(self.sandbox_options.protected_path_exceptions),
            ),
            ("approval", json!(self.approval)),
            ("mode", json!(self.mode)),
            ("approval_fallback", json!(self.approval_fallback)),
            ("tools.allow", json!(self.tools.allow)),
            ("tools.deny", json!(self.tools.deny)),
            ("tools.plan_allow", json!(self.tools.plan_allow)),
            (
                "limits.max_output_lines",
                json!(
                    limits
                        .max_output_lines
                        .map_or(defaults.max_lines, |n| n as usize)
                ),
            ),
            (
                "limits.max_output_bytes",
                json!(
                    limits
                        .max_output_bytes
                        .map_or(defaults.max_bytes, |n| n as usize)
                ),
            ),
            (
                "limits.bash_timeout_seconds",
                json!(
                    limits
                        .bash_timeout_seconds
                        .unwrap_or(DEFAULT_BASH_TIMEOUT_SECONDS)
                ),
            ),
            ("mcp.search", json!(self.mcp.search)),
            ("mcp.search_threshold", json!(self.mcp.search_threshold)),
            ("mcp.top_k", json!(self.mcp.top_k)),
            ("shell.env", json!(self.shell.env)),
            ("serve.allowed_origins", json!(self.serve.allowed_origins)),
            (
                "serve.structured_content",
                json!(self.serve.structured_content),
            ),
            (
                "serve.max_tool_name_length",
                json!(self.serve.max_tool_name_length),
            ),
            ("trust.workspaces", json!(self.trust.workspaces)),
            ("trust.mcp_servers", json!(self.trust.mcp_servers)),
            ("client_surface", json!(self.gui.client_surface)),
            ("plan.dir", json!(self.gui.plan_dir)),
            ("computer_use.mode", json!(self.gui.computer_use)),
            (
                "computer_use.max_actions_per_turn",
                json!(self.gui.max_actions_per_turn),
            ),
            ("media", json!(self.media.endpoints)),
            (
                "memory.path",
                json!(self.memory.file().map(|p| p.display().to_string())),
            ),
            (
                "web.allow_private_addresses",
                json!(self.web.allow_private_addresses),
            ),
            (
                "web.timeout_seconds",
                json!(self.web.options().timeout.as_secs()),
            ),
            ("web.user_agent", json!(self.web.options().user_agent)),
            ("web.max_bytes", json!(self.web.options().max_bytes)),
            (
                "web.search",
                json!(self.web.search.as_ref().map(|s| json!({
                    "backend": s.engine.as_str(),
                    "url": s.url,
                    "api_key_env": s.api_key_env,
                }))),
            ),
            ("hooks", self.hooks_summary()),
            ("skills.enabled", json!(self.skills.enabled.unwrap_or(true))),
            ("skills.disabled", json!(self.skills.disabled)),
            (
                "delegation.runner",
                json!(self.delegation.runner.unwrap_or_default()),
            ),
            (
                "delegation.max_parallel",
                json!(
                    self.delegation
                        .max_parallel
                        .unwrap_or(super::DEFAULT_MAX_PARALLEL)
                ),
            ),
            (
                "delegation.max_turns",
                json!(
                    self.delegation
                        .max_turns
                        .unwrap_or(super::DEFAULT_MAX_TURNS)
                ),
            ),
            (
                "delegation.openai.base_url",
                json!(
                    self.delegation
                        .openai
                        .as_ref()
                        .and_then(|o| o.base_url.clone())
                ),
            ),
            (
                "delegation.openai.model",
                json!(
                    self.delegation
                        .openai
                        .as_ref()
                        .and_then(|o| o.model.clone())
                ),
            ),
            (
                "delegation.openai.api_key_env",
                json!(
                    self.delegation
                        .openai
                        .as_ref()
                        .and_then(|o| o.api_key_env.clone())
                ),
            ),
            (
                "delegation.openai.timeout_seconds",
                json!(
                    self.delegation
                        .openai
                        .as_ref()
                        .and_then(|o| o.timeout_seconds)
                        .unwrap_or(super::DEFAULT_TIMEOUT_SECONDS)
                ),
            ),
        ]
        .into_iter()
        .map(|(key, value)| EffectiveValue {
            key: key.to_owned(),
            value,
            source: self.source_of(key),
        })
        .collect::<Vec<_>>();
        for (name, entry) in &self.mcp_servers {
            let key = format!("mcp_servers.{name}");
            values.push(EffectiveValue {
                source: self.source_of(&key),
                key,
                value: json!(entry),
            });
        }
        values
    }

    /// `{phase: [{matcher, hooks: [command or url]}]}` for the phases that have hooks.
    fn hooks_summary(&self) -> Value {
        let mut phases = serde_json::Map::new();
        for phase in HookPhase::ALL {
            let groups: Vec<Value> = self
                .hooks
                .groups(phase)
                .iter()
                .map(|group| {
                    let hooks: Vec<String> = group.hooks.iter().map(|h| h.label()).collect();
                    json!({"matcher": group.matcher.source(), "hooks": hooks})
                })
                .collect();
            if !groups.is_empty() {
                phases.insert(phase.as_str().to_owned(), Value::Array(groups));
            }
        }
        Value::Object(phases)
    }

    /// Checks every configuration file on its own (`.mcp.json`, then the user, workspace and
    /// `--config` files) and returns every problem found, in that order. Missing optional
    /// files are fine; a missing `--config` file is an error. Nothing is changed.
    #[must_use]
    pub fn check(paths: &ConfigPaths) -> Vec<ConfigError> {
        let mut errors = Vec::new();
        if let Err(err) = read_mcp_json(&paths.workspace.join(".mcp.json")) {
            errors.push(err);
        }
        for layer in paths.layers() {
            let mut scratch = Self::defaults(&paths.workspace);
            match read_file(&layer.path, layer.presence) {
                Ok(Some((file, text))) => {
                    let checked = super::validate::file(&file, &layer.path, &text).and_then(|()| {
                        scratch.merge_layer(
                            file,
                            &text,
                            &layer.path,
                            &layer.source,
                            Authority::User,
                        )
                    });
                    if let Err(err) = checked {
                        errors.push(err);
                    }
                }
                Ok(None) => {}
                Err(err) => errors.push(err),
            }
        }
        errors
    }
}
