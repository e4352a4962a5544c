//! `user_input {question, options?}` and `request_user_input {message?, fields}`.

use crate::limits::{MAX_FIELDS, MAX_OPTIONS, MAX_QUESTION_CHARS, blank_or_long};
use async_trait::async_trait;
use kun_ports::{
    ErrorCode, FieldKind, InputField, ToolContext, ToolFailure, ToolPolicy, ToolSpec, TypedTool,
    UserAnswer, UserQuestion,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt::Write as _;

/// The error message when nobody can be asked (a contract with clients: keep it).
pub const UNAVAILABLE: &str = "structured user input is not available in this client context";

/// The field `user_input` asks.
const ANSWER_FIELD: &str = "answer";

/// How a question ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InputStatus {
    /// The person answered.
    Answered,
    /// The person said no to answering.
    Declined,
    /// The person dismissed the question.
    Cancelled,
}

/// What both tools return.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InputOutput {
    /// How the question ended.
    pub status: InputStatus,
    /// `user_input`: the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<Value>,
    /// `request_user_input`: the values by field name (optional fields left empty are absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Map<String, Value>>,
}

/// Asks through the turn's channel; a missing channel or an unavailable one is
/// `user_input_unavailable`; an answer that does not fit the question is refused; an abort
/// stops the wait (as a cancellation).
async fn ask(
    ctx: &ToolContext<'_>,
    question: &UserQuestion,
) -> Result<(InputStatus, Map<String, Value>), ToolFailure> {
    let Some(channel) = ctx.turn.user_input else {
        return Err(
            ToolFailure::coded(ErrorCode::UserInputUnavailable, UNAVAILABLE).with(
                "reason",
                "nobody can be asked in this session; decide yourself, or stop and say what you \
             need to know",
            ),
        );
    };
    // An aborted turn stops waiting for the person (the pipeline reports the abort).
    let answer = tokio::select! {
        biased;
        () = ctx.turn.abort.aborted() => UserAnswer::Cancelled,
        answer = channel.ask(question) => answer,
    };
    match answer {
        UserAnswer::Answered { values } => {
            question.check(&values).map_err(|problem| {
                ToolFailure::new(format!(
                    "the client returned an answer that does not fit the question: {problem}"
                ))
            })?;
            Ok((InputStatus::Answered, values))
        }
        UserAnswer::Declined => Ok((InputStatus::Declined, Map::new())),
        UserAnswer::Cancelled => Ok((InputStatus::Cancelled, Map::new())),
        UserAnswer::Unavailable { reason } => Err(ToolFailure::coded(
            ErrorCode::UserInputUnavailable,
            UNAVAILABLE,
        )
        .with("reason", reason)),
    }
}

fn render_value(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn render(output: &InputOutput) -> String {
    match output.status {
        InputStatus::Declined => "The user declined to answer.".to_owned(),
        InputStatus::Cancelled => "The user dismissed the question without answering.".to_owned(),
        InputStatus::Answered => {
            if let Some(answer) = &output.answer {
                return format!("The user answered: {}", render_value(answer));
            }
            let mut text = "The user answered:".to_owned();
            for (name, value) in output.values.iter().flatten() {
                let _ = write!(text, "\n{name}: {}", render_value(value));
            }
            text
        }
    }
}

fn input_spec<A: JsonSchema>(name: &str, description: &str) -> ToolSpec {
    ToolSpec::typed::<A, InputOutput>(name, description)
        .with_policy(ToolPolicy::Auto)
        .user_interaction()
}

/// Arguments of `user_input`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UserInputArgs {
    /// The question, in plain words.
    pub question: String,
    /// Choices to offer; the answer is then one of them.
    #[serde(default)]
    pub options: Option<Vec<String>>,
}

/// `user_input`: asks the person one question (free text, or one of `options`).
pub struct UserInput {
    spec: ToolSpec,
}

impl Default for UserInput {
    fn default() -> Self {
        Self::new()
    }
}

impl UserInput {
    /// The tool.
    #[must_use]
    pub fn new() -> Self {
        Self {
            spec: input_spec::<UserInputArgs>(
                "user_input",
                "Ask the user one question and wait for the answer: free text, or one of \
                 `options`. Use it when a decision is the user's to make; the user may \
                 decline.",
            ),
        }
    }
}

fn check_options(options: &[String], what: &str) -> Result<(), ToolFailure> {
    if options.is_empty() {
        return Err(ToolFailure::invalid(format!(
            "{what} is empty: give at least one option, or leave it out for free text"
        )));
    }
    if options.len() > MAX_OPTIONS {
        return Err(ToolFailure::invalid(format!(
            "{what} has {} entries; offer at most {MAX_OPTIONS}",
            options.len()
        )));
    }
    for (index, option) in options.iter().enumerate() {
        if let Some(problem) = blank_or_long(option, 200) {
            return Err(ToolFailure::invalid(format!("{what}[{index}] {problem}")));
        }
        if options[..index].contains(option) {
            return Err(ToolFailure::invalid(format!(
                "{what}[{index}] repeats \"{option}\""
            )));
        }
    }
    Ok(())
}

#[async_trait]
impl TypedTool for UserInput {
    type Args = UserInputArgs;
    type Output = InputOutput;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn render(&self, output: &InputOutput) -> String {
        render(output)
    }

