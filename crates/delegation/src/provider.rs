//! The delegation provider (`delegation`, kind delegation): `delegate_task`.
//!
//! It is **not** [`Delegable`](kun_ports::Delegable): the child registry cannot hold it, so a
//! child can never delegate (and `delegate_task` is blocked in every child's lists too).

use crate::profiles::ProfileSet;
use crate::tool::{DelegateTaskTool, DelegationRuntime};
use kun_ports::{ProviderKind, ProviderPolicy, Tool, ToolProvider};
use std::sync::Arc;

/// The provider's id.
pub const DELEGATION_PROVIDER_ID: &str = "delegation";

/// The reason the provider is unavailable without a runner.
pub const NO_RUNNER: &str = "no child runner configured";

/// The delegation provider.
pub struct DelegationProvider {
    profiles: Arc<ProfileSet>,
    runtime: Option<DelegationRuntime>,
    policy: ProviderPolicy,
    tools: Vec<Arc<dyn Tool>>,
}

impl std::fmt::Debug for DelegationProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DelegationProvider")
            .field("profiles", &self.profiles.names())
            .field("runtime", &self.runtime)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl DelegationProvider {
    /// A provider over `profiles`; without a runtime it is unavailable
    /// ([`NO_RUNNER`]) and lists nothing.
    #[must_use]
    pub fn new(profiles: Arc<ProfileSet>, runtime: Option<DelegationRuntime>) -> Self {
        let (policy, tools): (ProviderPolicy, Vec<Arc<dyn Tool>>) = match &runtime {
            Some(runtime) => (
                ProviderPolicy::ready(),
                vec![Arc::new(DelegateTaskTool::new(
                    Arc::clone(&profiles),
                    runtime.clone(),
                ))],
            ),
            None => (ProviderPolicy::unavailable(NO_RUNNER), Vec::new()),
        };
        Self {
            profiles,
            runtime,
            policy,
            tools,
        }
    }

    /// The profiles in effect.
    #[must_use]
    pub fn profiles(&self) -> &Arc<ProfileSet> {
        &self.profiles
    }

    /// The runtime, when a runner is configured.
    #[must_use]
    pub fn runtime(&self) -> Option<&DelegationRuntime> {
        self.runtime.as_ref()
    }
}

impl ToolProvider for DelegationProvider {
    fn id(&self) -> &str {
        DELEGATION_PROVIDER_ID
    }

    fn kind(&self) -> ProviderKind {
        ProviderKind::Delegation
    }

    fn policy(&self) -> ProviderPolicy {
        self.policy.clone()
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.tools.clone()
    }
}
