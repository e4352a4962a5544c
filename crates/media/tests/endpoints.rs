//! The `generate_*` tools through a real host against local servers in each endpoint's shape:
//! a generated PNG, a WAV, 429 with Retry-After, 500, a video job that succeeds (progress
//! reported) and one that fails midway, oversized responses, abort; and the backend contract
//! for every kind.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use base64::Engine as _;
use kun_media::{Endpoint, MediaProvider, OpenAiMediaBackend, http_client};
use kun_ports::{
    AbortSignal, ArtifactStore, ContentBlock, HostError, MediaKind, ProgressSink, ToolCall,
    ToolHost, ToolHostContext, ToolProvider, ToolResult,
};
use kun_registry::artifacts::DirArtifactStore;
use kun_registry::{CapabilityRegistry, CatalogFilters, Host};
use kun_sandbox::WorkspaceSandbox;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::{Reply, Server, png, wav};

struct Setup {
    host: Host,
    store: Arc<DirArtifactStore>,
    _dir: tempfile::TempDir,
}

fn endpoint(server: &Server, model: &str) -> Endpoint {
    let mut endpoint = Endpoint::new(&server.base_url, model);
    endpoint.api_key = Some("sk-test".to_owned());
    endpoint.poll_interval = Duration::from_millis(20);
    endpoint
}

fn backend(kind: MediaKind, endpoint: Endpoint) -> OpenAiMediaBackend {
    OpenAiMediaBackend::new(kind, endpoint, http_client().unwrap())
}

fn setup(kind: MediaKind, endpoint: Endpoint) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(DirArtifactStore::open(dir.path().join("artifacts")).unwrap());
    let model = endpoint.model.clone();
    let provider = MediaProvider::ready(
        kind,
        Arc::new(backend(kind, endpoint)),
        store.clone(),
        &model,
    );
    let filters = CatalogFilters::new(Arc::new(WorkspaceSandbox::default()));
    let registry = CapabilityRegistry::with_providers(filters, vec![Arc::new(provider)]).unwrap();
    Setup {
        host: Host::builder(Arc::new(registry)).build(),
        store,
        _dir: dir,
    }
}

/// Progress updates as a sink records them.
#[derive(Default)]
struct Recorded(Mutex<Vec<Value>>);

impl ProgressSink for Recorded {
    fn update(&self, _call_id: &str, partial: &Value) {
        self.0.lock().unwrap().push(partial.clone());
    }
}

fn ctx(progress: Option<Arc<Recorded>>, abort: Option<AbortSignal>) -> ToolHostContext {
    let mut builder = ToolHostContext::builder("t", "turn")
        .workspace("/ws")
        .approval(kun_ports::ApprovalPolicy::Auto);
    if let Some(progress) = progress {
        builder = builder.progress(progress);
    }
    if let Some(abort) = abort {
        builder = builder.abort(abort);
    }
    builder.build()
}

async fn run(setup: &Setup, tool: &str, args: Value) -> ToolResult {
    setup
        .host
        .execute(ToolCall::new("c1", tool, args), &ctx(None, None))
        .await
        .unwrap()
}

