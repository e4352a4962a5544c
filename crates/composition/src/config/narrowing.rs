//! Merging one configuration layer: **the one place** where a layer's authority decides what
//! each key may do. The user's own layers (user config, `--config`) and a trusted workspace
//! override key by key; an **untrusted** workspace (its `.kun/config.toml` and `.mcp.json`)
//! may only narrow, by the rule of each key in [`RULES`]:
//!
//! | rule | an untrusted workspace may | keys |
//! |---|---|---|
//! | [`Rule::Stricter`] | choose a stricter value (orders below) | `sandbox`, `approval`, `mode`, `approval_fallback` |
//! | [`Rule::Lower`] | lower the number | `limits.*`, `serve.max_tool_name_length`, `delegation.max_parallel`, `delegation.max_turns`, `delegation.openai.timeout_seconds`, `web.timeout_seconds`, `web.max_bytes`, `computer_use.max_actions_per_turn` |
//! | [`Rule::OnlyOff`] | turn it off | `sandbox.network`, `skills.enabled`, `web.allow_private_addresses`, `computer_use.mode` |
//! | [`Rule::Add`] | add entries | `tools.deny`, `skills.disabled` |
//! | [`Rule::Intersect`] | remove entries (its list is intersected with the one in effect) | `tools.allow`, `tools.plan_allow`, `shell.env`, `serve.allowed_origins` |
//! | [`Rule::UserOnly`] | nothing (a trusted workspace neither) | `trust.*`, `sandbox.protected_path_exceptions`, `delegation.openai.base_url`, `delegation.openai.model`, `delegation.openai.api_key_env`, `memory.path`, `web.user_agent`, `web.search`, `plan.dir`, `media` (every `[media.<kind>]` key; a repository must not send your key to its own server, nor move your memory file) |
//! | [`Rule::Presentation`] | anything: it changes how results look, not what runs | `mcp.*`, `serve.structured_content`, `client_surface` |
//! | [`Rule::HooksDropped`] | nothing: its hooks do not run | `hooks` |
//! | [`Rule::ServersRefused`] | define servers that do not start unless pinned | `mcp_servers` |
//!
//! Strictness orders (a value applies when it equals the one in effect or is stricter):
//!
//! | key | from loosest to strictest | why |
//! |---|---|---|
//! | `sandbox` | danger-full-access < workspace-write < read-only; external-sandbox is not ordered: a workspace may leave it only for read-only and never choose it | external-sandbox asserts that something outside confines this process; only the user can know that, and its meaning may loosen (in codex it runs commands unconfined) |
//! | `approval` | auto < on-request = suggest < untrusted < always < never | ordered by the calls that run without a person's yes: `auto` all, `on-request` the auto-policy ones, `untrusted` only allow-listed ones, `always` none; `never` runs no call that needs a decision at all, so it is the strictest although it never prompts. Equal ranks do not swap (on-request ↛ suggest) |
//! | `mode` | agent < plan | plan lists only the plan whitelist and read-only tools |
//! | `approval_fallback` | allow < deny | |
//! | `delegation.runner` | openai < none | `none` runs no child agent |
//!
//! Every ignored value becomes an [`Ignored`] entry: reported once on stderr at load and
//! listed by `doctor`, with the command that would trust the workspace.

use super::agents::{DelegationTable, OpenAiTable, RunnerKind, SkillsTable};
use super::file::{
    ApprovalFallback, ConfigFile, LimitsTable, McpTable, SandboxTable, ServeTable, ShellTable,
    ToolsTable, TrustTable,
};
use super::memory_web::{MemoryTable, WebTable};
use super::{ConfigError, Settings, Source, hooks_from_toml};
use kun_hooks::HooksConfig;
use kun_ports::{ApprovalPolicy, HookPhase, SandboxMode, ThreadMode};
use kun_registry::PlanWhitelist;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod gui_media;
#[cfg(test)]
mod tests;

