//! Contract suite for [`UserInputChannel`]: answers fit the question, bad entries are asked
//! again, declining and dismissing come back as such, and a person who went away does not
//! hang the channel.
//!
//! The suite drives a simulated person: `make` receives the person's replies, one
//! [`PersonReply`] per question, and builds a channel wired to that person (a terminal adapter
//! feeds the typed lines as its input; a programmatic adapter answers from them).
//!
//! | rule | the person | the channel must answer |
//! |---|---|---|
//! | 1 | types text into a text field | `Answered`, the text under the field name |
//! | 2 | picks an option | `Answered`, the option |
//! | 3 | types `42` and `yes` into number and yes/no fields | `Answered`, `42` and `true` |
//! | 4 | types an option that does not exist, then a real one | asks again; `Answered`, the real one |
//! | 5 | leaves an optional field empty | `Answered` without that field |
//! | 6 | leaves a required field empty, then fills it | asks again; `Answered` |
//! | 7 | declines | `Declined` |
//! | 8 | dismisses the question | `Cancelled` |
//! | 9 | runs out of lines before a valid answer | `Cancelled`, never an answer that does not fit |
//! | 10 | is gone (no reply at all) | `Cancelled` within seconds, not a hang |

use crate::{FieldKind, InputField, UserAnswer, UserInputChannel, UserQuestion};
use serde_json::{Value, json};
use std::time::Duration;

/// What the simulated person does with one question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PersonReply {
    /// Types these lines, in order: one per field, plus one per retry after a bad entry (an
    /// empty line leaves a field empty).
    Typed(Vec<String>),
    /// Says no to answering.
    Decline,
    /// Closes the question without answering.
    Dismiss,
}

impl PersonReply {
    /// Typed lines from string slices.
    #[must_use]
    pub fn typed(lines: &[&str]) -> Self {
        Self::Typed(lines.iter().map(|l| (*l).to_owned()).collect())
    }
}

/// Converts one typed line into the value a field of `kind` takes, as a person filling a form
/// would produce it: `None` when the line does not fit (adapters that receive structured
/// values use this to simulate the person).
#[must_use]
pub fn typed_value(kind: &FieldKind, line: &str) -> Option<Value> {
    let line = line.trim();
    match kind {
        FieldKind::Text => Some(Value::String(line.to_owned())),
        FieldKind::Choice { options } => options
            .iter()
            .find(|o| o.as_str() == line)
            .map(|o| Value::String(o.clone())),
        FieldKind::Number => line
            .parse::<i64>()
            .map(Value::from)
            .ok()
            .or_else(|| line.parse::<f64>().ok().map(Value::from)),
        FieldKind::Boolean => match line.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Some(Value::Bool(true)),
            "n" | "no" | "false" => Some(Value::Bool(false)),
            _ => None,
        },
    }
}

/// Runs every rule of the user-input contract. `make` builds a channel whose person replies
/// to successive questions with the given replies (and is gone after the last).
pub async fn user_input_channel_contract<F>(make: F)
where
    F: Fn(Vec<PersonReply>) -> Box<dyn UserInputChannel>,
{
    let text = UserQuestion::new("What should the release be called?")
        .field(InputField::new("answer", FieldKind::Text));
    let choice = UserQuestion::new("Which database?").field(InputField::new(
        "answer",
        FieldKind::choice(["postgres", "sqlite"]),
    ));
    let typed = UserQuestion::new("Settings")
        .field(InputField::new("workers", FieldKind::Number))
        .field(InputField::new("verbose", FieldKind::Boolean));
    let optional = UserQuestion::new("Details")
        .field(InputField::new("name", FieldKind::Text))
        .field(InputField::new("note", FieldKind::Text).optional());

    let cases: Vec<(&str, &UserQuestion, PersonReply, UserAnswer)> = vec![
        (
            "rule 1: text",
            &text,
            PersonReply::typed(&["Aurora 2"]),
            answered(&[("answer", json!("Aurora 2"))]),
        ),
        (
            "rule 2: choice",
            &choice,
            PersonReply::typed(&["sqlite"]),
            answered(&[("answer", json!("sqlite"))]),
        ),
        (
            "rule 3: number and yes/no",
            &typed,
            PersonReply::typed(&["42", "yes"]),
            answered(&[("workers", json!(42)), ("verbose", json!(true))]),
        ),
        (
            "rule 4: a bad option is asked again",
            &choice,
            PersonReply::typed(&["mysql", "postgres"]),
            answered(&[("answer", json!("postgres"))]),
        ),
        (
            "rule 5: an optional field left empty",
            &optional,
            PersonReply::typed(&["Ada", ""]),
            answered(&[("name", json!("Ada"))]),
        ),
        (
            "rule 6: a required field left empty is asked again",
            &optional,
            PersonReply::typed(&["", "Ada", "short note"]),
            answered(&[("name", json!("Ada")), ("note", json!("short note"))]),
        ),
        (
            "rule 7: declining",
            &text,
            PersonReply::Decline,
            UserAnswer::Declined,
        ),
        (
            "rule 8: dismissing",
            &text,
            PersonReply::Dismiss,
            UserAnswer::Cancelled,
        ),
        (
            "rule 9: out of lines before a valid answer",
            &choice,
            PersonReply::typed(&["mysql"]),
            UserAnswer::Cancelled,
        ),
    ];
    for (rule, question, reply, expected) in cases {
        let channel = make(vec![reply]);
        let answer = ask_within(&*channel, question, rule).await;
        assert_eq!(answer, expected, "user-input contract {rule}");
        if let UserAnswer::Answered { values } = &answer {
            assert_eq!(
                question.check(values),
                Ok(()),
                "user-input contract {rule}: an answer fits the question"
            );
        }
    }

    let gone = make(Vec::new());
    let answer = ask_within(&*gone, &text, "rule 10: nobody answers").await;
    assert_eq!(
        answer,
        UserAnswer::Cancelled,
        "user-input contract rule 10: a person who is gone is a cancellation"
    );
}

async fn ask_within(
    channel: &dyn UserInputChannel,
    question: &UserQuestion,
    rule: &str,
) -> UserAnswer {
    tokio::time::timeout(Duration::from_secs(10), channel.ask(question))
        .await
        .unwrap_or_else(|_| panic!("user-input contract {rule}: the channel hung"))
}

fn answered(pairs: &[(&str, Value)]) -> UserAnswer {
    UserAnswer::Answered {
        values: pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect(),
    }
}
