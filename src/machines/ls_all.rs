//! `calyx ls --all`: this machine's running sessions and every saved machine's, one line
//! each prefixed with its machine (`build: api: 2 windows, 3 panes [120x40]`); an unreachable
//! machine gets `unreachable: NAME (reason)`. Lines print as machines answer. The status is
//! success when some session runs somewhere.

use std::io::Write as _;
use std::process::ExitCode;

use super::{all, store};
use crate::approvals::visible;
use crate::protocol::{Request, Response, SessionInfo};

pub async fn run() -> ExitCode {
    let mut answers = match all::ask_every(&Request::ListSessions) {
        Ok(answers) => answers,
        Err(e) => {
            eprintln!("calyx: {e:#}");
            return ExitCode::FAILURE;
        }
    };
    let mut out = std::io::stdout().lock();
    let mut listed = 0usize;
    let local = all::local(Request::ListSessions).await;
    let text = lines(store::LOCAL, local);
    listed += text.len();
    let _ = write!(out, "{}", text.concat());
    let _ = out.flush();
    while let Some((name, answer)) = answers.next().await {
        match answer {
            Ok(response) => {
                let text = lines(&name, response);
                listed += text.len();
                let _ = write!(out, "{}", text.concat());
            }
            Err(failure) => {
                let _ = writeln!(out, "{}", failure.line(&name));
            }
        }
        let _ = out.flush();
    }
    if listed == 0 {
        eprintln!("calyx: no sessions running on any machine");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

/// One line per session of `machine`'s answer.
fn lines(machine: &str, response: Option<Response>) -> Vec<String> {
    let Some(Response::Sessions(sessions)) = response else {
        return Vec::new();
    };
    sessions.iter().map(|s| line(machine, s)).collect()
}

/// `MACHINE: NAME: N windows, N panes [COLSxROWS] (attached)`; the name comes from another
/// machine's server, so it is shown escaped.
fn line(machine: &str, s: &SessionInfo) -> String {
    let attached = if s.attached > 0 { " (attached)" } else { "" };
    format!(
        "{machine}: {}: {}, {} [{}x{}]{attached}\n",
        visible(&s.name),
        counted(s.windows, "window"),
        counted(s.panes, "pane"),
        s.cols,
        s.rows,
    )
}

fn counted(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_print_with_their_machine_and_escaped() {
        let s = SessionInfo {
            id: 1,
            name: "api\u{1b}]2;x\u{7}".into(),
            windows: 2,
            panes: 1,
            attached: 1,
            rows: 40,
            cols: 120,
        };
        let text = lines("build", Some(Response::Sessions(vec![s])));
        assert_eq!(text.len(), 1);
        assert!(text[0].starts_with("build: api\\x1b]2;x"), "{text:?}");
        assert!(
            text[0].ends_with(": 2 windows, 1 pane [120x40] (attached)\n"),
            "{text:?}"
        );
        assert!(lines("build", None).is_empty());
        assert!(lines("build", Some(Response::Ok)).is_empty());
    }
}