#[tokio::test]
async fn an_image_is_generated_stored_and_shown() {
    let image = png(4, 3);
    let encoded = base64::engine::general_purpose::STANDARD.encode(&image);
    let server = Server::start(move |seen| {
        assert_eq!((seen.method.as_str(), seen.path.as_str()), ("POST", "/v1/images/generations"));
        Reply::json(200, &json!({"created": 1, "data": [{"b64_json": encoded, "revised_prompt": "a red fox, watercolour"}]}))
    })
    .await;
    let setup = setup(MediaKind::Image, endpoint(&server, "gpt-image-1"));
    let result = run(
        &setup,
        "generate_image",
        json!({"prompt": "a fox", "size": "1024x1024"}),
    )
    .await;
    assert!(!result.is_error, "{:?}", result.output);
    let out = &result.output;
    assert_eq!(out["media_type"], "image/png");
    assert_eq!(out["byte_size"], image.len());
    assert_eq!(out["model"], "gpt-image-1");
    assert_eq!(out["revised_prompt"], "a red fox, watercolour");
    assert_eq!(out["blake3"], blake3::hash(&image).to_hex().to_string());
    let path = out["path"].as_str().unwrap();
    assert_eq!(
        std::fs::read(path).unwrap(),
        image,
        "the file outlives the call"
    );
    assert_eq!(
        setup
            .store
            .get(out["artifact_id"].as_str().unwrap())
            .unwrap(),
        image
    );
    let Some(ContentBlock::Image { data, mime_type }) = result.content.get(1) else {
        panic!("{:?}", result.content)
    };
    assert_eq!(mime_type, "image/png");
    assert_eq!(
        imagesize::blob_size(
            &base64::engine::general_purpose::STANDARD
                .decode(data)
                .unwrap()
        )
        .unwrap()
        .width,
        4
    );
    assert!(
        result
            .model_text()
            .starts_with("Generated an image (image/png"),
        "{}",
        result.model_text()
    );

    let seen = server.requests();
    assert_eq!(seen[0].authorization.as_deref(), Some("Bearer sk-test"));
    assert_eq!(
        seen[0].body,
        json!({"model": "gpt-image-1", "prompt": "a fox", "n": 1, "response_format": "b64_json", "size": "1024x1024"})
    );
}

#[tokio::test]
async fn speech_and_music_come_back_as_audio() {
    let audio = wav();
    let served = audio.clone();
    let server = Server::start(move |seen| {
        assert_eq!(seen.path, "/v1/audio/speech");
        Reply::bytes("audio/wav", served.clone())
    })
    .await;
    let speech = setup(MediaKind::Speech, endpoint(&server, "tts-1"));
    let result = run(
        &speech,
        "generate_speech",
        json!({"text": "Hello there", "voice": "nova"}),
    )
    .await;
    assert!(!result.is_error, "{:?}", result.output);
    assert_eq!(result.output["media_type"], "audio/wav");
    let Some(ContentBlock::Audio { data, mime_type }) = result.content.get(1) else {
        panic!("{:?}", result.content)
    };
    assert_eq!(mime_type, "audio/wav");
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(data)
            .unwrap(),
        audio
    );
    assert_eq!(
        server.requests()[0].body,
        json!({"model": "tts-1", "input": "Hello there", "voice": "nova", "response_format": "wav"})
    );

    let music = setup(MediaKind::Music, endpoint(&server, "music-1"));
    let result = run(
        &music,
        "generate_music",
        json!({"prompt": "calm piano", "seconds": 20}),
    )
    .await;
    assert!(!result.is_error, "{:?}", result.output);
    assert_eq!(result.output["model"], "music-1");
    assert_eq!(server.requests()[1].body["seconds"], 20);
}

#[tokio::test]
async fn a_rate_limit_says_how_long_to_wait() {
    let server = Server::start(|_| {
        Reply::json(429, &json!({"error": {"message": "slow down"}})).header("retry-after", "7")
    })
    .await;
    let setup = setup(MediaKind::Image, endpoint(&server, "m"));
    let result = run(&setup, "generate_image", json!({"prompt": "x"})).await;
    assert_eq!(
        result.error_code(),
        Some("rate_limited"),
        "{:?}",
        result.output
    );
    assert_eq!(result.output["retry_after_seconds"], 7);
    assert!(
        result.model_text().contains("slow down"),
        "{}",
        result.model_text()
    );
}

#[tokio::test]
async fn a_server_error_is_reported_with_its_message() {
    let server =
        Server::start(|_| Reply::json(500, &json!({"error": {"message": "the GPU caught fire"}})))
            .await;
    let setup = setup(MediaKind::Speech, endpoint(&server, "m"));
    let result = run(&setup, "generate_speech", json!({"text": "x"})).await;
    assert_eq!(result.error_code(), Some("tool_execution_failed"));
    assert_eq!(result.output["status"], 500);
    assert!(
        result.model_text().contains("the GPU caught fire"),
        "{}",
        result.model_text()
    );
}

