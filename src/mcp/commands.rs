//! The command history as the MCP tools see it: the records the backend hands over, command ids,
//! and how a wait for a command ends.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Whether a command is still running.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CommandStatus {
    Running,
    Finished,
}

/// One command a shell pane ran, as the shell integration reported it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CommandInfo {
    /// Command id (`%3:17`: pane and number): what terminal_read_output and
    /// terminal_await_command take.
    pub id: String,
    /// The pane it ran in.
    pub pane: String,
    /// The command line as typed, secrets redacted.
    pub command: String,
    /// Working directory it ran in, when the shell reported it.
    pub cwd: Option<String>,
    pub state: CommandStatus,
    /// Exit code once finished (null while running, or when the shell never reported it).
    pub exit_code: Option<i32>,
    /// Start time, milliseconds since the Unix epoch.
    pub started_at_ms: u64,
    /// End time, milliseconds since the Unix epoch.
    pub finished_at_ms: Option<u64>,
    /// Bytes the command printed (before escape sequences were stripped).
    pub output_bytes: u64,
    /// Whether the start of the recorded output was cut (256 KiB of text are kept, the end).
    pub output_truncated: bool,
}

/// A pane's history.
#[derive(Debug, Clone, PartialEq)]
pub struct PaneCommands {
    /// Whether the pane's shell reports commands (calyx's integration, or the shell's own).
    pub integrated: bool,
    /// Oldest first; the last may be running.
    pub commands: Vec<CommandInfo>,
}

/// A command with its output text.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandOutput {
    pub command: CommandInfo,
    pub output: String,
}

/// How a wait for a command ended.
#[derive(Debug, Clone, PartialEq)]
pub enum CommandWait {
    Finished(CommandOutput),
    /// Still running (or not started) when the time ran out; `command_id` is what to wait on.
    TimedOut {
        command_id: String,
    },
    /// The pane's program exited before the command finished.
    PaneClosed {
        command_id: String,
    },
}

/// The id of command `seq` in `pane` (`%3` and 17 give `%3:17`).
pub fn command_id(pane: &str, seq: u64) -> String {
    format!("{pane}:{seq}")
}

/// Splits a command id into its pane and number.
pub fn parse_command_id(id: &str) -> Result<(String, u64), String> {
    id.trim()
        .rsplit_once(':')
        .filter(|(pane, _)| pane.starts_with('%') && pane.len() > 1)
        .and_then(|(pane, seq)| Some((pane.to_string(), seq.parse().ok()?)))
        .ok_or_else(|| {
            format!("{id:?} is not a command id; ids look like %3:17 and come from terminal_list_commands")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_ids_round_trip_and_bad_ones_say_what_they_look_like() {
        assert_eq!(
            parse_command_id(&command_id("%3", 17)),
            Ok(("%3".into(), 17))
        );
        for bad in ["", "%3", "3:17", "%:1", "%3:x"] {
            let e = parse_command_id(bad).err().unwrap_or_default();
            assert!(e.contains("%3:17"), "{bad}: {e}");
        }
    }
}
