//! Skills in `serve`: the skills catalog in the initialize `instructions`, and each skill as
//! an MCP prompt (Claude Code lists them as `/mcp__<server>__<id>` slash commands).
//!
//! | request | answer |
//! |---|---|
//! | `initialize` | `instructions`: the server's lead text first, then one short line per skill, within [`INSTRUCTIONS_BUDGET`] (Claude Code keeps only the first 2 KB); `load_skill` has the rest |
//! | `prompts/list` | one prompt per skill: name = id, description, one optional argument `arguments` |
//! | `prompts/get` | one user message: the skill's instruction; `$ARGUMENTS` in the body is replaced by the arguments, else they are appended as `ARGUMENTS: …` (Claude Code's convention) |
//! | `prompts/get` of an unknown name | `-32602` invalid params, listing the ids |
//! | `resources/list` | an empty list (the capability is declared, so it is not "method not found") |

use kun_composition::Assembly;
use rmcp::ErrorData;
use rmcp::model::{
    GetPromptRequestParams, GetPromptResult, ListPromptsResult, Prompt, PromptArgument,
    PromptMessage, Role,
};
use serde_json::{Value, json};

/// The bytes of `instructions` Claude Code keeps.
pub const INSTRUCTIONS_BUDGET: usize = 2_048;

/// The prompt argument every skill prompt takes.
pub const ARGUMENTS: &str = "arguments";

/// The initialize `instructions`: `lead`, then the skills, within the budget.
#[must_use]
pub fn instructions(assembly: &Assembly, lead: &str) -> String {
    assembly
        .skills
        .catalog()
        .instructions(lead, INSTRUCTIONS_BUDGET)
}

/// `prompts/list`.
#[must_use]
pub fn list(assembly: &Assembly) -> ListPromptsResult {
    let prompts = assembly
        .skills
        .catalog()
        .skills()
        .iter()
        .map(|skill| {
            let description = if skill.description.is_empty() {
                skill.name.clone()
            } else {
                skill.description.clone()
            };
            Prompt::new(
                skill.id.clone(),
                Some(description),
                Some(vec![
                    PromptArgument::new(ARGUMENTS)
                        .with_description("What to apply the skill to (optional).")
                        .with_required(false),
                ]),
            )
        })
        .collect();
    ListPromptsResult::with_all_items(prompts)
}

/// `prompts/get`.
///
/// # Errors
/// An unknown prompt name (invalid params).
pub fn get(
    assembly: &Assembly,
    request: &GetPromptRequestParams,
) -> Result<GetPromptResult, ErrorData> {
    let catalog = assembly.skills.catalog();
    let Some(skill) = catalog.skills().iter().find(|s| s.id == request.name) else {
        return Err(ErrorData::invalid_params(
            format!(
                "unknown prompt `{}`; the prompts are the skills: {}",
                request.name,
                catalog.ids().join(", ")
            ),
            Some(json!({"prompt": request.name})),
        ));
    };
    let arguments = request
        .arguments
        .as_ref()
        .and_then(|args| args.get(ARGUMENTS))
        .map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .filter(|s| !s.trim().is_empty());
    let mut text = skill.instruction("prompt");
    if let Some(arguments) = arguments {
        if text.contains("$ARGUMENTS") {
            text = text.replace("$ARGUMENTS", &arguments);
        } else {
            text.push_str("\n\nARGUMENTS: ");
            text.push_str(&arguments);
        }
    }
    Ok(
        GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
            .with_description(skill.description.clone()),
    )
}
