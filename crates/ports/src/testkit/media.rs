//! Contract suite for [`MediaBackend`], run against a working endpoint (the OpenAI-compatible
//! adapter runs it against local servers in each endpoint's shape).
//!
//! | rule | what must hold |
//! |---|---|
//! | 1 | a success has bytes and a media type of the request's family |
//! | 2 | progress fractions stay in `0.0..=1.0` and never decrease |
//! | 3 | an abort already fired ends the call with `Aborted`, promptly |
//! | 4 | an abort fired while the call runs ends it with `Aborted`, promptly |

use crate::{AbortSignal, MediaBackend, MediaError, MediaKind, MediaProgress, MediaRequest};
use std::sync::Mutex;
use std::time::Duration;

/// How long an aborted call may take to return.
const PROMPT: Duration = Duration::from_secs(5);

#[derive(Default)]
struct Recorded(Mutex<Vec<f64>>);

impl MediaProgress for Recorded {
    fn report(&self, fraction: f64, _message: &str) {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(fraction);
    }
}

/// Runs every rule of the media-backend contract for `kind` on `backend`. `slow` must be a
/// backend of the same kind whose endpoint takes at least a few seconds to answer (for
/// rule 4).
pub async fn media_backend_contract(
    backend: &dyn MediaBackend,
    slow: &dyn MediaBackend,
    kind: MediaKind,
) {
    let request = MediaRequest {
        kind,
        prompt: "a lighthouse at dusk".to_owned(),
        options: crate::MediaOptions::default(),
    };
    let progress = Recorded::default();
    let media = backend
        .generate(&request, &progress, &AbortSignal::new())
        .await
        .unwrap_or_else(|e| panic!("media contract rule 1 ({kind:?}): generate failed: {e}"));
    assert!(
        !media.bytes.is_empty(),
        "media contract rule 1 ({kind:?}): a success has bytes"
    );
    assert!(
        kind.accepts_media_type(&media.media_type),
        "media contract rule 1 ({kind:?}): media type {:?} is not of the {kind:?} family",
        media.media_type
    );
    let fractions = progress.0.into_inner().unwrap_or_default();
    assert!(
        fractions.iter().all(|f| (0.0..=1.0).contains(f)),
        "media contract rule 2 ({kind:?}): progress stays within 0..=1: {fractions:?}"
    );
    assert!(
        fractions.windows(2).all(|w| w[0] <= w[1]),
        "media contract rule 2 ({kind:?}): progress never decreases: {fractions:?}"
    );

    let fired = AbortSignal::new();
    fired.abort();
    let result = tokio::time::timeout(
        PROMPT,
        backend.generate(&request, &crate::NoMediaProgress, &fired),
    )
    .await
    .unwrap_or_else(|_| panic!("media contract rule 3 ({kind:?}): an aborted call hung"));
    assert_eq!(
        result.map(|_| ()),
        Err(MediaError::Aborted),
        "media contract rule 3 ({kind:?}): a fired abort ends the call"
    );

    let abort = AbortSignal::new();
    let later = abort.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        later.abort();
    });
    let started = std::time::Instant::now();
    let result = tokio::time::timeout(
        PROMPT,
        slow.generate(&request, &crate::NoMediaProgress, &abort),
    )
    .await
    .unwrap_or_else(|_| panic!("media contract rule 4 ({kind:?}): an abort mid-call hung"));
    assert_eq!(
        result.map(|_| ()),
        Err(MediaError::Aborted),
        "media contract rule 4 ({kind:?}): an abort mid-call ends it"
    );
    assert!(
        started.elapsed() < PROMPT,
        "media contract rule 4 ({kind:?}): the call stopped promptly"
    );
}
