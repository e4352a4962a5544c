//! One line of the journal: encoding and decoding (the format is documented in
//! [`super::journal`]).

use kun_ports::{OperationKey, ToolResult};
use serde::{Deserialize, Serialize};

/// The format version written in every line's `v` field.
pub(crate) const FORMAT_VERSION: u32 = 1;

/// What a line records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Op {
    Begin,
    Complete,
    Fail,
    Unknown,
}

/// A record to write, borrowing its parts.
#[derive(Debug, Clone, Copy)]
pub(crate) enum RecordRef<'a> {
    /// The operation started in process `pid`.
    Begin {
        /// The operation.
        key: &'a OperationKey,
        /// The process running it.
        pid: u32,
    },
    /// It finished with `result`.
    Complete {
        /// The operation.
        key: &'a OperationKey,
        /// Its result.
        result: &'a ToolResult,
    },
    /// It failed without effects.
    Fail {
        /// The operation.
        key: &'a OperationKey,
    },
    /// Its outcome is unknown.
    Unknown {
        /// The operation.
        key: &'a OperationKey,
        /// Why.
        reason: &'a str,
    },
}

/// A decoded record.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Entry {
    /// See [`RecordRef::Begin`].
    Begin { key: OperationKey, pid: u32 },
    /// See [`RecordRef::Complete`].
    Complete {
        key: OperationKey,
        result: ToolResult,
    },
    /// See [`RecordRef::Fail`].
    Fail { key: OperationKey },
    /// See [`RecordRef::Unknown`].
    Unknown { key: OperationKey, reason: String },
}

#[derive(Serialize)]
struct LineOut<'a> {
    v: u32,
    op: Op,
    key: &'a OperationKey,
    #[serde(skip_serializing_if = "Option::is_none")]
    pid: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a ToolResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
}

#[derive(Deserialize)]
struct LineIn {
    v: u32,
    op: Op,
    key: OperationKey,
    #[serde(default)]
    pid: Option<u32>,
    #[serde(default)]
    result: Option<ToolResult>,
    #[serde(default)]
    reason: Option<String>,
}

impl<'a> RecordRef<'a> {
    /// Appends the record and a `\n` to `buf`.
    pub(crate) fn encode_into(self, buf: &mut Vec<u8>) -> Result<(), serde_json::Error> {
        let mut line = LineOut {
            v: FORMAT_VERSION,
            op: Op::Begin,
            key: self.key(),
            pid: None,
            result: None,
            reason: None,
        };
        match self {
            Self::Begin { pid, .. } => line.pid = Some(pid),
            Self::Complete { result, .. } => {
                line.op = Op::Complete;
                line.result = Some(result);
            }
            Self::Fail { .. } => line.op = Op::Fail,
            Self::Unknown { reason, .. } => {
                line.op = Op::Unknown;
                line.reason = Some(reason);
            }
        }
        serde_json::to_writer(&mut *buf, &line)?;
        buf.push(b'\n');
        Ok(())
    }

    const fn key(self) -> &'a OperationKey {
        match self {
            Self::Begin { key, .. }
            | Self::Complete { key, .. }
            | Self::Fail { key }
            | Self::Unknown { key, .. } => key,
        }
    }
}

/// Decodes one line (without its `\n`).
///
/// # Errors
/// A description of what is wrong with the line.
pub(crate) fn decode(line: &[u8]) -> Result<Entry, String> {
    let line: LineIn = serde_json::from_slice(line).map_err(|e| e.to_string())?;
    if line.v != FORMAT_VERSION {
        return Err(format!(
            "format version {} (this build reads {FORMAT_VERSION})",
            line.v
        ));
    }
    let key = line.key;
    match line.op {
        Op::Begin => Ok(Entry::Begin {
            key,
            pid: line.pid.unwrap_or(0),
        }),
        Op::Complete => match line.result {
            Some(result) => Ok(Entry::Complete { key, result }),
            None => Err("a `complete` record without its `result`".to_owned()),
        },
        Op::Fail => Ok(Entry::Fail { key }),
        Op::Unknown => Ok(Entry::Unknown {
            key,
            reason: line.reason.unwrap_or_default(),
        }),
    }
}
