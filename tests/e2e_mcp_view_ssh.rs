//! An MCP App view opened through the `ssh -L` line its card shows a client attached over SSH
//! (issue 17, acceptance: "Over SSH the card shows the two-port `ssh -L` command; with those
//! forwards the page works unchanged").
//!
//! The "laptop" is a network namespace of its own (`unshare -n`): nothing of calyx is
//! reachable there, and the view ports are free for the forwards to take. The user's real
//! `ssh` runs there with the exact `-L` arguments the card shows; its connection reaches a
//! real `sshd` (Debian's openssh-server, in inetd mode through `ProxyCommand`, entered into
//! the test's own network namespace with `nsenter`), whose forwards reach the view server on
//! this side's 127.0.0.1. Headless Chromium in the laptop namespace then opens the view's URL
//! unchanged: host page, sandbox and the app all load through the tunnel.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::common::Client;
use crate::e2e_mcp_view_card::wait_screen;
use crate::e2e_mcp_views::{agent_in, call_text, panes, views, world_with_fixture, TIME_TEXT};
use crate::support_browser::{browser, last_line};
use crate::support_sshd::{keygen, SSHD};

/// Whether this machine can run the test: sshd (required under CI, see
/// [`crate::support_sshd::available`]), and root for `unshare -n` and sshd's privilege
/// separation, with the namespace tools.
fn ssh_tunnel_possible() -> bool {
    if !crate::support_sshd::available() {
        return false;
    }
    let root = nix::unistd::Uid::effective().is_root();
    let tools = ["unshare", "nsenter", "ip", "ssh"]
        .iter()
        .all(|t| which(t).is_some());
    if root && tools {
        return true;
    }
    assert!(
        std::env::var_os("CALYX_REQUIRE_SSHD").is_none(),
        "CALYX_REQUIRE_SSHD is set but the SSH tunnel test cannot run \
         (root {root}, unshare/nsenter/ip/ssh {tools})"
    );
    eprintln!("skipped: needs root, unshare, nsenter and ip");
    false
}

fn which(tool: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|d| Path::new(d).join(tool))
        .find(|p| p.is_file())
}

/// Keys and configs in `dir`: an sshd that runs per connection (inetd mode) in this
/// process's network namespace, and an ssh config that reaches it as host `127.0.0.1`.
fn ssh_setup(dir: &Path) -> PathBuf {
    let path = |name: &str| dir.join(name).display().to_string();
    keygen(&dir.join("host_key"));
    keygen(&dir.join("user_key"));
    std::fs::copy(dir.join("user_key.pub"), dir.join("authorized_keys")).expect("authorized");
    // sshd's privilege separation directory (Debian's service creates it at boot).
    std::fs::create_dir_all("/run/sshd").expect("/run/sshd");
    std::fs::write(
        dir.join("sshd_config"),
        format!(
            "HostKey {}\nAuthorizedKeysFile {}\nStrictModes no\nUsePAM no\n\
             PermitRootLogin prohibit-password\nPasswordAuthentication no\n\
             AllowTcpForwarding yes\nLogLevel ERROR\n",
            path("host_key"),
            path("authorized_keys"),
        ),
    )
    .expect("sshd_config");
    let config = dir.join("ssh_config");
    std::fs::write(
        &config,
        format!(
            "Host 127.0.0.1\n  ProxyCommand nsenter --net=/proc/{pid}/ns/net {SSHD} -i -f {sshd}\n  \
             IdentityFile {key}\n  IdentitiesOnly yes\n  UserKnownHostsFile /dev/null\n  \
             StrictHostKeyChecking no\n  BatchMode yes\n  LogLevel ERROR\n",
            pid = std::process::id(),
            sshd = path("sshd_config"),
            key = path("user_key"),
        ),
    )
    .expect("ssh_config");
    config
}

