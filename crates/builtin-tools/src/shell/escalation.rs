//! The `sandbox` and `justification` arguments of the command tools: a call may ask to run
//! its command outside the sandbox. The host then always asks the user (showing the
//! justification), approves such a call one at a time, and refuses it under the approval
//! policy `never`; under read-only and external-sandbox, commands stay blocked.

use kun_ports::SandboxRequest;
use schemars::JsonSchema;
use serde::Deserialize;

/// Where a command runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum SandboxArg {
    /// In the sandbox (the default).
    #[default]
    Confined,
    /// Outside the sandbox, with full access to this machine (network, files outside the
    /// workspace). The user is always asked first and sees `justification`. Ask for it only
    /// after the same command failed because of the sandbox.
    Escalated,
}

impl From<SandboxArg> for SandboxRequest {
    fn from(arg: SandboxArg) -> Self {
        match arg {
            SandboxArg::Confined => Self::Confined,
            SandboxArg::Escalated => Self::Escalated,
        }
    }
}

/// An escalated call must say why (the user reads it before approving).
///
/// # Errors
/// A message for `approval_classification_failed` when `sandbox` is escalated and the
/// justification is missing or blank.
pub(crate) fn check_justification(
    sandbox: SandboxArg,
    justification: Option<&str>,
) -> Result<(), String> {
    let blank = justification.is_none_or(|text| text.trim().is_empty());
    if sandbox == SandboxArg::Escalated && blank {
        Err(
            "sandbox \"escalated\" needs a justification: one sentence, for the user, on why \
             this command must run outside the sandbox"
                .to_owned(),
        )
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escalation_needs_a_justification() {
        assert!(check_justification(SandboxArg::Confined, None).is_ok());
        assert!(check_justification(SandboxArg::Escalated, Some("needs the network")).is_ok());
        for blank in [None, Some(""), Some("  ")] {
            let err = check_justification(SandboxArg::Escalated, blank).unwrap_err();
            assert!(err.contains("justification"), "{err}");
        }
        assert_eq!(
            SandboxRequest::from(SandboxArg::Escalated),
            SandboxRequest::Escalated
        );
        assert_eq!(
            SandboxRequest::from(SandboxArg::default()),
            SandboxRequest::Confined
        );
    }
}
