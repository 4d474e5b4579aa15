//! The checks a new binary passes before the running server hands anything over: it runs
//! (`--version`), and its dry run (`calyx server --check-adopt`, the state on its stdin) reads
//! the state this server would hand over and speaks this protocol. Any failure leaves the
//! running server as it was, and says why.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use super::handover::PROTOCOL_VERSION;

/// How long each check may take before the binary is given up on.
const CHECK_TIME: Duration = Duration::from_secs(10);

/// The line a dry run prints when it read the state: `calyx-adopt ok protocol=N`.
pub const ADOPT_OK: &str = "calyx-adopt ok protocol=";

/// Checks `binary` against `state` (the hand-over's JSON); its `--version` line when it passes.
pub fn check_binary(binary: &Path, state: &[u8]) -> Result<String, String> {
    let shown = binary.display();
    let version = run(Command::new(binary).arg("--version"), b"")
        .map_err(|e| format!("{shown} --version did not run: {e}"))?;
    let version_line = String::from_utf8_lossy(&version.stdout)
        .lines()
        .next()
        .unwrap_or_default()
        .chars()
        .take(120)
        .collect::<String>();
    if !version.status.success() || !version_line.starts_with("calyx ") {
        return Err(format!(
            "{shown} --version answered {:?} ({}): not a calyx binary",
            version_line, version.status
        ));
    }
    let dry_run = run(
        Command::new(binary).args(["server", "--check-adopt"]),
        state,
    )
    .map_err(|e| format!("{shown} server --check-adopt did not run: {e}"))?;
    let said = String::from_utf8_lossy(&dry_run.stdout);
    let protocol = said
        .lines()
        .find_map(|l| l.strip_prefix(ADOPT_OK))
        .and_then(|n| n.trim().parse::<u32>().ok());
    if !dry_run.status.success() || protocol.is_none() {
        let why = String::from_utf8_lossy(&dry_run.stderr).trim().to_string();
        return Err(format!(
            "{version_line} ({shown}) cannot take over this server: {}",
            if why.is_empty() {
                format!(
                    "its dry run exited {} without reading the state",
                    dry_run.status
                )
            } else {
                why
            }
        ));
    }
    if protocol != Some(PROTOCOL_VERSION) {
        return Err(format!(
            "{version_line} speaks protocol {}, this server's clients speak {PROTOCOL_VERSION}",
            protocol.unwrap_or_default()
        ));
    }
    Ok(version_line)
}

/// Runs `command` with `input` on its stdin, within [`CHECK_TIME`] (killed after it).
fn run(command: &mut Command, input: &[u8]) -> std::io::Result<Output> {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        // A binary that exits without reading its stdin closes the pipe: not an error here,
        // its exit status says what happened.
        let _ = stdin.write_all(input);
    }
    let deadline = Instant::now() + CHECK_TIME;
    loop {
        if child.try_wait()?.is_some() {
            return child.wait_with_output();
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("no answer within {} s", CHECK_TIME.as_secs()),
            ));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(dir: &Path, body: &str) -> std::path::PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join("calyx-new");
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        path
    }

    #[test]
    fn a_binary_that_exits_at_once_is_refused_with_the_reason() {
        let dir = tempfile::tempdir().expect("tempdir");
        let err = check_binary(&script(dir.path(), "exit 0"), b"{}").expect_err("refused");
        assert!(err.contains("not a calyx binary"), "{err}");
        let err = check_binary(&dir.path().join("missing"), b"{}").expect_err("refused");
        assert!(err.contains("did not run"), "{err}");
    }

    #[test]
    fn the_dry_run_must_read_the_state_and_speak_this_protocol() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fails = "[ \"$1\" = --version ] && { echo 'calyx 9.9'; exit 0; }\necho 'state unreadable' >&2; exit 1";
        let err = check_binary(&script(dir.path(), fails), b"{}").expect_err("refused");
        assert!(err.contains("state unreadable"), "{err}");
        let other = format!(
            "[ \"$1\" = --version ] && {{ echo 'calyx 9.9'; exit 0; }}\ncat >/dev/null; echo '{ADOPT_OK}{}'",
            PROTOCOL_VERSION + 1
        );
        let err = check_binary(&script(dir.path(), &other), b"{}").expect_err("refused");
        assert!(err.contains("protocol"), "{err}");
        let good = format!(
            "[ \"$1\" = --version ] && {{ echo 'calyx 9.9'; exit 0; }}\ncat >/dev/null; echo '{ADOPT_OK}{PROTOCOL_VERSION}'"
        );
        assert_eq!(
            check_binary(&script(dir.path(), &good), b"{}").as_deref(),
            Ok("calyx 9.9")
        );
    }
}