pub(super) use gui_media::GuiMediaLayer;

/// How much a layer may say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Authority {
    /// The user's own: the user config, `--config`.
    User,
    /// A workspace the user trusts: counts as the user's own, except for user-only keys.
    TrustedWorkspace,
    /// A workspace the user does not trust: may only narrow.
    UntrustedWorkspace,
}

/// What an untrusted workspace may do with a key (see the module table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// Only a stricter (or the same) value.
    Stricter,
    /// Only a lower (or the same) number.
    Lower,
    /// Only `false`.
    OnlyOff,
    /// Entries are added to the list in effect.
    Add,
    /// The list is intersected with the one in effect.
    Intersect,
    /// Read from the user config and `--config` only.
    UserOnly,
    /// Applies from any layer.
    Presentation,
    /// Hooks of an untrusted workspace do not run.
    HooksDropped,
    /// Servers an untrusted workspace defines do not start unless pinned.
    ServersRefused,
}

impl Rule {
    /// Why a value was ignored under this rule.
    #[must_use]
    pub const fn describe(self) -> &'static str {
        match self {
            Self::Stricter => "an untrusted workspace may only make it stricter",
            Self::Lower => "an untrusted workspace may only lower it",
            Self::OnlyOff => "an untrusted workspace may only turn it off",
            Self::Add => "an untrusted workspace may only add entries",
            Self::Intersect => {
                "an untrusted workspace may only remove entries from the list in effect"
            }
            Self::UserOnly => "this key is read from your user config and --config only",
            Self::Presentation => "applies from any layer",
            Self::HooksDropped => "hooks of an untrusted workspace do not run",
            Self::ServersRefused => "MCP servers defined by an untrusted workspace do not start",
        }
    }
}

/// Every configuration key and its rule. `hooks` and `mcp_servers` stand for everything
/// under them. A table test fails when a key of [`ConfigFile`] is missing here.
pub const RULES: &[(&str, Rule)] = &[
    ("sandbox", Rule::Stricter),
    ("sandbox.network", Rule::OnlyOff),
    ("sandbox.protected_path_exceptions", Rule::UserOnly),
    ("approval", Rule::Stricter),
    ("mode", Rule::Stricter),
    ("approval_fallback", Rule::Stricter),
    ("tools.allow", Rule::Intersect),
    ("tools.deny", Rule::Add),
    ("tools.plan_allow", Rule::Intersect),
    ("limits.max_output_lines", Rule::Lower),
    ("limits.max_output_bytes", Rule::Lower),
    ("limits.bash_timeout_seconds", Rule::Lower),
    ("hooks", Rule::HooksDropped),
    ("mcp_servers", Rule::ServersRefused),
    ("mcp.search", Rule::Presentation),
    ("mcp.search_threshold", Rule::Presentation),
    ("mcp.top_k", Rule::Presentation),
    ("trust.workspaces", Rule::UserOnly),
    ("trust.mcp_servers", Rule::UserOnly),
    ("shell.env", Rule::Intersect),
    ("serve.allowed_origins", Rule::Intersect),
    ("serve.structured_content", Rule::Presentation),
    ("serve.max_tool_name_length", Rule::Lower),
    ("client_surface", Rule::Presentation),
    ("plan.dir", Rule::UserOnly),
    ("computer_use.mode", Rule::OnlyOff),
    ("computer_use.max_actions_per_turn", Rule::Lower),
    ("media", Rule::UserOnly),
    ("skills.enabled", Rule::OnlyOff),
    ("skills.disabled", Rule::Add),
    ("delegation.runner", Rule::Stricter),
    ("delegation.max_parallel", Rule::Lower),
    ("delegation.max_turns", Rule::Lower),
    ("delegation.openai.base_url", Rule::UserOnly),
    ("delegation.openai.model", Rule::UserOnly),
    ("delegation.openai.api_key_env", Rule::UserOnly),
    ("delegation.openai.timeout_seconds", Rule::Lower),
    ("memory.path", Rule::UserOnly),
    ("web.allow_private_addresses", Rule::OnlyOff),
    ("web.timeout_seconds", Rule::Lower),
    ("web.max_bytes", Rule::Lower),
    ("web.user_agent", Rule::UserOnly),
    ("web.search", Rule::UserOnly),
];

