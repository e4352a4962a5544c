//! `computer_use` and the X11 backend under a private Xvfb: the backend contract, screenshot
//! sizes and scaling, clicks that land where asked (the pointer read back), typing that
//! reaches a real X client (`xev`), the per-turn budget, approval of actions but not of
//! screenshots, and no display → unavailable with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use base64::Engine as _;
use kun_gui::{ComputerUseMode, ComputerUseProvider, X11Desktop};
use kun_ports::{
    ApprovalDecision, ApprovalPolicy, ApprovalReason, ArtifactStore, ComputerBackend,
    ComputerError, ContentBlock, MockApprovalGate, Modality, ProviderKind, ToolProvider,
};
use kun_registry::artifacts::InMemoryArtifactStore;
use serde_json::json;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::xvfb::Xvfb;
use support::{call, ctx, host, listed};

fn provider(
    desktop: &X11Desktop,
    store: Option<Arc<dyn ArtifactStore>>,
    mode: ComputerUseMode,
    budget: u32,
) -> Arc<ComputerUseProvider> {
    let probed = desktop.probe().map(|_| ()).map_err(|e| e.to_string());
    Arc::new(ComputerUseProvider::new(
        Arc::new(desktop.clone()),
        store,
        mode,
        budget,
        probed,
    ))
}

fn approver(times: usize) -> Arc<MockApprovalGate> {
    let mut gate = MockApprovalGate::new();
    gate.expect_request_approval()
        .times(times)
        .withf(|r| {
            r.reason == ApprovalReason::ExplicitTool
                || r.reason == ApprovalReason::UnconfinedCommand
                || r.reason == ApprovalReason::ProviderCommand
        })
        .returning(|_| ApprovalDecision::Allow);
    Arc::new(gate)
}

#[tokio::test]
async fn the_x11_backend_honours_the_contract() {
    let Some(xvfb) = Xvfb::start(800, 600) else {
        return;
    };
    let desktop = X11Desktop::new(Some(xvfb.display.clone()));
    kun_ports::testkit::computer_backend_contract(&desktop).await;
}

#[tokio::test]
async fn a_screenshot_has_the_screen_size_and_goes_to_the_artifact_store() {
    let Some(xvfb) = Xvfb::start(1024, 768) else {
        return;
    };
    let desktop = X11Desktop::new(Some(xvfb.display.clone()));
    let store: Arc<dyn ArtifactStore> = Arc::new(InMemoryArtifactStore::new());
    let host = host(vec![provider(
        &desktop,
        Some(Arc::clone(&store)),
        ComputerUseMode::Always,
        50,
    )]);
    let dir = tempfile::tempdir().unwrap();
    // No approver at all: a screenshot must not need one.
    let ctx = ctx(dir.path(), "t")
        .approval(ApprovalPolicy::OnRequest)
        .build();
    let result = call(&host, &ctx, "computer_use", json!({"action": "screenshot"})).await;
    assert!(!result.is_error, "{result:?}");
    let shot = &result.output["screenshot"];
    assert_eq!(
        (shot["width"].as_u64(), shot["height"].as_u64()),
        (Some(1024), Some(768))
    );
    assert_eq!(shot["scale"], 1.0);
    let Some(ContentBlock::Image { data, mime_type }) = result.content.get(1) else {
        panic!("an image block follows the text: {:?}", result.content);
    };
    assert_eq!(mime_type, "image/png");
    let png = base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap();
    let size = imagesize_of(&png);
    assert_eq!(size, (1024, 768));
    let id = shot["artifact_id"].as_str().unwrap();
    assert_eq!(
        store.get(id).unwrap(),
        png,
        "the artifact is the PNG the model saw"
    );
}

fn imagesize_of(png: &[u8]) -> (u32, u32) {
    // PNG IHDR: width and height are big-endian at bytes 16..24.
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let w = u32::from_be_bytes(png[16..20].try_into().unwrap());
    let h = u32::from_be_bytes(png[20..24].try_into().unwrap());
    (w, h)
}

