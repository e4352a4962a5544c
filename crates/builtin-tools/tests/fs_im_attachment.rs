//! `send_im_attachment`: resolves the path for reading, sends through the bridge it was built
//! with, and always asks for explicit approval.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

use async_trait::async_trait;
use kun_builtin_tools::fs::SendImAttachmentTool;
use kun_builtin_tools::testing::TestWorkspace;
use kun_ports::{ImBridge, ImError, Tool, ToolKind, ToolPolicy};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Records what it was asked to send; fails when `fail` is set.
#[derive(Default)]
struct RecordingBridge {
    sent: Mutex<Vec<(PathBuf, Option<String>)>>,
    fail: bool,
}

#[async_trait]
impl ImBridge for RecordingBridge {
    async fn send_attachment(
        &self,
        path: &Path,
        caption: Option<String>,
    ) -> Result<String, ImError> {
        if self.fail {
            return Err(ImError {
                message: "chat is offline".into(),
            });
        }
        let mut sent = self.sent.lock().unwrap();
        sent.push((path.to_path_buf(), caption));
        Ok(format!("msg-{}", sent.len()))
    }
}

#[tokio::test]
async fn sends_a_workspace_file_with_its_caption() {
    let ws = TestWorkspace::new();
    ws.write("out/report.pdf", b"%PDF-1.7");
    let bridge = Arc::new(RecordingBridge::default());
    let tool = SendImAttachmentTool::new(bridge.clone());
    let args = json!({"path": "out/report.pdf", "caption": "the report"});
    let out = tool
        .execute(args, ws.tool_context("call-im"))
        .await
        .unwrap();
    assert!(!out.is_error, "{}", out.output);
    assert_eq!(out.output["message_id"], "msg-1");
    assert_eq!(out.output["path"], "out/report.pdf");
    assert_eq!(out.output["byte_size"], 8);
    assert_eq!(
        out.model_text(),
        "sent out/report.pdf (8B) to the chat as message msg-1"
    );
    assert_eq!(
        *bridge.sent.lock().unwrap(),
        vec![(ws.path("out/report.pdf"), Some("the report".to_owned()))]
    );
}

#[tokio::test]
async fn refuses_paths_outside_missing_files_and_bridge_failures() {
    let ws = TestWorkspace::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("id_rsa"), "key").unwrap();
    std::os::unix::fs::symlink(outside.path().join("id_rsa"), ws.path("key")).unwrap();
    let bridge = Arc::new(RecordingBridge::default());
    let tool = SendImAttachmentTool::new(bridge.clone());
    let escape = tool
        .execute(json!({"path": "key"}), ws.tool_context("c1"))
        .await
        .unwrap();
    assert_eq!(escape.output["code"], "sandbox_read_blocked");
    let missing = tool
        .execute(json!({"path": "gone.txt"}), ws.tool_context("c2"))
        .await
        .unwrap();
    assert_eq!(missing.output["reason"], "file_not_found");
    assert!(bridge.sent.lock().unwrap().is_empty(), "nothing was sent");

    ws.write("a.txt", "a");
    let offline = SendImAttachmentTool::new(Arc::new(RecordingBridge {
        fail: true,
        ..Default::default()
    }));
    let failed = offline
        .execute(json!({"path": "a.txt"}), ws.tool_context("c3"))
        .await
        .unwrap();
    assert!(failed.is_error);
    assert!(
        failed.error_message().unwrap().contains("chat is offline"),
        "{}",
        failed.output
    );
}

#[test]
fn every_call_needs_explicit_approval() {
    let ws = TestWorkspace::new();
    let tool = SendImAttachmentTool::new(Arc::new(RecordingBridge::default()));
    assert_eq!(
        tool.explicit_approval(&json!({"path": "a"}), &ws.ctx),
        Ok(true)
    );
    let spec = tool.spec();
    assert_eq!(
        (spec.name.as_str(), spec.kind, spec.policy),
        (
            "send_im_attachment",
            ToolKind::ToolCall,
            ToolPolicy::OnRequest
        )
    );
    assert_eq!(spec.input_schema["required"], json!(["path"]));
}
