//! The hook output parser: any stdout, for every phase, reads without a panic; an empty
//! or blank stdout is no opinion.
#![no_main]

use kun_hooks::protocol::read_stdout;
use kun_ports::HookPhase;
use libfuzzer_sys::fuzz_target;

const PHASES: [HookPhase; 6] = [
    HookPhase::PreToolUse,
    HookPhase::PostToolUse,
    HookPhase::UserPromptSubmit,
    HookPhase::TurnStart,
    HookPhase::TurnEnd,
    HookPhase::PreCompact,
];

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let phase = PHASES[usize::from(selector) % PHASES.len()];
    let stdout = String::from_utf8_lossy(rest);
    let answer = read_stdout(phase, "fuzz", &stdout);
    if stdout.trim().is_empty() {
        assert_eq!(answer.verdict, "none");
        assert!(answer.warnings.is_empty());
    }
});