fn video_server(fail_at: Option<u32>) -> impl Fn(&support::Seen) -> Reply + Send + Sync + 'static {
    let polls = Mutex::new(0u32);
    move |seen| match (seen.method.as_str(), seen.path.as_str()) {
        ("POST", "/v1/videos") => Reply::json(
            200,
            &json!({"id": "video_1", "status": "queued", "progress": 0}),
        ),
        ("GET", "/v1/videos/video_1") => {
            let mut n = polls.lock().unwrap();
            *n += 1;
            if fail_at == Some(*n) {
                return Reply::json(
                    200,
                    &json!({"id": "video_1", "status": "failed", "error": {"message": "content policy"}}),
                );
            }
            match *n {
                1 => Reply::json(
                    200,
                    &json!({"id": "video_1", "status": "in_progress", "progress": 30}),
                ),
                2 => Reply::json(
                    200,
                    &json!({"id": "video_1", "status": "in_progress", "progress": 70}),
                ),
                _ => Reply::json(
                    200,
                    &json!({"id": "video_1", "status": "completed", "progress": 100}),
                ),
            }
        }
        ("GET", "/v1/videos/video_1/content") => {
            Reply::bytes("video/mp4", b"\0\0\0\x18ftypmp42fake-video".to_vec())
        }
        other => panic!("unexpected request {other:?}"),
    }
}

#[tokio::test]
async fn a_video_job_is_polled_with_progress_and_linked() {
    let server = Server::start(video_server(None)).await;
    let setup = setup(MediaKind::Video, endpoint(&server, "sora-2"));
    let progress = Arc::new(Recorded::default());
    let result = setup
        .host
        .execute(
            ToolCall::new(
                "c",
                "generate_video",
                json!({"prompt": "waves", "seconds": 4}),
            ),
            &ctx(Some(progress.clone()), None),
        )
        .await
        .unwrap();
    assert!(!result.is_error, "{:?}", result.output);
    assert_eq!(result.output["media_type"], "video/mp4");
    let Some(ContentBlock::ResourceLink { uri, mime_type, .. }) = result.content.get(1) else {
        panic!("{:?}", result.content)
    };
    assert_eq!(
        uri,
        &format!("file://{}", result.output["path"].as_str().unwrap())
    );
    assert_eq!(mime_type.as_deref(), Some("video/mp4"));
    let values: Vec<f64> = progress
        .0
        .lock()
        .unwrap()
        .iter()
        .map(|p| p["progress"].as_f64().unwrap())
        .collect();
    assert!(values.len() >= 4, "{values:?}");
    assert!(
        values.windows(2).all(|w| w[0] <= w[1]),
        "progress never decreases: {values:?}"
    );
    assert_eq!(values.last(), Some(&100.0));
    assert_eq!(
        server.requests()[0].body,
        json!({"model": "sora-2", "prompt": "waves", "seconds": "4"})
    );
}

#[tokio::test]
async fn a_video_job_that_fails_midway_says_why() {
    let server = Server::start(video_server(Some(2))).await;
    let setup = setup(MediaKind::Video, endpoint(&server, "sora-2"));
    let result = run(&setup, "generate_video", json!({"prompt": "waves"})).await;
    assert_eq!(result.error_code(), Some("tool_execution_failed"));
    assert!(
        result.model_text().contains("content policy"),
        "{}",
        result.model_text()
    );
    assert!(
        !server
            .requests()
            .iter()
            .any(|s| s.path.ends_with("/content")),
        "nothing downloaded"
    );
}

