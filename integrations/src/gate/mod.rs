//! Each agent CLI's permission gate: which hook calls are gates calyx answers ([`select`]),
//! the response schema each CLI reads and what its answers can say ([`schema`]), which
//! every-call hooks the user made into gates ([`policy`]), and the bytes of each answer
//! ([`answer`]). The decision itself is not here: a human makes it in calyx, and calyx hands
//! it over as a [`Verdict`].
//!
//! Seed 000 §4 and the real runs in fixtures/payloads/README.md decide this: Claude Code and
//! Codex gate on PermissionRequest only (PreToolUse fires for calls the CLI would run anyway);
//! Copilot's permissionRequest takes a flat `behavior`; Grok's PreToolUse runs before Grok's own
//! permission system, so calyx gates it only under bypassPermissions; pi has no prompt of its
//! own, so calyx's extension gates every tool call; calyx's OpenCode plugin posts
//! `permission.asked` and answers through OpenCode's SDK client.
//!
//! Gemini's BeforeTool and Hermes's pre_tool_call can only deny (their allow does not skip the
//! CLI's own rules), and they fire for every tool call, reads included. Holding them would ask
//! a question the CLI asks again, so they are gates only where the user opted in
//! (`[approvals] deny_gates` in config.toml), and then only for tools that can change something
//! ([`gemini_asks`], [`hermes_acts`]). Everything else passes through at once.
//!
//! Kimi Code and Cursor Agent cannot be installed here (unverified, from their published hook
//! docs). Kimi's PermissionRequest hook is fire-and-forget (it only observes, so it only marks
//! the row blocked); its PreToolUse can only deny (`hookSpecificOutput.permissionDecision`),
//! like Gemini's: an opt-in deny gate ([`kimi_acts`]). Cursor's `beforeShellExecution` and
//! `beforeMCPExecution` take `{"permission":"allow"|"deny"|"ask"}`, a full gate, but they fire
//! for every command, including those Cursor runs unasked: an opt-in gate too.

pub mod answer;
pub mod policy;
pub mod schema;
pub mod select;

pub use answer::{on_silence, refused, verdict_body, Verdict};
pub use policy::Policy;
pub use schema::{Schema, HERMES_EXPIRY};
pub use select::{gate, gemini_asks, hermes_acts, kimi_acts, may_gate, schema_of};