/// The rule of a dotted key: the longest entry of [`RULES`] that is the key or a table
/// above it (`mcp_servers.x.command` → `mcp_servers`, `sandbox.network` → itself).
#[must_use]
pub fn rule_of(key: &str) -> Option<Rule> {
    RULES
        .iter()
        .filter(|(k, _)| key == *k || key.strip_prefix(k).is_some_and(|r| r.starts_with('.')))
        .max_by_key(|(k, _)| k.len())
        .map(|(_, rule)| *rule)
}

/// A setting of the workspace layer that was not applied (wholly or in part).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Ignored {
    /// The dotted key (`sandbox`, `hooks.PreToolUse`, `mcp_servers.helper`).
    pub key: String,
    /// The file it came from.
    pub file: PathBuf,
    /// What was asked for (the entries left out, for lists), rendered and escaped.
    pub given: String,
    /// The rule that left it out.
    pub rule: Rule,
    /// The value in effect instead, rendered.
    pub in_effect: Option<String>,
    /// One more way to apply it (an MCP definition's pin line).
    pub hint: Option<String>,
}

impl Ignored {
    /// The line reported on stderr and by `doctor`, with what would apply it.
    #[must_use]
    pub fn line(&self, workspace: &Path) -> String {
        let effect = self
            .in_effect
            .as_ref()
            .map(|v| format!(" (in effect: {v})"))
            .unwrap_or_default();
        let remedy = if self.rule == Rule::UserOnly {
            "set it in your user config instead".to_owned()
        } else {
            let mut remedy = format!(
                "to apply it, trust the workspace: {}",
                super::trust::trust_command(workspace)
            );
            if let Some(hint) = &self.hint {
                remedy.push_str(&format!(", or add {hint} to your user config"));
            }
            remedy
        };
        format!(
            "ignored `{} = {}` from {}: {}{effect}; {remedy}",
            self.key,
            self.given,
            self.file.display(),
            self.rule.describe()
        )
    }
}

/// JSON for a value from a file: control characters escaped (a hostile file cannot drive the
/// terminal), at most 200 characters.
pub(crate) fn render<T: Serialize + ?Sized>(value: &T) -> String {
    let text = serde_json::to_string(value).unwrap_or_else(|_| "?".to_owned());
    match text.char_indices().nth(200) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// `mcp_servers.<name>`, the name quoted when it is not a bare TOML key.
pub(crate) fn server_key(name: &str) -> String {
    let bare = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        format!("mcp_servers.{name}")
    } else {
        format!("mcp_servers.{}", render(name))
    }
}

/// A value with a strictness order (see the module table).
trait Strictness: Copy + PartialEq + Serialize {
    /// Whether `self` may replace `current` from an untrusted workspace.
    fn narrows(self, current: Self) -> bool;
}

impl Strictness for SandboxMode {
    fn narrows(self, current: Self) -> bool {
        use SandboxMode::{DangerFullAccess, ReadOnly, WorkspaceWrite};
        self == current
            || self == ReadOnly
            || (self == WorkspaceWrite && current == DangerFullAccess)
    }
}

const fn approval_rank(policy: ApprovalPolicy) -> u8 {
    match policy {
        ApprovalPolicy::Auto => 0,
        ApprovalPolicy::OnRequest | ApprovalPolicy::Suggest => 1,
        ApprovalPolicy::Untrusted => 2,
        ApprovalPolicy::Always => 3,
        ApprovalPolicy::Never => 4,
    }
}