#[tokio::test]
async fn oversized_responses_are_refused_and_nothing_is_kept() {
    let big = vec![0u8; 4096];
    let server = Server::start(move |seen| {
        if seen.path == "/v1/audio/speech" {
            Reply::bytes("audio/wav", big.clone())
        } else {
            let huge = "A".repeat(8192);
            Reply::json(200, &json!({"data": [{"b64_json": huge}]}))
        }
    })
    .await;
    for (kind, tool, args) in [
        (MediaKind::Speech, "generate_speech", json!({"text": "x"})),
        (MediaKind::Image, "generate_image", json!({"prompt": "x"})),
    ] {
        let mut small = endpoint(&server, "m");
        small.max_bytes = 1024;
        let setup = setup(kind, small);
        let result = run(&setup, tool, args).await;
        assert_eq!(
            result.error_code(),
            Some("tool_execution_failed"),
            "{tool}: {:?}",
            result.output
        );
        assert_eq!(result.output["limit_bytes"], 1024, "{tool}");
        let stored = std::fs::read_dir(setup.store.dir()).unwrap().count();
        assert_eq!(stored, 0, "{tool}: nothing kept");
    }
}

#[tokio::test]
async fn an_abort_stops_a_long_job() {
    let server = Server::start(|seen| {
        if seen.method == "POST" {
            Reply::json(200, &json!({"id": "v", "status": "queued"}))
        } else {
            Reply::json(
                200,
                &json!({"id": "v", "status": "in_progress", "progress": 10}),
            )
        }
    })
    .await;
    let setup = setup(MediaKind::Video, endpoint(&server, "m"));
    let abort = AbortSignal::new();
    let later = abort.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        later.abort();
    });
    let started = std::time::Instant::now();
    let outcome = setup
        .host
        .execute(
            ToolCall::new("c", "generate_video", json!({"prompt": "x"})),
            &ctx(None, Some(abort)),
        )
        .await;
    assert!(
        matches!(outcome, Err(HostError::Aborted { .. })),
        "{outcome:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn an_unconfigured_kind_is_unavailable_and_not_listed() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn ArtifactStore> = Arc::new(DirArtifactStore::open(dir.path()).unwrap());
    let provider =
        MediaProvider::unavailable(MediaKind::Music, store, "[media.music] is not configured");
    assert_eq!(provider.id(), "media.music");
    assert_eq!(provider.kind(), kun_ports::ProviderKind::Audio);
    assert!(!provider.policy().available);
    let filters = CatalogFilters::new(Arc::new(WorkspaceSandbox::default()));
    let registry = CapabilityRegistry::with_providers(filters, vec![Arc::new(provider)]).unwrap();
    let host = Host::builder(Arc::new(registry)).build();
    assert!(host.list_tools(&ctx(None, None)).is_empty());
    let refused = host
        .execute(
            ToolCall::new("c", "generate_music", json!({"prompt": "x"})),
            &ctx(None, None),
        )
        .await;
    assert!(
        matches!(refused, Err(HostError::NotAdvertised { .. })),
        "{refused:?}"
    );
}

#[tokio::test]
async fn every_kind_honours_the_backend_contract() {
    let image = base64::engine::general_purpose::STANDARD.encode(png(2, 2));
    let audio = wav();
    let answer = move |seen: &support::Seen| match seen.path.as_str() {
        "/v1/images/generations" => Reply::json(200, &json!({"data": [{"b64_json": image}]})),
        "/v1/audio/speech" => Reply::bytes("audio/wav", audio.clone()),
        "/v1/videos" => Reply::json(
            200,
            &json!({"id": "v", "status": "in_progress", "progress": 50}),
        ),
        "/v1/videos/v" => Reply::json(
            200,
            &json!({"id": "v", "status": "completed", "progress": 100}),
        ),
        "/v1/videos/v/content" => Reply::bytes("video/mp4", b"fake".to_vec()),
        other => panic!("unexpected {other}"),
    };
    let server = Server::start(answer.clone()).await;
    let slow = Server::start(move |seen| answer(seen).after(Duration::from_secs(3))).await;
    for kind in MediaKind::ALL {
        let fast = backend(kind, endpoint(&server, "m"));
        let slow = backend(kind, endpoint(&slow, "m"));
        kun_ports::testkit::media_backend_contract(&fast, &slow, kind).await;
    }
}
