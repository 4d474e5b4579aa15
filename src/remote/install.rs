//! `--install`: puts this calyx on a remote machine that has none, or one of another version,
//! so `--remote` can talk to it. Only the local binary itself travels, and only when the
//! remote's platform (`uname -sm`) is this one's; it is written beside its final place, its
//! SHA-256 checked on the far side, and renamed into `~/.local/bin/calyx`. A calyx already
//! there is replaced only by this explicit flag, and the message names the version replaced.

use std::process::Stdio;

use anyhow::{bail, Context};
use sha2::Digest;
use tokio::io::AsyncWriteExt;

use super::handshake::printable_line;
use super::Target;

/// Where the copy goes on the far side (the bridge looks there when `calyx` is not on the
/// PATH of a non-interactive ssh).
pub const REMOTE_PATH: &str = "~/.local/bin/calyx";

/// Makes sure `target` runs this calyx version; returns what was done, for the user.
pub async fn install(target: &Target) -> anyhow::Result<String> {
    let host = target.display();
    let platform = run(target, "uname -sm", None).await?;
    let remote = platform.stdout.trim().to_string();
    if !platform.ok || !same_platform(&remote) {
        bail!(
            "{host} is {} and this calyx is built for {} {}: install calyx {} for that platform \
             there yourself (into ~/.local/bin or anywhere on its PATH)",
            if remote.is_empty() {
                "unknown".to_string()
            } else {
                printable_line(&remote)
            },
            std::env::consts::OS,
            std::env::consts::ARCH,
            env!("CARGO_PKG_VERSION"),
        );
    }
    let existing = run(target, &super::handshake::remote_command("--version"), None).await?;
    let ours = env!("CARGO_PKG_VERSION");
    let theirs = existing
        .ok
        .then(|| printable_line(existing.stdout.trim().trim_start_matches("calyx ")));
    if theirs.as_deref() == Some(ours) {
        return Ok(format!("{host} already has calyx {ours}"));
    }
    let binary = crate::upgrade::installed_binary().context("failed to find this calyx")?;
    let bytes = tokio::fs::read(&binary)
        .await
        .with_context(|| format!("failed to read {}", binary.display()))?;
    let sum = hex(&sha2::Sha256::digest(&bytes));
    let copied = run(target, &copy_script(&sum), Some(bytes)).await?;
    if !copied.ok {
        bail!(
            "copying calyx to {host}:{REMOTE_PATH} failed{}",
            if copied.stderr.trim().is_empty() {
                String::new()
            } else {
                format!(": {}", printable_line(&copied.stderr))
            }
        );
    }
    Ok(match theirs {
        Some(old) => {
            format!("installed calyx {ours} on {host} at {REMOTE_PATH}, replacing calyx {old}")
        }
        None => format!("installed calyx {ours} on {host} at {REMOTE_PATH}"),
    })
}

/// Writes stdin to a temporary file beside the final one, checks its SHA-256, then renames
/// it into place (a half-copied binary is never run); exit 3 on a checksum mismatch.
fn copy_script(sum: &str) -> String {
    format!(
        "sh -c 'set -e; d=\"$HOME/.local/bin\"; mkdir -p \"$d\"; t=\"$d/calyx.tmp.$$\"; \
         trap \"rm -f \\\"$t\\\"\" EXIT; cat > \"$t\"; \
         if command -v sha256sum >/dev/null 2>&1; then s=$(sha256sum \"$t\"); \
         else s=$(shasum -a 256 \"$t\"); fi; \
         [ \"${{s%% *}}\" = {sum} ] || {{ echo \"checksum mismatch after copy\" >&2; exit 3; }}; \
         chmod 755 \"$t\"; mv -f \"$t\" \"$d/calyx\"; trap - EXIT'"
    )
}

/// Whether `uname -sm`'s answer is this binary's platform.
fn same_platform(uname: &str) -> bool {
    let mut words = uname.split_whitespace();
    let os = match words.next() {
        Some("Linux") => "linux",
        Some("Darwin") => "macos",
        Some("FreeBSD") => "freebsd",
        _ => return false,
    };
    let arch = match words.next() {
        Some("x86_64" | "amd64") => "x86_64",
        Some("aarch64" | "arm64") => "aarch64",
        Some(other) => other,
        None => return false,
    };
    os == std::env::consts::OS && arch == std::env::consts::ARCH
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What one remote command did.
struct Ran {
    ok: bool,
    stdout: String,
    stderr: String,
}

/// Runs `command` on `target` over ssh, with `input` on its stdin.
async fn run(target: &Target, command: &str, input: Option<Vec<u8>>) -> anyhow::Result<Ran> {
    let mut cmd = target.ssh_command(&[], command)?;
    cmd.stdin(if input.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .kill_on_drop(true);
    let mut child = cmd.spawn().context("failed to run ssh")?;
    if let (Some(bytes), Some(mut stdin)) = (input, child.stdin.take()) {
        stdin
            .write_all(&bytes)
            .await
            .context("the copy over ssh was cut off")?;
        drop(stdin);
    }
    let out = child.wait_with_output().await.context("ssh failed")?;
    if out.status.code() == Some(255) {
        bail!(
            "ssh could not reach {}: {}",
            target.display(),
            printable_line(&String::from_utf8_lossy(&out.stderr))
        );
    }
    Ok(Ran {
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).to_string(),
        stderr: String::from_utf8_lossy(&out.stderr).to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_this_platform_matches() {
        let ours = match (std::env::consts::OS, std::env::consts::ARCH) {
            ("linux", "x86_64") => "Linux x86_64",
            ("linux", "aarch64") => "Linux aarch64",
            ("macos", "aarch64") => "Darwin arm64",
            _ => return,
        };
        assert!(same_platform(ours));
        assert!(!same_platform("Linux riscv64"));
        assert!(!same_platform("SunOS i86pc"));
        assert!(!same_platform(""));
    }
}
