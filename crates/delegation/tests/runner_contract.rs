//! Both runners pass the ChildAgentRunner contract: the scripted one directly, the openai
//! one against a local OpenAI-compatible server that follows the same script.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use kun_delegation::agent_loop::Message;
use kun_delegation::test_server::{OpenAiTestServer, ServerReply};
use kun_delegation::{OpenAiRunner, OpenAiSettings, ScriptedReply, ScriptedRunner};
use kun_ports::ChildAgentRunner;
use kun_ports::testkit::{
    ModelScript, ModelStep, ScriptedChild, SeenRequest, child_agent_runner_contract,
};
use std::time::Duration;

struct Scripted(ScriptedRunner);

impl ScriptedChild for Scripted {
    fn runner(&self) -> &dyn ChildAgentRunner {
        &self.0
    }

    fn requests(&self) -> Vec<SeenRequest> {
        self.0
            .requests()
            .into_iter()
            .map(|request| {
                let mut seen = SeenRequest {
                    tools: request.tools,
                    ..SeenRequest::default()
                };
                for message in request.messages {
                    match message {
                        Message::System(text) => seen.system = text,
                        Message::User(text) => seen.user = text,
                        Message::Tool { content, .. } => seen.tool_results.push(content),
                        Message::Assistant { .. } => {}
                    }
                }
                seen
            })
            .collect()
    }
}

#[tokio::test]
async fn the_scripted_runner_honours_the_contract() {
    child_agent_runner_contract(|script: ModelScript| async move {
        let replies = script
            .steps
            .iter()
            .map(|step| match step {
                ModelStep::Answer(text) => ScriptedReply::Answer(text.clone()),
                ModelStep::Calls(calls) => ScriptedReply::Calls(calls.clone()),
            })
            .collect();
        let mut runner = ScriptedRunner::new(replies)
            .with_tokens(script.prompt_tokens, script.completion_tokens);
        if script.repeat_last {
            runner = runner.repeating_last();
        }
        Box::new(Scripted(runner)) as Box<dyn ScriptedChild>
    })
    .await;
}

struct OverHttp {
    runner: OpenAiRunner,
    server: OpenAiTestServer,
}

impl ScriptedChild for OverHttp {
    fn runner(&self) -> &dyn ChildAgentRunner {
        &self.runner
    }

    fn requests(&self) -> Vec<SeenRequest> {
        self.server
            .requests()
            .into_iter()
            .map(|r| SeenRequest {
                system: r.first("system").unwrap_or_default(),
                user: r.first("user").unwrap_or_default(),
                tools: r.tool_names(),
                tool_results: r.tool_results(),
            })
            .collect()
    }
}

#[tokio::test]
async fn the_openai_runner_honours_the_contract() {
    child_agent_runner_contract(|script: ModelScript| async move {
        let replies = script
            .steps
            .iter()
            .map(|step| match step {
                ModelStep::Answer(text) => ServerReply::Completion {
                    content: Some(text.clone()),
                    calls: Vec::new(),
                    prompt_tokens: script.prompt_tokens,
                    completion_tokens: script.completion_tokens,
                },
                ModelStep::Calls(calls) => ServerReply::Completion {
                    content: None,
                    calls: calls.clone(),
                    prompt_tokens: script.prompt_tokens,
                    completion_tokens: script.completion_tokens,
                },
            })
            .collect();
        let server = OpenAiTestServer::start(replies, script.repeat_last)
            .await
            .unwrap();
        let runner = OpenAiRunner::with_key(
            OpenAiSettings {
                base_url: server.base_url(),
                model: "contract-model".into(),
                api_key_env: None,
                timeout: Duration::from_secs(30),
            },
            None,
        )
        .unwrap();
        Box::new(OverHttp { runner, server }) as Box<dyn ScriptedChild>
    })
    .await;
}
