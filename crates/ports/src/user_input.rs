//! Asking the person a structured question (the `user_input` and `request_user_input` tools).
//!
//! A [`UserQuestion`] is a message and a flat list of [`InputField`]s — text, a choice among
//! options, a number or a yes/no — the shape an MCP elicitation form can carry (no nesting).
//! A [`UserInputChannel`] shows it to the person and returns a [`UserAnswer`]: the values by
//! field name, or that the person declined or dismissed the question, or that this client
//! cannot ask at all.
//!
//! ```
//! use kun_ports::{FieldKind, InputField, UserQuestion};
//! let question = UserQuestion::new("Which database should the service use?")
//!     .field(InputField::new("answer", FieldKind::choice(["postgres", "sqlite"])));
//! assert!(question.fields[0].accepts(&serde_json::json!("sqlite")).is_ok());
//! assert!(question.fields[0].accepts(&serde_json::json!("mysql")).is_err());
//! ```

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What kind of value a field takes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FieldKind {
    /// Free text.
    Text,
    /// One of the options.
    Choice {
        /// The options, in the order shown.
        options: Vec<String>,
    },
    /// A number.
    Number,
    /// Yes or no.
    Boolean,
}

impl FieldKind {
    /// A choice among `options`.
    #[must_use]
    pub fn choice<S: Into<String>>(options: impl IntoIterator<Item = S>) -> Self {
        Self::Choice {
            options: options.into_iter().map(Into::into).collect(),
        }
    }
}

/// One field of a question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputField {
    /// The key of the value in the answer.
    pub name: String,
    /// A short label shown to the person (the name when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A longer explanation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The kind of value.
    pub kind: FieldKind,
    /// Whether the person must fill it in.
    pub required: bool,
}

impl InputField {
    /// A required field.
    #[must_use]
    pub fn new(name: impl Into<String>, kind: FieldKind) -> Self {
        Self {
            name: name.into(),
            title: None,
            description: None,
            kind,
            required: true,
        }
    }

    /// The same field with a title.
    #[must_use]
    pub fn titled(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// The same field with a description.
    #[must_use]
    pub fn described(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The same field, optional.
    #[must_use]
    pub const fn optional(mut self) -> Self {
        self.required = false;
        self
    }

    /// The label shown: the title, else the name.
    #[must_use]
    pub fn label(&self) -> &str {
        self.title.as_deref().unwrap_or(&self.name)
    }

    /// Whether `value` fits this field (a string for text, one of the options for a choice,
    /// a number, a boolean).
    ///
    /// # Errors
    /// What is wrong with the value, in words for the person or the model.
    pub fn accepts(&self, value: &Value) -> Result<(), String> {
        match (&self.kind, value) {
            (FieldKind::Text, Value::String(_))
            | (FieldKind::Number, Value::Number(_))
            | (FieldKind::Boolean, Value::Bool(_)) => Ok(()),
            (FieldKind::Choice { options }, Value::String(s)) if options.contains(s) => Ok(()),
            (FieldKind::Choice { options }, _) => Err(format!(
                "`{}` must be one of: {}",
                self.name,
                options.join(", ")
            )),
            (FieldKind::Text, _) => Err(format!("`{}` must be text", self.name)),
            (FieldKind::Number, _) => Err(format!("`{}` must be a number", self.name)),
            (FieldKind::Boolean, _) => Err(format!("`{}` must be true or false", self.name)),
        }
    }
}

/// A question for the person: a message and the fields to fill in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserQuestion {
    /// What to ask, shown above the fields.
    pub message: String,
    /// The fields, in order.
    pub fields: Vec<InputField>,
}

impl UserQuestion {
    /// A question with no fields yet.
    #[must_use]
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            fields: Vec::new(),
        }
    }

    /// The same question with one more field.
    #[must_use]
    pub fn field(mut self, field: InputField) -> Self {
        self.fields.push(field);
        self
    }

    /// Checks answered values: every required field present, every value fitting its field,
    /// no value for a field that was not asked.
    ///
    /// # Errors
    /// The first problem, in words.
    pub fn check(&self, values: &Map<String, Value>) -> Result<(), String> {
        for field in &self.fields {
            match values.get(&field.name) {
                Some(value) => field.accepts(value)?,
                None if field.required => {
                    return Err(format!("`{}` was not answered", field.name));
                }
                None => {}
            }
        }
        if let Some(extra) = values
            .keys()
            .find(|key| !self.fields.iter().any(|f| &f.name == *key))
        {
            return Err(format!("`{extra}` is not a field of the question"));
        }
        Ok(())
    }
}

/// The person's reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum UserAnswer {
    /// The fields were filled in (optional ones may be missing).
    Answered {
        /// The values by field name.
        values: Map<String, Value>,
    },
    /// The person said no to answering.
    Declined,
    /// The question was dismissed, timed out, or the input ended.
    Cancelled,
    /// This client cannot ask the person anything (no terminal, no elicitation).
    Unavailable {
        /// Why, in words.
        reason: String,
    },
}

/// A channel to the person.
///
/// Invariants every adapter keeps (checked by `testkit::user_input_channel_contract`): an
/// `Answered` reply passes [`UserQuestion::check`]; a reply that does not fit is asked again
/// or comes back as `Cancelled`, never as an answer; the channel answers instead of hanging
/// when the person goes away (`Cancelled`).
#[cfg_attr(feature = "testkit", mockall::automock)]
#[async_trait]
pub trait UserInputChannel: Send + Sync {
    /// Asks and waits for the reply.
    async fn ask(&self, question: &UserQuestion) -> UserAnswer;
}
