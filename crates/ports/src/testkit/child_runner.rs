//! Contract suite for [`ChildAgentRunner`].
//!
//! A runner is driven by a **model** the suite scripts ([`ModelScript`]): an adapter's test
//! turns the script into whatever its model is (a local OpenAI-compatible server, a scripted
//! list) and reports back every request that model received ([`SeenRequest`]). The suite
//! gives the runner its own child host, with two tools: `lookup` (returns
//! `found <key>`) and `store` (always refused with `sandbox_read_only`, as a read-only child's
//! write would be).
//!
//! | rule | expected |
//! |---|---|
//! | 1 final answer | the text comes back; usage 1 turn, 0 tool calls, the scripted tokens; the request carries the system prompt, the task and the context, and exactly the child catalog as tools |
//! | 2 tool call | runs once through the child host with the model's arguments; its result is in the next request; usage 2 turns, 1 tool call, tokens summed |
//! | 3 refused call | the refusal (with its code) reaches the model, the run goes on |
//! | 4 unknown tool | nothing runs; the model reads that the tool is not available |
//! | 5 two calls in one reply | both run, in order, both results in the next request |
//! | 6 max_turns | a model that never stops gets exactly `max_turns` requests; failure `delegation_max_turns` with the usage |
//! | 7 aborted | an aborted turn makes no request; failure of kind `aborted` |

use crate::{
    AbortSignal, ChildAgentRunner, ChildFailureKind, ChildLimits, ChildModel, ChildProfile,
    ChildRun, ErrorCode, HostError, ProviderKind, SideEffect, Tool, ToolCall, ToolContext,
    ToolDescriptor, ToolError, ToolHost, ToolHostContext, ToolPolicy, ToolResult, ToolSpec,
};
use async_trait::async_trait;
use serde_json::{Value, json};
use std::future::Future;
use std::sync::{Arc, Mutex};

/// One reply of the scripted model.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelStep {
    /// Tool calls: `(tool name, arguments)`.
    Calls(Vec<(String, Value)>),
    /// A final answer.
    Answer(String),
}

/// What the scripted model replies, request after request.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelScript {
    /// The replies in order.
    pub steps: Vec<ModelStep>,
    /// Repeat the last step forever once the others are used.
    pub repeat_last: bool,
    /// Prompt tokens reported with each reply.
    pub prompt_tokens: u64,
    /// Completion tokens reported with each reply.
    pub completion_tokens: u64,
}

impl ModelScript {
    /// These replies, each reporting 10 prompt and 2 completion tokens.
    #[must_use]
    pub fn new(steps: Vec<ModelStep>) -> Self {
        Self {
            steps,
            repeat_last: false,
            prompt_tokens: 10,
            completion_tokens: 2,
        }
    }

    /// The reply to request number `index` (0-based), if the script has one.
    #[must_use]
    pub fn step(&self, index: usize) -> Option<&ModelStep> {
        self.steps
            .get(index)
            .or_else(|| self.steps.last().filter(|_| self.repeat_last))
    }
}

/// What the model received in one request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SeenRequest {
    /// The system prompt.
    pub system: String,
    /// The first user message.
    pub user: String,
    /// The names of the tools offered, in the order offered.
    pub tools: Vec<String>,
    /// The texts of every tool result in the conversation so far, in order.
    pub tool_results: Vec<String>,
}

/// A runner wired to a scripted model, as an adapter's test builds it.
pub trait ScriptedChild: Send + Sync {
    /// The runner under test.
    fn runner(&self) -> &dyn ChildAgentRunner;
    /// Every request the model received so far.
    fn requests(&self) -> Vec<SeenRequest>;
}

/// The suite's tool: `lookup` answers, `store` is refused like a read-only child's write.
struct SuiteTool {
    spec: ToolSpec,
}

#[async_trait]
impl Tool for SuiteTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn execute<'a>(
        &self,
        arguments: Value,
        _ctx: ToolContext<'a>,
    ) -> Result<ToolResult, ToolError> {
        let key = arguments["key"].as_str().unwrap_or("?");
        Ok(ToolResult::ok(json!(format!("found {key}"))))
    }
}

/// The child host of the suite: lists `lookup` and `store`, records what runs.
struct SuiteHost {
    tools: Vec<ToolDescriptor>,
    runs: Mutex<Vec<(String, Value)>>,
}

