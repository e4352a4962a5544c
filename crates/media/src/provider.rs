//! [`MediaProvider`]: one `generate_*` tool per provider, of kind `image`, `audio` or `video`
//! (network-backed: their results go through rate-limit normalisation).
//!
//! An unconfigured endpoint (no `[media.<kind>]`), or one whose API key variable is not set,
//! makes its provider unavailable with the reason: the tool is not listed, and `doctor` says
//! why.

use crate::tool::{GenerateMedia, ImageArgs, MediaArgs, MusicArgs, SpeechArgs, VideoArgs};
use kun_ports::{
    ArtifactStore, Delegable, MediaBackend, MediaKind, ProviderKind, ProviderPolicy, Tool,
    ToolProvider,
};
use std::sync::Arc;

/// The provider of one kind's tool.
pub struct MediaProvider {
    kind: MediaKind,
    id: String,
    tool: Arc<dyn Tool>,
    policy: ProviderPolicy,
}

fn tool_for(
    kind: MediaKind,
    backend: Option<Arc<dyn MediaBackend>>,
    artifacts: Arc<dyn ArtifactStore>,
    model: &str,
) -> Arc<dyn Tool> {
    fn make<A: MediaArgs>(
        backend: Option<Arc<dyn MediaBackend>>,
        artifacts: Arc<dyn ArtifactStore>,
        model: &str,
    ) -> Arc<dyn Tool> {
        Arc::new(GenerateMedia::<A>::new(backend, artifacts, model))
    }
    match kind {
        MediaKind::Image => make::<ImageArgs>(backend, artifacts, model),
        MediaKind::Speech => make::<SpeechArgs>(backend, artifacts, model),
        MediaKind::Music => make::<MusicArgs>(backend, artifacts, model),
        MediaKind::Video => make::<VideoArgs>(backend, artifacts, model),
    }
}

impl MediaProvider {
    /// A ready provider of `kind`'s tool over `backend`, storing into `artifacts`.
    #[must_use]
    pub fn ready(
        kind: MediaKind,
        backend: Arc<dyn MediaBackend>,
        artifacts: Arc<dyn ArtifactStore>,
        model: &str,
    ) -> Self {
        Self {
            kind,
            id: format!("media.{}", kind.as_str()),
            tool: tool_for(kind, Some(backend), artifacts, model),
            policy: ProviderPolicy::ready(),
        }
    }

    /// A provider of `kind`'s tool that is unavailable, and why (the tool is not listed).
    #[must_use]
    pub fn unavailable(
        kind: MediaKind,
        artifacts: Arc<dyn ArtifactStore>,
        reason: impl Into<String>,
    ) -> Self {
        Self {
            kind,
            id: format!("media.{}", kind.as_str()),
            tool: tool_for(kind, None, artifacts, ""),
            policy: ProviderPolicy::unavailable(reason),
        }
    }

    /// What it generates.
    #[must_use]
    pub const fn media_kind(&self) -> MediaKind {
        self.kind
    }
}

impl ToolProvider for MediaProvider {
    fn id(&self) -> &str {
        &self.id
    }
    fn kind(&self) -> ProviderKind {
        self.kind.provider_kind()
    }
    fn policy(&self) -> ProviderPolicy {
        self.policy.clone()
    }
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        vec![Arc::clone(&self.tool)]
    }
}

impl Delegable for MediaProvider {}
