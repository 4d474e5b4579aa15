//! `calyx agents --all`: this machine's agent rows and every enabled saved machine's, each
//! row with its `machine`. Every machine is asked at once, one bridged request each, within
//! [`probe::ATTEMPT`]; the table prints this machine's rows first and each machine's as they
//! come, so a slow or unreachable machine never holds the others back. An unreachable one is
//! named with its reason (`unreachable: NAME (reason)`), its rows absent, not waited for.

use std::io::Write as _;
use std::process::ExitCode;

use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::{probe, store, Machine};
use crate::agents_cli;
use crate::protocol::{Request, Response};

/// What one machine answered.
type Answer = (String, Result<Vec<Value>, probe::Failure>);

pub async fn agents(json: bool) -> ExitCode {
    if crate::remote::target().is_some() {
        eprintln!("calyx: --all asks this machine and its saved machines; it takes no --remote");
        return ExitCode::FAILURE;
    }
    let machines = match store::load() {
        Ok(machines) => machines,
        Err(e) => {
            eprintln!("calyx: {e:#}");
            return ExitCode::FAILURE;
        }
    };
    let (tx, mut rx) = mpsc::unbounded_channel::<Answer>();
    let mut asked = 0usize;
    for machine in machines.into_iter().filter(|m| m.enabled) {
        let tx = tx.clone();
        asked += 1;
        tokio::spawn(async move {
            let rows = remote_rows(&machine).await;
            let _ = tx.send((machine.name, rows));
        });
    }
    drop(tx);
    let local = local_rows().await;
    let mut out = std::io::stdout().lock();
    let mut all_rows = local;
    let mut failures: Vec<(String, probe::Failure)> = Vec::new();
    if !json {
        let _ = write!(out, "{}", agents_cli::header(true));
        let _ = write!(out, "{}", agents_cli::lines(&all_rows, true));
        let _ = out.flush();
    }
    for _ in 0..asked {
        let Some((name, answer)) = rx.recv().await else {
            break;
        };
        match answer {
            Ok(rows) => {
                if !json {
                    let _ = write!(out, "{}", agents_cli::lines(&rows, true));
                    let _ = out.flush();
                }
                all_rows.extend(rows);
            }
            Err(failure) => {
                if !json {
                    let _ = writeln!(out, "{}", failure.line(&name));
                    let _ = out.flush();
                }
                failures.push((name, failure));
            }
        }
    }
    if json {
        let unreachable: Vec<Value> = failures
            .iter()
            .map(|(name, failure)| match failure {
                probe::Failure::NeedsYou { reason, .. } => {
                    json!({"machine": name, "needs_you": true, "reason": reason})
                }
                probe::Failure::Unreachable(reason) => {
                    json!({"machine": name, "needs_you": false, "reason": reason})
                }
            })
            .collect();
        let answer = json!({"agents": all_rows, "unreachable": unreachable});
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&answer).unwrap_or_default()
        );
    }
    ExitCode::SUCCESS
}

/// This machine's rows; none when no server runs here.
async fn local_rows() -> Vec<Value> {
    let Ok(mut stream) = crate::client::connect_existing().await else {
        return Vec::new();
    };
    match crate::client::request(&mut stream, Request::Agents).await {
        Ok(response) => rows_of(response, store::LOCAL),
        Err(_) => Vec::new(),
    }
}

/// One machine's rows, through one bridged request; none when no server runs there (a
/// machine with no server has no agents, and `--all` starts no server anywhere).
async fn remote_rows(machine: &Machine) -> Result<Vec<Value>, probe::Failure> {
    let (mut link, _) = match probe::connect(machine, false).await {
        Ok(reached) => reached,
        Err(probe::Failure::Unreachable(reason)) if reason.contains(NO_SERVER) => {
            return Ok(Vec::new())
        }
        Err(failure) => return Err(failure),
    };
    let asked = tokio::time::timeout(
        probe::ATTEMPT,
        crate::client::request(&mut link.stream, Request::Agents),
    )
    .await;
    match asked {
        Ok(Ok(Response::Error(e))) => Err(probe::Failure::Unreachable(
            crate::remote::handshake::printable_line(&e),
        )),
        Ok(Ok(response)) => Ok(rows_of(response, &machine.name)),
        Ok(Err(e)) => Err(probe::classify(&machine.target, &format!("{e:#}"))),
        Err(_) => Err(probe::Failure::Unreachable(format!(
            "its server did not answer within {} s",
            probe::ATTEMPT.as_secs()
        ))),
    }
}

/// What the bridge says when no server runs there (`client::connect_existing`).
const NO_SERVER: &str = "no calyx server running";

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
            row.as_object_mut()?
                .insert("machine".into(), Value::from(machine));
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
        assert!(rows_of(Response::Json(json!({"agents": "x"})), "build").is_empty());
        let line = agents_cli::lines(&rows, true);
        assert!(line.starts_with("build        %3 "), "{line:?}");
    }
}
