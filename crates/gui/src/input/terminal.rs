//! The terminal adapter: asks field by field on a line-oriented terminal.
//!
//! | the person types | for |
//! |---|---|
//! | text | a text field |
//! | an option, or its number | a choice |
//! | a number; `yes`/`no` | number and yes/no fields |
//! | an empty line | skips an optional field (a required one is asked again) |
//! | `/decline` | declines the whole question |
//! | `/cancel`, or ends the input (Ctrl-D) | dismisses it |
//!
//! A bad entry is explained and asked again, at most five times per field; then the question
//! is dismissed. Prompts go to the output (stderr for [`TerminalUserInput::stdio_if_terminal`],
//! so stdout stays the command's result).

use async_trait::async_trait;
use kun_ports::{FieldKind, InputField, UserAnswer, UserInputChannel, UserQuestion};
use serde_json::{Map, Value};
use std::io::{BufRead, IsTerminal, Write};
use std::sync::{Arc, Mutex, PoisonError};

/// How often one field is asked before the question is dismissed.
const ATTEMPTS: usize = 5;

/// A terminal's input and output.
struct Io {
    input: Box<dyn BufRead + Send>,
    output: Box<dyn Write + Send>,
}

/// Asks on a terminal (see the module docs). Questions are asked one at a time.
///
/// ```
/// use kun_gui::TerminalUserInput;
/// use kun_ports::{FieldKind, InputField, UserAnswer, UserInputChannel, UserQuestion};
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let terminal = TerminalUserInput::new(std::io::Cursor::new("2\n"), std::io::sink());
/// let question = UserQuestion::new("Which database?")
///     .field(InputField::new("answer", FieldKind::choice(["postgres", "sqlite"])));
/// let UserAnswer::Answered { values } = terminal.ask(&question).await else { panic!() };
/// assert_eq!(values["answer"], "sqlite");
/// # });
/// ```
#[derive(Clone)]
pub struct TerminalUserInput {
    io: Arc<Mutex<Io>>,
}

impl std::fmt::Debug for TerminalUserInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TerminalUserInput").finish_non_exhaustive()
    }
}

impl TerminalUserInput {
    /// Asks on `input` and `output`.
    pub fn new(input: impl BufRead + Send + 'static, output: impl Write + Send + 'static) -> Self {
        Self {
            io: Arc::new(Mutex::new(Io {
                input: Box::new(input),
                output: Box::new(output),
            })),
        }
    }

    /// Asks on stdin, prompting on stderr — when both are terminals.
    #[must_use]
    pub fn stdio_if_terminal() -> Option<Self> {
        (std::io::stdin().is_terminal() && std::io::stderr().is_terminal())
            .then(|| Self::new(std::io::BufReader::new(std::io::stdin()), std::io::stderr()))
    }
}

#[async_trait]
impl UserInputChannel for TerminalUserInput {
    async fn ask(&self, question: &UserQuestion) -> UserAnswer {
        let io = Arc::clone(&self.io);
        let question = question.clone();
        let asked = tokio::task::spawn_blocking(move || {
            let mut io = io.lock().unwrap_or_else(PoisonError::into_inner);
            converse(&mut io, &question)
        })
        .await;
        asked.unwrap_or(UserAnswer::Cancelled)
    }
}

/// What one line meant.
enum Entry {
    Value(Value),
    Skip,
    Retry(String),
    Decline,
    Cancel,
}

fn converse(io: &mut Io, question: &UserQuestion) -> UserAnswer {
    let _ = writeln!(
        io.output,
        "\n{}\n(type /decline to decline, /cancel or Ctrl-D to dismiss)",
        question.message
    );
    let mut values = Map::new();
    for field in &question.fields {
        let mut attempts = 0;
        loop {
            if attempts == ATTEMPTS {
                let _ = writeln!(io.output, "Too many attempts; the question is dismissed.");
                return UserAnswer::Cancelled;
            }
            attempts += 1;
            prompt(io, field);
            let mut line = String::new();
            match io.input.read_line(&mut line) {
                Ok(0) | Err(_) => return UserAnswer::Cancelled,
                Ok(_) => {}
            }
            match entry(field, line.trim_end_matches(['\n', '\r'])) {
                Entry::Value(value) => {
                    values.insert(field.name.clone(), value);
                    break;
                }
                Entry::Skip => break,
                Entry::Retry(why) => {
                    let _ = writeln!(io.output, "  {why}");
                }
                Entry::Decline => return UserAnswer::Declined,
                Entry::Cancel => return UserAnswer::Cancelled,
            }
        }
    }
    let _ = io.output.flush();
    UserAnswer::Answered { values }
}

fn prompt(io: &mut Io, field: &InputField) {
    let out = &mut io.output;
    if let Some(description) = &field.description {
        let _ = writeln!(out, "  {description}");
    }
    if let FieldKind::Choice { options } = &field.kind {
        for (index, option) in options.iter().enumerate() {
            let _ = writeln!(out, "  {}) {option}", index + 1);
        }
    }
    let hint = match &field.kind {
        FieldKind::Text => "",
        FieldKind::Choice { .. } => " (option or number)",
        FieldKind::Number => " (number)",
        FieldKind::Boolean => " (yes/no)",
    };
    let optional = if field.required {
        ""
    } else {
        ", Enter to skip"
    };
    let _ = write!(out, "{}{hint}{optional}: ", field.label());
    let _ = out.flush();
}

fn entry(field: &InputField, line: &str) -> Entry {
    let text = line.trim();
    match text {
        "/decline" => return Entry::Decline,
        "/cancel" => return Entry::Cancel,
        "" if field.required => {
            return Entry::Retry(format!("{} is required.", field.label()));
        }
        "" => return Entry::Skip,
        _ => {}
    }
    match &field.kind {
        FieldKind::Text => Entry::Value(Value::String(line.trim().to_owned())),
        FieldKind::Choice { options } => {
            let by_text = options.iter().find(|o| o.as_str() == text);
            let by_number = text
                .parse::<usize>()
                .ok()
                .and_then(|n| n.checked_sub(1))
                .and_then(|i| options.get(i));
            match by_text.or(by_number) {
                Some(option) => Entry::Value(Value::String(option.clone())),
                None => Entry::Retry(format!(
                    "\"{text}\" is not an option; type one of: {}",
                    options.join(", ")
                )),
            }
        }
        FieldKind::Number => text
            .parse::<i64>()
            .map(Value::from)
            .ok()
            .or_else(|| {
                text.parse::<f64>()
                    .ok()
                    .filter(|n| n.is_finite())
                    .map(Value::from)
            })
            .map_or_else(
                || Entry::Retry(format!("\"{text}\" is not a number.")),
                Entry::Value,
            ),
        FieldKind::Boolean => match text.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Entry::Value(Value::Bool(true)),
            "n" | "no" | "false" => Entry::Value(Value::Bool(false)),
            _ => Entry::Retry("answer yes or no.".to_owned()),
        },
    }
}