impl Strictness for ApprovalPolicy {
    fn narrows(self, current: Self) -> bool {
        self == current || approval_rank(self) > approval_rank(current)
    }
}

impl Strictness for ThreadMode {
    fn narrows(self, current: Self) -> bool {
        self == current || self == Self::Plan
    }
}

impl Strictness for RunnerKind {
    fn narrows(self, current: Self) -> bool {
        self == current || self == Self::None
    }
}

impl Strictness for ApprovalFallback {
    fn narrows(self, current: Self) -> bool {
        self == current || self == Self::Deny
    }
}

/// What an unset list means, for intersecting.
#[derive(Clone, Copy)]
enum Unset {
    /// Everything (an unset allow-list).
    Everything,
    /// These names (the default plan whitelist; an empty default).
    These(&'static [&'static str]),
}

/// One layer being merged: its authority, and where applied values and ignored ones go.
struct Merge<'a> {
    authority: Authority,
    source: &'a Source,
    file: &'a Path,
    sources: &'a mut BTreeMap<String, Source>,
    ignored: &'a mut Vec<Ignored>,
}

impl Merge<'_> {
    fn narrowing(&self) -> bool {
        self.authority == Authority::UntrustedWorkspace
    }

    /// Checks, in debug builds, that the merge applies the rule [`RULES`] documents.
    fn expect(key: &str, rule: Rule) {
        debug_assert_eq!(
            rule_of(key),
            Some(rule),
            "{key}: RULES and the merge disagree"
        );
    }

    fn applied(&mut self, key: &str) {
        self.sources.insert(key.to_owned(), self.source.clone());
    }

    fn ignore(&mut self, key: &str, given: String, rule: Rule, in_effect: Option<String>) {
        Self::expect(key, rule);
        self.ignored.push(Ignored {
            key: key.to_owned(),
            file: self.file.to_path_buf(),
            given,
            rule,
            in_effect,
            hint: None,
        });
    }

    fn presentation<T>(&mut self, key: &str, slot: &mut Option<T>, value: Option<T>) {
        Self::expect(key, Rule::Presentation);
        if let Some(value) = value {
            *slot = Some(value);
            self.applied(key);
        }
    }

    fn stricter<T: Strictness>(&mut self, key: &str, slot: &mut T, value: Option<T>) {
        Self::expect(key, Rule::Stricter);
        let Some(value) = value else { return };
        if !self.narrowing() || value.narrows(*slot) {
            *slot = value;
            self.applied(key);
        } else {
            self.ignore(key, render(&value), Rule::Stricter, Some(render(slot)));
        }
    }

    fn lower(&mut self, key: &str, slot: &mut Option<u32>, value: Option<u32>, default: u32) {
        Self::expect(key, Rule::Lower);
        let Some(value) = value else { return };
        let current = slot.unwrap_or(default);
        if !self.narrowing() || value <= current {
            *slot = Some(value);
            self.applied(key);
        } else {
            self.ignore(key, render(&value), Rule::Lower, Some(render(&current)));
        }
    }

    fn only_off(&mut self, key: &str, slot: &mut Option<bool>, value: Option<bool>) {
        Self::expect(key, Rule::OnlyOff);
        let Some(value) = value else { return };
        if !self.narrowing() || !value || Some(value) == *slot {
            *slot = Some(value);
            self.applied(key);
        } else {
            let current = slot.unwrap_or(false);
            self.ignore(key, render(&value), Rule::OnlyOff, Some(render(&current)));
        }
    }

    fn add(&mut self, key: &str, slot: &mut Option<Vec<String>>, value: Option<Vec<String>>) {
        Self::expect(key, Rule::Add);
        let Some(value) = value else { return };
        if self.narrowing() {
            let list = slot.get_or_insert_with(Vec::new);
            for name in value {
                if !list.contains(&name) {
                    list.push(name);
                }
            }
        } else {
            *slot = Some(value);
        }
        self.applied(key);
    }

    fn intersect(
        &mut self,
        key: &str,
        slot: &mut Option<Vec<String>>,
        value: Option<Vec<String>>,
        unset: Unset,
    ) {
        Self::expect(key, Rule::Intersect);
        let Some(value) = value else { return };
        if !self.narrowing() {
            *slot = Some(value);
            self.applied(key);
            return;
        }
        let admitted = |name: &String| match (&*slot, unset) {
            (Some(list), _) => list.contains(name),
            (None, Unset::Everything) => true,
            (None, Unset::These(names)) => names.contains(&name.as_str()),
        };
        let (kept, dropped): (Vec<String>, Vec<String>) =
            value.into_iter().partition(|name| admitted(name));
        if !dropped.is_empty() {
            let in_effect = match (&*slot, unset) {
                (Some(list), _) => render(list),
                (None, Unset::Everything) => "every name".to_owned(),
                (None, Unset::These(names)) => render(names),
            };
            self.ignore(key, render(&dropped), Rule::Intersect, Some(in_effect));
        }
        *slot = Some(kept);
        self.applied(key);
    }

    fn user_only<T: Serialize>(&mut self, key: &str, value: Option<T>, apply: impl FnOnce(T)) {
        Self::expect(key, Rule::UserOnly);
        let Some(value) = value else { return };
        if self.authority == Authority::User {
            apply(value);
            self.applied(key);
        } else {
            self.ignore(key, render(&value), Rule::UserOnly, None);
        }
    }

    fn hooks(&mut self, layer: &HooksConfig, into: &mut HooksConfig) {
        for phase in HookPhase::ALL {
            for group in layer.groups(phase) {
                if self.narrowing() {
                    let labels: Vec<String> = group.hooks.iter().map(|h| h.label()).collect();
                    let given = render(&serde_json::json!({
                        "matcher": group.matcher.source(),
                        "hooks": labels,
                    }));
                    self.ignore(
                        &format!("hooks.{}", phase.as_str()),
                        given,
                        Rule::HooksDropped,
                        None,
                    );
                } else {
                    into.push(phase, group.clone());
                    self.applied("hooks");
                }
            }
        }
    }
}

