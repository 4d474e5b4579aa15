//! `calyx agents --all`: this machine's agent rows and every saved machine's, each row with
//! its `machine` (`local` for this one). The table prints this machine's rows at once and each
//! machine's as they arrive; an unreachable machine gets a line of its own
//! (`unreachable: NAME (reason)`). `--json` waits for every machine and gives one object.

use std::io::Write as _;
use std::process::ExitCode;

use serde_json::{json, Value};

use super::{all, probe, store};
use crate::agents_cli;
use crate::protocol::{Request, Response};

pub async fn run(json: bool) -> ExitCode {
    let mut answers = match all::ask_every(&Request::Agents) {
        Ok(answers) => answers,
        Err(e) => {
            eprintln!("calyx: {e:#}");
            return ExitCode::FAILURE;
        }
    };
    let mut rows = all::local(Request::Agents)
        .await
        .map(|r| rows_of(r, store::LOCAL))
        .unwrap_or_default();
    let mut out = std::io::stdout().lock();
    if !json {
        let _ = write!(out, "{}", agents_cli::header(true));
        let _ = write!(out, "{}", agents_cli::lines(&rows, true));
        let _ = out.flush();
    }
    let mut failures: Vec<(String, probe::Failure)> = Vec::new();
    while let Some((name, answer)) = answers.next().await {
        match answer {
            Ok(response) => {
                let theirs = response.map(|r| rows_of(r, &name)).unwrap_or_default();
                if !json {
                    let _ = write!(out, "{}", agents_cli::lines(&theirs, true));
                }
                rows.extend(theirs);
            }
            Err(failure) => {
                if !json {
                    let _ = writeln!(out, "{}", failure.line(&name));
                }
                failures.push((name, failure));
            }
        }
        let _ = out.flush();
    }
    if json {
        let unreachable: Vec<Value> = failures
            .iter()
            .map(|(name, failure)| {
                let (needs_you, wrong_version, reason) = match failure {
                    probe::Failure::NeedsYou { reason, .. } => (true, false, reason),
                    probe::Failure::Unreachable(reason) => (false, false, reason),
                    probe::Failure::WrongVersion(reason) => (false, true, reason),
                };
                json!({"machine": name, "needs_you": needs_you,
                       "wrong_version": wrong_version, "reason": reason})
            })
            .collect();
        let answer = json!({"agents": rows, "unreachable": unreachable});
        let text = serde_json::to_string_pretty(&answer).unwrap_or_default();
        let _ = writeln!(out, "{text}");
    }
    ExitCode::SUCCESS
}

/// The `agents` array of an answer, each row given its `machine`.
fn rows_of(response: Response, machine: &str) -> Vec<Value> {
    let Response::Json(mut value) = response else {
        return Vec::new();
    };
    let Some(Value::Array(rows)) = value.get_mut("agents").map(Value::take) else {
        return Vec::new();
    };
    rows.into_iter()
        .filter_map(|mut row| {
            let fields = row.as_object_mut()?;
            // A server with saved machines of its own lists their rows too, each with its
            // `machine`: `--all` asks every machine itself, so only the server's own rows count.
            if fields
                .get("machine")
                .is_some_and(|m| m.as_str() != Some(crate::machines::store::LOCAL))
            {
                return None;
            }
            fields.insert("machine".into(), Value::from(machine));
            Some(row)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_get_their_machine_and_other_answers_give_none() {
        let response = Response::Json(json!({"agents": [{"pane": "%3", "state": "blocked"}, 7]}));
        let rows = rows_of(response, "build");
        assert_eq!(
            rows,
            vec![json!({"pane": "%3", "state": "blocked", "machine": "build"})]
        );
        assert!(rows_of(Response::Ok, "build").is_empty());
        // A server's rows of its own saved machines are not its own.
        let linked = Response::Json(json!({"agents": [
            {"pane": "%1", "machine": "local"}, {"pane": "%2", "machine": "gpu"}
        ]}));
        assert_eq!(
            rows_of(linked, "local"),
            vec![json!({"pane": "%1", "machine": "local"})]
        );
        assert!(rows_of(Response::Json(json!({"agents": "x"})), "build").is_empty());
        let line = agents_cli::lines(&rows, true);
        assert!(line.starts_with("build        %3 "), "{line:?}");
    }
}