#[tokio::test]
async fn a_wide_screen_is_scaled_to_1280_and_clicks_map_back() {
    let Some(xvfb) = Xvfb::start(1920, 1080) else {
        return;
    };
    let desktop = X11Desktop::new(Some(xvfb.display.clone()));
    let host = host(vec![provider(&desktop, None, ComputerUseMode::Always, 50)]);
    let dir = tempfile::tempdir().unwrap();
    let quiet = ctx(dir.path(), "t")
        .approval(ApprovalPolicy::OnRequest)
        .build();
    let result = call(
        &host,
        &quiet,
        "computer_use",
        json!({"action": "screenshot"}),
    )
    .await;
    let shot = &result.output["screenshot"];
    assert_eq!(
        (shot["width"].as_u64(), shot["height"].as_u64()),
        (Some(1280), Some(720))
    );
    assert_eq!(
        (
            shot["screen_width"].as_u64(),
            shot["screen_height"].as_u64()
        ),
        (Some(1920), Some(1080))
    );
    assert!(
        result
            .model_text()
            .contains("scaled from the 1920×1080 screen"),
        "{}",
        result.model_text()
    );
    let Some(ContentBlock::Image { data, .. }) = result.content.get(1) else {
        panic!()
    };
    let png = base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap();
    assert_eq!(imagesize_of(&png), (1280, 720));

    // A click at screenshot (640, 360) lands at screen (960, 540).
    let asked = ctx(dir.path(), "t")
        .approval(ApprovalPolicy::OnRequest)
        .approver(approver(1))
        .build();
    let result = call(
        &host,
        &asked,
        "computer_use",
        json!({"action": "click", "x": 640, "y": 360}),
    )
    .await;
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.output["pointer"], json!([640, 360]));
    assert_eq!(
        desktop.pointer().await.unwrap(),
        kun_ports::Point::new(960, 540)
    );

    // Off the screenshot: refused, nothing moves.
    let asked = ctx(dir.path(), "t")
        .approval(ApprovalPolicy::OnRequest)
        .approver(approver(1))
        .build();
    let result = call(
        &host,
        &asked,
        "computer_use",
        json!({"action": "move", "x": 1280, "y": 10}),
    )
    .await;
    assert_eq!(result.error_code(), Some("invalid_arguments"), "{result:?}");
    assert_eq!(
        desktop.pointer().await.unwrap(),
        kun_ports::Point::new(960, 540)
    );
}

#[tokio::test]
async fn typing_reaches_a_window() {
    let Some(xvfb) = Xvfb::start(640, 480) else {
        return;
    };
    let Ok(mut xev) = Command::new("xev")
        .args(["-display", &xvfb.display, "-geometry", "300x200+0+0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
    else {
        assert!(
            std::env::var_os("CI").is_none(),
            "xev must be installed in CI (.ci/run installs x11-utils)"
        );
        eprintln!("skipping: xev is not installed (apt-get install x11-utils)");
        return;
    };
    let stdout = xev.stdout.take().unwrap();
    let (lines_tx, lines_rx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines_tx.send(line).is_err() {
                return;
            }
        }
    });
    wait_for_window(&lines_rx);
    let desktop = X11Desktop::new(Some(xvfb.display.clone()));
    let host = host(vec![provider(&desktop, None, ComputerUseMode::Always, 50)]);
    let dir = tempfile::tempdir().unwrap();
    for (action, args) in [
        ("move", json!({"action": "move", "x": 100, "y": 100})),
        ("type", json!({"action": "type", "text": "Hi é!"})),
    ] {
        let asked = ctx(dir.path(), "t")
            .approval(ApprovalPolicy::OnRequest)
            .approver(approver(1))
            .build();
        let result = call(&host, &asked, "computer_use", args).await;
        assert!(!result.is_error, "{action}: {result:?}");
    }
    let typed = read_typed(&lines_rx, "Hi é!", Duration::from_secs(10));
    let _ = xev.kill();
    let _ = xev.wait();
    assert_eq!(typed, "Hi é!", "xev received the typed text");
}

/// Waits until xev says its window is mapped and exposed.
fn wait_for_window(lines: &std::sync::mpsc::Receiver<String>) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if let Ok(line) = lines.recv_timeout(Duration::from_millis(100))
            && (line.starts_with("Expose") || line.starts_with("MapNotify"))
        {
            return;
        }
    }
    panic!("xev's window did not appear");
}

/// Collects the characters of xev's KeyPress lines until `expected` has arrived.
fn read_typed(
    lines: &std::sync::mpsc::Receiver<String>,
    expected: &str,
    within: Duration,
) -> String {
    let deadline = Instant::now() + within;
    let mut typed = String::new();
    let mut in_press = false;
    while Instant::now() < deadline && typed != expected {
        let Ok(line) = lines.recv_timeout(Duration::from_millis(100)) else {
            continue;
        };
        if line.starts_with("KeyPress") {
            in_press = true;
        } else if line.starts_with("KeyRelease") {
            in_press = false;
        } else if in_press && line.contains("XLookupString gives") {
            // `    XLookupString gives 1 bytes: (61) "a"`
            if let Some(start) = line.find('"') {
                let text = &line[start + 1..line.len().saturating_sub(1)];
                typed.push_str(text);
            }
        }
    }
    typed
}