impl Settings {
    /// Merges one parsed layer with `authority` (see the module docs). Values of `file` are
    /// validated before (`validate::file`); `text` and `path` name hook errors.
    ///
    /// # Errors
    /// Hooks that `kun-hooks` rejects.
    pub(super) fn merge_layer(
        &mut self,
        file: ConfigFile,
        text: &str,
        path: &Path,
        source: &Source,
        authority: Authority,
    ) -> Result<(), ConfigError> {
        // Destructured in full: a new key of `ConfigFile` does not compile until it has a rule.
        let ConfigFile {
            sandbox,
            approval,
            mode,
            approval_fallback,
            tools,
            limits,
            hooks,
            mcp_servers,
            mcp,
            trust,
            shell,
            serve,
            client_surface,
            plan,
            computer_use,
            media,
            skills,
            delegation,
            memory,
            web,
        } = file;
        let search_config = super::memory_web::check_web(web.as_ref(), path, text)?;
        let hooks = hooks
            .map(|table| hooks_from_toml(table, path, text))
            .transpose()?;
        let mut m = Merge {
            authority,
            source,
            file: path,
            sources: &mut self.sources,
            ignored: &mut self.ignored,
        };
        let SandboxTable {
            mode: sandbox_mode,
            network,
            protected_path_exceptions,
        } = sandbox.unwrap_or_default();
        m.stricter("sandbox", &mut self.sandbox, sandbox_mode);
        let mut net = Some(self.sandbox_options.network);
        m.only_off("sandbox.network", &mut net, network);
        self.sandbox_options.network = net.unwrap_or(false);
        let exceptions = &mut self.sandbox_options.protected_path_exceptions;
        m.user_only(
            "sandbox.protected_path_exceptions",
            protected_path_exceptions,
            |v| {
                *exceptions = v;
            },
        );
        m.stricter("approval", &mut self.approval, approval);
        m.stricter("mode", &mut self.mode, mode);
        m.stricter(
            "approval_fallback",
            &mut self.approval_fallback,
            approval_fallback,
        );

        let ToolsTable {
            allow,
            deny,
            plan_allow,
        } = tools.unwrap_or_default();
        m.intersect(
            "tools.allow",
            &mut self.tools.allow,
            allow,
            Unset::Everything,
        );
        m.add("tools.deny", &mut self.tools.deny, deny);
        let default_plan = Unset::These(&PlanWhitelist::DEFAULT_NAMES);
        m.intersect(
            "tools.plan_allow",
            &mut self.tools.plan_allow,
            plan_allow,
            default_plan,
        );

        let LimitsTable {
            max_output_lines,
            max_output_bytes,
            bash_timeout_seconds,
        } = limits.unwrap_or_default();
        let defaults = kun_builtin_tools::OutputLimits::default();
        let lines = u32::try_from(defaults.max_lines).unwrap_or(u32::MAX);
        let bytes = u32::try_from(defaults.max_bytes).unwrap_or(u32::MAX);
        let l = &mut self.limits;
        m.lower(
            "limits.max_output_lines",
            &mut l.max_output_lines,
            max_output_lines,
            lines,
        );
        m.lower(
            "limits.max_output_bytes",
            &mut l.max_output_bytes,
            max_output_bytes,
            bytes,
        );
        let timeout = super::DEFAULT_BASH_TIMEOUT_SECONDS;
        m.lower(
            "limits.bash_timeout_seconds",
            &mut l.bash_timeout_seconds,
            bash_timeout_seconds,
            timeout,
        );

        let McpTable {
            search,
            search_threshold,
            top_k,
        } = mcp.unwrap_or_default();
        m.presentation("mcp.search", &mut self.mcp.search, search);
        m.presentation(
            "mcp.search_threshold",
            &mut self.mcp.search_threshold,
            search_threshold,
        );
        m.presentation("mcp.top_k", &mut self.mcp.top_k, top_k);

        let TrustTable {
            workspaces,
            mcp_servers: pins,
        } = trust.unwrap_or_default();
        let t = &mut self.trust;
        m.user_only("trust.workspaces", workspaces, |v| {
            extend_unique(&mut t.workspaces, v)
        });
        m.user_only("trust.mcp_servers", pins, |v| {
            extend_unique(&mut t.mcp_servers, v)
        });

        let ShellTable { env } = shell.unwrap_or_default();
        let mut shell_env = Some(std::mem::take(&mut self.shell.env));
        m.intersect("shell.env", &mut shell_env, env, Unset::These(&[]));
        self.shell.env = shell_env.unwrap_or_default();

        let ServeTable {
            allowed_origins,
            structured_content,
            max_tool_name_length,
        } = serve.unwrap_or_default();
        let mut origins = Some(std::mem::take(&mut self.serve.allowed_origins));
        m.intersect(
            "serve.allowed_origins",
            &mut origins,
            allowed_origins,
            Unset::These(&[]),
        );
        self.serve.allowed_origins = origins.unwrap_or_default();
        let mut content = Some(self.serve.structured_content);
        m.presentation("serve.structured_content", &mut content, structured_content);
        self.serve.structured_content = content.unwrap_or_default();
        let mut length = Some(self.serve.max_tool_name_length);
        m.lower(
            "serve.max_tool_name_length",
            &mut length,
            max_tool_name_length,
            super::DEFAULT_MAX_TOOL_NAME_LENGTH,
        );
        self.serve.max_tool_name_length = length.unwrap_or(super::DEFAULT_MAX_TOOL_NAME_LENGTH);

        m.gui_media(
            GuiMediaLayer {
                client_surface,
                plan,
                computer_use,
                media,
            },
            &mut self.gui,
            &mut self.media,
        );
        let SkillsTable { enabled, disabled } = skills.unwrap_or_default();
        let mut skills_on = Some(self.skills.enabled.unwrap_or(true));
        m.only_off("skills.enabled", &mut skills_on, enabled);
        if enabled.is_some() {
            self.skills.enabled = skills_on;
        }
        m.add("skills.disabled", &mut self.skills.disabled, disabled);

        let DelegationTable {
            runner,
            max_parallel,
            max_turns,
            openai,
        } = delegation.unwrap_or_default();
        let d = &mut self.delegation;
        let mut runner_in_effect = d.runner.unwrap_or_default();
        m.stricter("delegation.runner", &mut runner_in_effect, runner);
        if runner.is_some() {
            d.runner = Some(runner_in_effect);
        }
        m.lower(
            "delegation.max_parallel",
            &mut d.max_parallel,
            max_parallel,
            super::DEFAULT_MAX_PARALLEL,
        );
        m.lower(
            "delegation.max_turns",
            &mut d.max_turns,
            max_turns,
            super::DEFAULT_MAX_TURNS,
        );
        let OpenAiTable {
            base_url,
            model,
            api_key_env,
            timeout_seconds,
        } = openai.unwrap_or_default();
        let o = d.openai.get_or_insert_with(OpenAiTable::default);
        m.user_only("delegation.openai.base_url", base_url, |v| {
            o.base_url = Some(v);
        });
        m.user_only("delegation.openai.model", model, |v| o.model = Some(v));
        m.user_only("delegation.openai.api_key_env", api_key_env, |v| {
            o.api_key_env = Some(v);
        });
        m.lower(
            "delegation.openai.timeout_seconds",
            &mut o.timeout_seconds,
            timeout_seconds,
            super::DEFAULT_TIMEOUT_SECONDS,
        );

        let MemoryTable { path: memory_file } = memory.unwrap_or_default();
        let memory_settings = &mut self.memory;
        m.user_only("memory.path", memory_file, |file| {
            memory_settings.path = Some(super::memory_web::memory_path(path, file));
        });
        let WebTable {
            allow_private_addresses,
            timeout_seconds,
            user_agent,
            max_bytes,
            search,
        } = web.unwrap_or_default();
        let mut private = Some(self.web.allow_private_addresses);
        m.only_off(
            "web.allow_private_addresses",
            &mut private,
            allow_private_addresses,
        );
        self.web.allow_private_addresses = private.unwrap_or(false);
        m.lower(
            "web.timeout_seconds",
            &mut self.web.timeout_seconds,
            timeout_seconds,
            u32::try_from(kun_web::FetchOptions::default().timeout.as_secs()).unwrap_or(30),
        );
        m.lower(
            "web.max_bytes",
            &mut self.web.max_bytes,
            max_bytes,
            u32::try_from(kun_web::DEFAULT_MAX_BYTES).unwrap_or(u32::MAX),
        );
        let web_settings = &mut self.web;
        m.user_only("web.user_agent", user_agent, |agent| {
            web_settings.user_agent = Some(agent);
        });
        m.user_only("web.search", search, |_| {
            web_settings.search = search_config;
        });

        if let Some(layer) = hooks {
            m.hooks(&layer, &mut self.hooks);
        }
        // Servers are kept under every authority (doctor shows a refused one with its pin
        // line); who may start them is kun-mcp's decision (`McpTrust`), from their source.
        for (name, entry) in mcp_servers.unwrap_or_default() {
            m.applied(&format!("mcp_servers.{name}"));
            self.mcp_servers.insert(name, entry);
        }
        Ok(())
    }
}

fn extend_unique<T: PartialEq>(list: &mut Vec<T>, more: Vec<T>) {
    for item in more {
        if !list.contains(&item) {
            list.push(item);
        }
    }
}