/// The `ssh -L ... user@host` words of the card's tunnel line on `screen`.
fn tunnel_words(screen: &str) -> Option<Vec<String>> {
    let line = screen.lines().find(|l| l.contains("ssh -L"))?;
    let start = line.find("ssh -L")?;
    let words: Vec<String> = line[start..]
        .split_whitespace()
        .take(6)
        .map(str::to_string)
        .collect();
    (words.len() == 6 && words[5].contains('@')).then_some(words)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cards_ssh_line_forwards_a_page_that_works_unchanged() {
    if !ssh_tunnel_possible() {
        return;
    }
    let Some(browser) = browser() else {
        return;
    };
    let env = world_with_fixture().await;
    let (_, surface) = panes(&env)[0].clone();
    // A client attached over SSH from the laptop (127.0.0.1 is the server's address as the
    // laptop dialled it), as the test's own user.
    let user = nix::unistd::User::from_uid(nix::unistd::Uid::effective())
        .ok()
        .flatten()
        .map(|u| u.name)
        .expect("the test's user");
    let mut vars = env.vars();
    vars.push((
        "SSH_CONNECTION".into(),
        "127.0.0.1 50000 127.0.0.1 22".into(),
    ));
    vars.push(("USER".into(), user.clone()));
    let c = Client::spawn_with(&env, &["attach", "-t", "hosted"], 30, 220, &vars);
    c.wait_for("[hosted]");
    let agent = agent_in(&env, &surface).await;
    assert_eq!(call_text(&agent, "fx-show_time").await, TIME_TEXT);
    let url = views(&env)
        .await
        .last()
        .and_then(|v| v["url"].as_str().map(str::to_string))
        .expect("a view URL");
    let screen = wait_screen(&c, "the tunnel line", |s| tunnel_words(s).is_some());
    let words = tunnel_words(&screen).expect("the tunnel line");
    assert_eq!(words[5], format!("{user}@127.0.0.1"), "{words:?}");
    let host_port = url
        .trim_start_matches("http://127.0.0.1:")
        .split('/')
        .next()
        .expect("the URL's port")
        .to_string();
    assert_eq!(words[2], format!("{host_port}:127.0.0.1:{host_port}"));
    drop(c);

    let dir = tempfile::tempdir().expect("tempdir");
    let config = ssh_setup(dir.path());
    // In the laptop's namespace: the card's ssh line (with the test's ssh config, no shell,
    // and failing if a forward cannot listen), then the browser once the forward listens.
    let real_view = format!("{}/tests/views/real_view.mjs", env!("CARGO_MANIFEST_DIR"));
    let script = format!(
        r#"ip link set lo up || exit 90
{ssh} -F {config} -N -o ExitOnForwardFailure=yes {forwards} &
tunnel=$!
for _ in $(seq 400); do
  (exec 3<>/dev/tcp/127.0.0.1/{host_port}) 2>/dev/null && break
  kill -0 $tunnel 2>/dev/null || exit 91
  sleep 0.05
done
node {real_view} "$1" {playwright} {chromium}
status=$?
kill $tunnel
exit $status"#,
        ssh = words[0],
        config = config.display(),
        forwards = words[1..].join(" "),
        playwright = browser.playwright.display(),
        chromium = browser.chromium.display(),
    );
    let laptop = tokio::process::Command::new("unshare")
        .args(["-n", "bash", "-c", &script, "laptop", &url])
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(Duration::from_secs(120), laptop)
        .await
        .expect("the laptop's run finishes in time")
        .expect("unshare runs");
    assert!(
        output.status.success(),
        "the laptop's ssh or browser failed ({:?}): {}",
        output.status.code(),
        String::from_utf8_lossy(&output.stderr)
    );
    let seen = last_line(&output);
    assert_eq!(seen["http"], 200, "{seen}");
    assert_eq!(seen["status"], "host calyx 2026-01-26", "{seen}");
    assert_eq!(seen["result"], TIME_TEXT, "through the tunnel: {seen}");
    let frames: Vec<&str> = seen["frames"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let sandbox_port = words[4].split(':').next().unwrap_or_default();
    assert_eq!(
        frames.get(1).copied(),
        Some(format!("http://127.0.0.1:{sandbox_port}").as_str()),
        "the sandbox came through the second forward: {frames:?}"
    );
}