#[tokio::test]
async fn the_budget_ends_a_turn_s_actions() {
    let Some(xvfb) = Xvfb::start(640, 480) else {
        return;
    };
    let desktop = X11Desktop::new(Some(xvfb.display.clone()));
    let host = host(vec![provider(&desktop, None, ComputerUseMode::Always, 2)]);
    let dir = tempfile::tempdir().unwrap();
    let turn = ctx(dir.path(), "t")
        .approval(ApprovalPolicy::OnRequest)
        .build();
    for left in [1, 0] {
        let result = call(
            &host,
            &turn,
            "computer_use",
            json!({"action": "screenshot"}),
        )
        .await;
        assert_eq!(result.output["actions_left"], left, "{:?}", result.output);
    }
    let result = call(
        &host,
        &turn,
        "computer_use",
        json!({"action": "screenshot"}),
    )
    .await;
    assert_eq!(result.error_code(), Some("action_budget_exhausted"));
    assert!(
        result.model_text().contains("all 2 computer_use actions"),
        "{}",
        result.model_text()
    );
    // The next turn has a fresh budget.
    let next = ctx(dir.path(), "t")
        .approval(ApprovalPolicy::OnRequest)
        .build();
    let result = call(
        &host,
        &next,
        "computer_use",
        json!({"action": "screenshot"}),
    )
    .await;
    assert!(!result.is_error, "{result:?}");
}

#[tokio::test]
async fn actions_are_asked_and_a_denial_does_nothing() {
    let Some(xvfb) = Xvfb::start(640, 480) else {
        return;
    };
    let desktop = X11Desktop::new(Some(xvfb.display.clone()));
    let host = host(vec![provider(&desktop, None, ComputerUseMode::Always, 50)]);
    let dir = tempfile::tempdir().unwrap();
    let before = desktop.pointer().await.unwrap();
    // Even under the `auto` approval policy an action asks; with nobody to ask it is denied.
    let ctx = ctx(dir.path(), "t").approval(ApprovalPolicy::Auto).build();
    let result = call(
        &host,
        &ctx,
        "computer_use",
        json!({"action": "move", "x": 5, "y": 7}),
    )
    .await;
    assert_eq!(result.error_code(), Some("approval_denied"), "{result:?}");
    assert_eq!(desktop.pointer().await.unwrap(), before);
}

#[tokio::test]
async fn listing_follows_the_mode_and_the_model_s_modalities() {
    let Some(xvfb) = Xvfb::start(320, 240) else {
        return;
    };
    let desktop = X11Desktop::new(Some(xvfb.display.clone()));
    let dir = tempfile::tempdir().unwrap();
    let text_only = ctx(dir.path(), "t").build();
    let with_images = ctx(dir.path(), "t")
        .modalities([Modality::Text, Modality::Image])
        .build();
    for (mode, text, images) in [
        (ComputerUseMode::Off, false, false),
        (ComputerUseMode::Auto, false, true),
        (ComputerUseMode::Always, true, true),
    ] {
        let host = host(vec![provider(&desktop, None, mode, 50)]);
        let has = |ctx| listed(&host, ctx).contains(&"computer_use".to_owned());
        assert_eq!(has(&text_only), text, "{mode:?}, text-only model");
        assert_eq!(has(&with_images), images, "{mode:?}, model taking images");
    }
    // A GUI client surface is not needed (the provider is not of kind gui).
    let provider = provider(&desktop, None, ComputerUseMode::Always, 50);
    assert_ne!(provider.kind(), ProviderKind::Gui);
}

#[tokio::test]
async fn no_display_is_unavailable_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let missing = X11Desktop::new(Some(":9999".to_owned()));
    let err = missing.probe().unwrap_err();
    assert!(matches!(err, ComputerError::Unavailable(_)), "{err:?}");
    assert!(err.to_string().contains(":9999"), "{err}");
    let provider = provider(&missing, None, ComputerUseMode::Always, 50);
    let policy = provider.policy();
    assert!(policy.enabled && !policy.available);
    assert!(
        policy
            .reason
            .as_deref()
            .unwrap_or_default()
            .contains(":9999"),
        "{policy:?}"
    );
    let host = host(vec![provider]);
    let ctx = ctx(dir.path(), "t").build();
    assert!(!listed(&host, &ctx).contains(&"computer_use".to_owned()));

    // An unset DISPLAY says so.
    let unset = X11Desktop::new(None);
    if std::env::var_os("DISPLAY").is_none() {
        let err = unset.probe().unwrap_err();
        assert!(err.to_string().contains("DISPLAY is not set"), "{err}");
    }
}