    async fn run(
        &self,
        args: UserInputArgs,
        ctx: ToolContext<'_>,
    ) -> Result<InputOutput, ToolFailure> {
        if let Some(problem) = blank_or_long(&args.question, MAX_QUESTION_CHARS) {
            return Err(ToolFailure::invalid(format!("question {problem}")));
        }
        let kind = match args.options {
            Some(options) => {
                check_options(&options, "options")?;
                FieldKind::Choice { options }
            }
            None => FieldKind::Text,
        };
        let question = UserQuestion::new(args.question.trim())
            .field(InputField::new(ANSWER_FIELD, kind).titled("Answer"));
        let (status, mut values) = ask(&ctx, &question).await?;
        Ok(InputOutput {
            status,
            answer: values.remove(ANSWER_FIELD),
            values: None,
        })
    }
}

/// The type of a requested field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FieldType {
    /// Free text.
    Text,
    /// One of `options`.
    Choice,
    /// A number.
    Number,
    /// Yes or no.
    Boolean,
}

/// One field of `request_user_input`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FieldArg {
    /// The key of the value in the answer: letters, digits, `_` and `-`.
    pub name: String,
    /// The label shown.
    #[serde(default)]
    pub title: Option<String>,
    /// A longer explanation.
    #[serde(default)]
    pub description: Option<String>,
    /// text, choice, number or boolean.
    #[serde(rename = "type")]
    pub field_type: FieldType,
    /// The options of a choice field.
    #[serde(default)]
    pub options: Option<Vec<String>>,
    /// Whether it must be filled in (default true).
    #[serde(default)]
    pub required: Option<bool>,
}

/// Arguments of `request_user_input`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RequestUserInputArgs {
    /// What to tell the user above the fields.
    #[serde(default)]
    pub message: Option<String>,
    /// The fields to fill in (a flat form: no nesting).
    pub fields: Vec<FieldArg>,
}

/// `request_user_input`: asks the person to fill in a small form.
pub struct RequestUserInput {
    spec: ToolSpec,
}

impl Default for RequestUserInput {
    fn default() -> Self {
        Self::new()
    }
}

impl RequestUserInput {
    /// The tool.
    #[must_use]
    pub fn new() -> Self {
        Self {
            spec: input_spec::<RequestUserInputArgs>(
                "request_user_input",
                "Ask the user to fill in a small form of fields (text, choice, number, \
                 boolean) and wait for the values. Never ask for passwords, keys or tokens.",
            ),
        }
    }
}

fn field_of(index: usize, arg: FieldArg) -> Result<InputField, ToolFailure> {
    let at = format!("fields[{index}]");
    let valid_name = !arg.name.is_empty()
        && arg.name.len() <= 64
        && arg
            .name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !valid_name {
        return Err(ToolFailure::invalid(format!(
            "{at}.name must be 1 to 64 letters, digits, `_` or `-`"
        )));
    }
    let kind = match (arg.field_type, arg.options) {
        (FieldType::Choice, Some(options)) => {
            check_options(&options, &format!("{at}.options"))?;
            FieldKind::Choice { options }
        }
        (FieldType::Choice, None) => {
            return Err(ToolFailure::invalid(format!(
                "{at} is a choice without options"
            )));
        }
        (_, Some(_)) => {
            return Err(ToolFailure::invalid(format!(
                "{at}.options are only for type choice"
            )));
        }
        (FieldType::Text, None) => FieldKind::Text,
        (FieldType::Number, None) => FieldKind::Number,
        (FieldType::Boolean, None) => FieldKind::Boolean,
    };
    let mut field = InputField::new(arg.name, kind);
    field.title = arg.title.filter(|t| !t.trim().is_empty());
    field.description = arg.description.filter(|d| !d.trim().is_empty());
    field.required = arg.required.unwrap_or(true);
    Ok(field)
}

#[async_trait]
impl TypedTool for RequestUserInput {
    type Args = RequestUserInputArgs;
    type Output = InputOutput;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn render(&self, output: &InputOutput) -> String {
        render(output)
    }

    async fn run(
        &self,
        args: RequestUserInputArgs,
        ctx: ToolContext<'_>,
    ) -> Result<InputOutput, ToolFailure> {
        if args.fields.is_empty() {
            return Err(ToolFailure::invalid(
                "fields is empty: ask at least one field",
            ));
        }
        if args.fields.len() > MAX_FIELDS {
            return Err(ToolFailure::invalid(format!(
                "{} fields is more than {MAX_FIELDS}; ask fewer at a time",
                args.fields.len()
            )));
        }
        let message = args
            .message
            .filter(|m| !m.trim().is_empty())
            .unwrap_or_else(|| "Please fill in:".to_owned());
        if let Some(problem) = blank_or_long(&message, MAX_QUESTION_CHARS) {
            return Err(ToolFailure::invalid(format!("message {problem}")));
        }
        let mut question = UserQuestion::new(message);
        for (index, arg) in args.fields.into_iter().enumerate() {
            let field = field_of(index, arg)?;
            if question.fields.iter().any(|f| f.name == field.name) {
                return Err(ToolFailure::invalid(format!(
                    "fields[{index}].name `{}` is used twice",
                    field.name
                )));
            }
            question = question.field(field);
        }
        let (status, values) = ask(&ctx, &question).await?;
        Ok(InputOutput {
            status,
            answer: None,
            values: (status == InputStatus::Answered).then_some(values),
        })
    }
}