impl SuiteHost {
    fn new() -> Self {
        let tool = |name: &str, description: &str, side: SideEffect| {
            ToolDescriptor::new(
                Arc::new(SuiteTool {
                    spec: ToolSpec::new(
                        name,
                        description,
                        json!({"type": "object", "properties": {"key": {"type": "string"}}}),
                    )
                    .with_policy(ToolPolicy::Auto)
                    .with_side_effect(side),
                }),
                "contract-suite",
                ProviderKind::BuiltIn,
            )
        };
        Self {
            tools: vec![
                tool("lookup", "Looks a key up.", SideEffect::ReadOnly),
                tool("store", "Stores a key.", SideEffect::Unknown),
            ],
            runs: Mutex::new(Vec::new()),
        }
    }

    fn runs(&self) -> Vec<(String, Value)> {
        self.runs.lock().unwrap().clone()
    }
}

#[async_trait]
impl ToolHost for SuiteHost {
    fn list_tools(&self, _ctx: &ToolHostContext) -> Vec<ToolDescriptor> {
        self.tools.clone()
    }

    async fn execute(
        &self,
        call: ToolCall,
        ctx: &ToolHostContext,
    ) -> Result<ToolResult, HostError> {
        if ctx.abort.is_aborted() {
            return Err(HostError::Aborted {
                stage: crate::AbortStage::BeforeStart,
            });
        }
        match call.tool_name.as_str() {
            "lookup" => {
                self.runs
                    .lock()
                    .unwrap()
                    .push((call.tool_name.clone(), call.arguments.clone()));
                let key = call.arguments["key"].as_str().unwrap_or("?");
                Ok(ToolResult::ok(json!(format!("found {key}"))))
            }
            "store" => Ok(ToolResult::failure(
                ErrorCode::SandboxReadOnly,
                "`store` changes files and the sandbox is read-only",
            )),
            _ => Err(HostError::UnknownTool {
                name: call.tool_name,
            }),
        }
    }
}

const SYSTEM: &str = "You are the contract-suite explorer.";
const TASK: &str = "Find the key named alpha.";
const CONTEXT: &str = "The parent already looked in src/.";

fn profile() -> ChildProfile {
    ChildProfile {
        name: "explore".to_owned(),
        system_prompt: SYSTEM.to_owned(),
        model: ChildModel::Inherit,
    }
}

fn calls(list: &[(&str, Value)]) -> ModelStep {
    ModelStep::Calls(
        list.iter()
            .map(|(name, args)| ((*name).to_owned(), args.clone()))
            .collect(),
    )
}

/// Runs one script against a fresh runner and host.
async fn drive<F, Fut>(
    make: &F,
    script: ModelScript,
    limits: ChildLimits,
    aborted: bool,
) -> (
    Result<crate::ChildOutcome, crate::ChildFailure>,
    Vec<SeenRequest>,
    Vec<(String, Value)>,
)
where
    F: Fn(ModelScript) -> Fut,
    Fut: Future<Output = Box<dyn ScriptedChild>>,
{
    let child = make(script).await;
    let host = SuiteHost::new();
    let abort = AbortSignal::new();
    if aborted {
        abort.abort();
    }
    let ctx = ToolHostContext::builder("contract-thread/explore-1", "child-1")
        .workspace("/nonexistent-contract-root")
        .abort(abort)
        .build();
    let profile = profile();
    let run = ChildRun {
        profile: &profile,
        task: TASK,
        context: Some(CONTEXT),
        host: &host,
        ctx: &ctx,
        limits,
    };
    let outcome = child.runner().run(run).await;
    (outcome, child.requests(), host.runs())
}

