//! `user_input` and `request_user_input` in `serve`: the question goes to the person through
//! MCP elicitation, as a form with one field per question field.
//!
//! | question field | form property |
//! |---|---|
//! | text | `string` |
//! | choice | single-select enum of the options |
//! | number | `number` |
//! | yes/no | `boolean` |
//!
//! | the client | the tool gets |
//! |---|---|
//! | accepts with values that fit | `Answered` |
//! | accepts with values that do not fit | `Cancelled` (never an answer the question did not allow) |
//! | declines / cancels | `Declined` / `Cancelled` |
//! | did not declare the elicitation capability, or the request fails | `Unavailable` with the reason (the tool's error "structured user input is not available in this client context") |

use async_trait::async_trait;
use kun_ports::{FieldKind, UserAnswer, UserInputChannel, UserQuestion};
use rmcp::RoleServer;
use rmcp::model::{
    BooleanSchema, ElicitRequestParams, ElicitationAction, ElicitationSchema, EnumSchema,
    NumberSchema, PrimitiveSchemaDefinition, StringSchema,
};
use rmcp::service::{ElicitationMode, Peer};
use serde_json::{Map, Value};
use std::sync::{Arc, OnceLock};

/// Asks the person behind one session's MCP client.
#[derive(Debug, Clone)]
pub struct ElicitationInput {
    peer: Arc<OnceLock<Peer<RoleServer>>>,
}

impl ElicitationInput {
    /// A channel for the session whose peer lands in `peer` once it is known.
    #[must_use]
    pub const fn new(peer: Arc<OnceLock<Peer<RoleServer>>>) -> Self {
        Self { peer }
    }
}

/// The form for `question`.
#[must_use]
pub fn form(question: &UserQuestion) -> ElicitationSchema {
    let mut builder = ElicitationSchema::builder();
    for field in &question.fields {
        let title = field.label().to_owned();
        let description = field.description.clone();
        let schema = match &field.kind {
            FieldKind::Text => {
                let mut s = StringSchema::new().title(title);
                if let Some(d) = description {
                    s = s.description(d);
                }
                PrimitiveSchemaDefinition::String(s)
            }
            FieldKind::Choice { options } => {
                let mut s = EnumSchema::builder(options.clone()).title(title);
                if let Some(d) = description {
                    s = s.description(d);
                }
                PrimitiveSchemaDefinition::Enum(s.build())
            }
            FieldKind::Number => {
                let mut s = NumberSchema::new().title(title);
                if let Some(d) = description {
                    s = s.description(d);
                }
                PrimitiveSchemaDefinition::Number(s)
            }
            FieldKind::Boolean => {
                let mut s = BooleanSchema::new().title(title);
                if let Some(d) = description {
                    s = s.description(d);
                }
                PrimitiveSchemaDefinition::Boolean(s)
            }
        };
        builder = if field.required {
            builder.required_property(field.name.clone(), schema)
        } else {
            builder.property(field.name.clone(), schema)
        };
    }
    builder.build_unchecked()
}

/// The client's accepted content as answer values: only the question's fields, and only when
/// they fit.
fn answer(question: &UserQuestion, content: Option<Value>) -> UserAnswer {
    let Some(Value::Object(content)) = content else {
        return UserAnswer::Cancelled;
    };
    let values: Map<String, Value> = content
        .into_iter()
        .filter(|(key, value)| !value.is_null() && question.fields.iter().any(|f| &f.name == key))
        .collect();
    match question.check(&values) {
        Ok(()) => UserAnswer::Answered { values },
        Err(problem) => {
            tracing::warn!("the client's answer does not fit the question: {problem}");
            UserAnswer::Cancelled
        }
    }
}

#[async_trait]
impl UserInputChannel for ElicitationInput {
    async fn ask(&self, question: &UserQuestion) -> UserAnswer {
        let Some(peer) = self.peer.get() else {
            return UserAnswer::Unavailable {
                reason: "the MCP client has not finished connecting".to_owned(),
            };
        };
        if !peer
            .supported_elicitation_modes()
            .contains(&ElicitationMode::Form)
        {
            return UserAnswer::Unavailable {
                reason: "this MCP client did not declare the elicitation capability, so the \
                         user cannot be asked; decide yourself, or stop and say what you need"
                    .to_owned(),
            };
        }
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: question.message.clone(),
            requested_schema: form(question),
        };
        match peer.create_elicitation(params).await {
            Ok(result) => match result.action {
                ElicitationAction::Accept => answer(question, result.content),
                ElicitationAction::Decline => UserAnswer::Declined,
                _ => UserAnswer::Cancelled,
            },
            Err(err) => UserAnswer::Unavailable {
                reason: format!("the elicitation request failed: {err}"),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kun_ports::InputField;
    use serde_json::json;

    fn question() -> UserQuestion {
        UserQuestion::new("Deploy?")
            .field(InputField::new("answer", FieldKind::choice(["yes", "no"])))
            .field(InputField::new("note", FieldKind::Text).optional())
            .field(InputField::new("count", FieldKind::Number))
            .field(InputField::new("force", FieldKind::Boolean).described("skip checks"))
    }

    #[test]
    fn the_form_is_flat_and_marks_required_fields() {
        let schema = serde_json::to_value(form(&question())).unwrap();
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"], json!(["answer", "count", "force"]));
        assert_eq!(schema["properties"]["answer"]["enum"], json!(["yes", "no"]));
        assert_eq!(schema["properties"]["note"]["type"], "string");
        assert_eq!(schema["properties"]["count"]["type"], "number");
        assert_eq!(schema["properties"]["force"]["type"], "boolean");
        assert_eq!(schema["properties"]["force"]["description"], "skip checks");
    }

    #[test]
    fn only_fitting_answers_pass() {
        let q = question();
        let good = json!({"answer": "yes", "count": 2, "force": false, "extra": 1});
        assert_eq!(
            answer(&q, Some(good)),
            UserAnswer::Answered {
                values: serde_json::from_value(
                    json!({"answer": "yes", "count": 2, "force": false})
                )
                .unwrap()
            }
        );
        let bad = json!({"answer": "maybe", "count": 2, "force": false});
        assert_eq!(answer(&q, Some(bad)), UserAnswer::Cancelled);
        assert_eq!(answer(&q, None), UserAnswer::Cancelled);
    }
}
