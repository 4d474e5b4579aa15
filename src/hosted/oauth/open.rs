//! Opening the sign-in page. A client that is local (its environment has `DISPLAY` or
//! `WAYLAND_DISPLAY`, or it runs on macOS, and no `SSH_CONNECTION`) runs `$BROWSER`, else
//! `xdg-open` (`open` on macOS). Otherwise the URL is printed with two ways back: forward
//! port 41890 with the `ssh -L` line built from `SSH_CONNECTION`, or paste the address the
//! browser fails to load.

use std::process::Stdio;

use super::callback::FIXED_REDIRECT_PORT;

/// The variables [`opener`] reads (an attaching client sends these to the server).
pub const OPENER_VARS: [&str; 5] = [
    "SSH_CONNECTION",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "BROWSER",
    "USER",
];

/// [`OPENER_VARS`] as this process has them: what an attaching client sends.
pub fn opener_env() -> Vec<(String, String)> {
    OPENER_VARS
        .iter()
        .filter_map(|name| Some((name.to_string(), std::env::var(name).ok()?)))
        .collect()
}

/// How the page gets opened, decided from the client's environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opener {
    /// Run this program with the URL.
    Browser(String),
    /// Print the URL; `forward` is the `ssh -L` line when over SSH.
    Print { forward: Option<String> },
}

/// Decides from `env` (a lookup of the client's environment variables).
pub fn opener(env: impl Fn(&str) -> Option<String>) -> Opener {
    let set = |name: &str| env(name).is_some_and(|v| !v.is_empty());
    let ssh = env("SSH_CONNECTION").filter(|v| !v.is_empty());
    let graphical = set("DISPLAY") || set("WAYLAND_DISPLAY") || cfg!(target_os = "macos");
    if ssh.is_none() && graphical {
        let program = env("BROWSER").filter(|b| !b.is_empty()).unwrap_or_else(|| {
            if cfg!(target_os = "macos") {
                "open"
            } else {
                "xdg-open"
            }
            .into()
        });
        return Opener::Browser(program);
    }
    Opener::Print {
        forward: ssh.map(|connection| forward_line(&connection, env("USER").as_deref())),
    }
}

/// `ssh -L 41890:127.0.0.1:41890 <user>@<host>`, the host being the server address of
/// `SSH_CONNECTION` ("client-ip client-port server-ip server-port").
pub fn forward_line(ssh_connection: &str, user: Option<&str>) -> String {
    let host = ssh_connection.split_whitespace().nth(2).unwrap_or("HOST");
    let user = user.filter(|u| !u.is_empty()).unwrap_or("USER");
    format!("ssh -L {FIXED_REDIRECT_PORT}:127.0.0.1:{FIXED_REDIRECT_PORT} {user}@{host}")
}

/// Runs `program URL` (a `$BROWSER` with arguments is split like a shell would); its output
/// is discarded so it does not draw over the terminal.
pub fn launch(program: &str, url: &str) -> std::io::Result<()> {
    launch_with(program, url, &[])
}

/// [`launch`] with `env` added to the program's environment (the servers overlay runs the
/// browser of a client, whose `DISPLAY` the server may not have).
pub fn launch_with(program: &str, url: &str, env: &[(String, String)]) -> std::io::Result<()> {
    let words = crate::argsplit::split_args(program).unwrap_or_else(|_| vec![program.into()]);
    let Some((first, rest)) = words.split_first() else {
        return Err(std::io::Error::other("no browser program"));
    };
    std::process::Command::new(first)
        .args(rest)
        .arg(url)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn a_local_desktop_runs_the_browser() {
        assert_eq!(
            opener(env(&[("DISPLAY", ":0"), ("BROWSER", "firefox")])),
            Opener::Browser("firefox".into())
        );
        if !cfg!(target_os = "macos") {
            assert_eq!(
                opener(env(&[("WAYLAND_DISPLAY", "wayland-0")])),
                Opener::Browser("xdg-open".into())
            );
        }
    }

    #[test]
    fn over_ssh_the_url_is_printed_with_the_forward_line() {
        let opened = opener(env(&[
            ("DISPLAY", "localhost:10.0"),
            ("SSH_CONNECTION", "203.0.113.5 51234 198.51.100.7 22"),
            ("USER", "ana"),
        ]));
        assert_eq!(
            opened,
            Opener::Print {
                forward: Some("ssh -L 41890:127.0.0.1:41890 ana@198.51.100.7".into())
            }
        );
    }

    #[test]
    fn a_headless_box_without_ssh_prints_the_url() {
        if !cfg!(target_os = "macos") {
            assert_eq!(opener(env(&[])), Opener::Print { forward: None });
        }
    }
}