/// Runs every rule of the child-runner contract. `make` wires a new runner to a model that
/// follows the script.
pub async fn child_agent_runner_contract<F, Fut>(make: F)
where
    F: Fn(ModelScript) -> Fut,
    Fut: Future<Output = Box<dyn ScriptedChild>>,
{
    let limits = ChildLimits { max_turns: 5 };

    // 1: a final answer.
    let script = ModelScript::new(vec![ModelStep::Answer("alpha is in lib.rs".into())]);
    let (outcome, requests, runs) = drive(&make, script, limits, false).await;
    let outcome = outcome.expect("rule 1: a final answer must be an Ok outcome");
    assert_eq!(outcome.text, "alpha is in lib.rs", "rule 1: the final text");
    assert_eq!(
        (outcome.usage.turns, outcome.usage.tool_calls),
        (1, 0),
        "rule 1: usage of one answer"
    );
    assert_eq!(
        (outcome.usage.prompt_tokens, outcome.usage.completion_tokens),
        (10, 2),
        "rule 1: the tokens the model reported"
    );
    assert_eq!(requests.len(), 1, "rule 1: one request");
    assert!(
        requests[0].system.contains(SYSTEM),
        "rule 1: the system prompt is the profile's: {:?}",
        requests[0].system
    );
    assert!(
        requests[0].user.contains(TASK) && requests[0].user.contains(CONTEXT),
        "rule 1: the user message holds the task and the context: {:?}",
        requests[0].user
    );
    assert_eq!(
        requests[0].tools,
        ["lookup", "store"],
        "rule 1: the tools offered are exactly the child catalog"
    );
    assert!(runs.is_empty(), "rule 1: nothing ran");

    // 2: one tool call, then an answer.
    let script = ModelScript::new(vec![
        calls(&[("lookup", json!({"key": "alpha"}))]),
        ModelStep::Answer("done".into()),
    ]);
    let (outcome, requests, runs) = drive(&make, script, limits, false).await;
    let outcome = outcome.expect("rule 2: the run must finish");
    assert_eq!(
        runs,
        [("lookup".to_owned(), json!({"key": "alpha"}))],
        "rule 2: the call runs once through the child host with the model's arguments"
    );
    assert_eq!(requests.len(), 2, "rule 2: two requests");
    assert_eq!(
        requests[1].tool_results,
        ["found alpha"],
        "rule 2: the result reaches the model in the next request"
    );
    assert_eq!(
        (outcome.usage.turns, outcome.usage.tool_calls),
        (2, 1),
        "rule 2: usage"
    );
    assert_eq!(
        (outcome.usage.prompt_tokens, outcome.usage.completion_tokens),
        (20, 4),
        "rule 2: tokens are summed over the requests"
    );

    // 3: a refused call.
    let script = ModelScript::new(vec![
        calls(&[("store", json!({"key": "beta"}))]),
        ModelStep::Answer("could not store".into()),
    ]);
    let (outcome, requests, _) = drive(&make, script, limits, false).await;
    assert_eq!(
        outcome
            .expect("rule 3: a refusal does not end the run")
            .text,
        "could not store"
    );
    let refusal = requests.get(1).and_then(|r| r.tool_results.first());
    assert!(
        refusal.is_some_and(|text| text.contains("sandbox_read_only")),
        "rule 3: the refusal and its code reach the model: {refusal:?}"
    );

    // 4: an unknown tool.
    let script = ModelScript::new(vec![
        calls(&[("teleport", json!({}))]),
        ModelStep::Answer("ok".into()),
    ]);
    let (outcome, requests, runs) = drive(&make, script, limits, false).await;
    assert!(
        outcome.is_ok(),
        "rule 4: an unknown tool does not end the run"
    );
    assert!(runs.is_empty(), "rule 4: nothing ran");
    let refusal = requests.get(1).and_then(|r| r.tool_results.first());
    assert!(
        refusal.is_some_and(|text| text.contains("teleport")),
        "rule 4: the model reads that the tool is not available: {refusal:?}"
    );

    // 5: two calls in one reply.
    let script = ModelScript::new(vec![
        calls(&[
            ("lookup", json!({"key": "one"})),
            ("lookup", json!({"key": "two"})),
        ]),
        ModelStep::Answer("both".into()),
    ]);
    let (outcome, requests, runs) = drive(&make, script, limits, false).await;
    assert_eq!(
        outcome.expect("rule 5").usage.tool_calls,
        2,
        "rule 5: usage"
    );
    assert_eq!(runs.len(), 2, "rule 5: both calls ran");
    assert_eq!(
        requests[1].tool_results,
        ["found one", "found two"],
        "rule 5: both results, in order"
    );

    // 6: max_turns.
    let mut script = ModelScript::new(vec![calls(&[("lookup", json!({"key": "again"}))])]);
    script.repeat_last = true;
    let (outcome, requests, runs) = drive(&make, script, ChildLimits { max_turns: 3 }, false).await;
    let failure = outcome.expect_err("rule 6: a looping child must fail");
    assert_eq!(failure.kind, ChildFailureKind::MaxTurns, "rule 6: kind");
    assert_eq!(failure.kind.code(), ErrorCode::DelegationMaxTurns);
    assert_eq!(requests.len(), 3, "rule 6: exactly max_turns requests");
    assert_eq!(failure.usage.turns, 3, "rule 6: usage.turns");
    assert!(runs.len() <= 3, "rule 6: no more calls than turns");

    // 7: aborted.
    let script = ModelScript::new(vec![ModelStep::Answer("never".into())]);
    let (outcome, requests, runs) = drive(&make, script, limits, true).await;
    let failure = outcome.expect_err("rule 7: an aborted turn must fail");
    assert_eq!(failure.kind, ChildFailureKind::Aborted, "rule 7: kind");
    assert!(requests.is_empty(), "rule 7: no request after an abort");
    assert!(runs.is_empty(), "rule 7: nothing ran");
}
