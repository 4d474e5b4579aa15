//! `calyx machine add|list|remove|test`.

use std::process::ExitCode;
use std::time::Duration;

use super::{probe, store, Machine};
use crate::cli::MachineCommand;
use crate::protocol::Request;

/// Round trips `machine test` times; it reports their median.
const ROUND_TRIPS: usize = 5;

pub async fn run(command: MachineCommand) -> ExitCode {
    let result = match command {
        MachineCommand::Add { name, target } => add(&name, &target).await,
        MachineCommand::List { json } => list(json).await,
        MachineCommand::Remove { name } => remove(&name).await,
        MachineCommand::Test { name } => test(&name).await,
    };
    result.unwrap_or_else(|e| {
        eprintln!("calyx: {e:#}");
        ExitCode::FAILURE
    })
}

async fn add(name: &str, target: &str) -> anyhow::Result<ExitCode> {
    let machine = store::add(&store::file(), name, target)?;
    tell_server().await;
    println!(
        "saved {} ({}); `calyx machine test {}` checks it",
        machine.name, machine.target, machine.name
    );
    Ok(ExitCode::SUCCESS)
}

async fn remove(name: &str) -> anyhow::Result<ExitCode> {
    if store::remove(&store::file(), name)? {
        tell_server().await;
        return Ok(ExitCode::SUCCESS);
    }
    anyhow::bail!("no saved machine named {}", printable(name));
}

async fn list(json: bool) -> anyhow::Result<ExitCode> {
    let machines = store::load()?;
    let links = link_states().await;
    if json {
        let rows: Vec<serde_json::Value> = machines
            .iter()
            .map(|m| {
                let mut row =
                    serde_json::json!({"name": m.name, "target": m.target, "enabled": m.enabled});
                if let (Some((word, line)), Some(fields)) =
                    (links.get(&m.name), row.as_object_mut())
                {
                    fields.insert("link".into(), serde_json::json!(word));
                    fields.insert("link_line".into(), serde_json::json!(line));
                }
                row
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(ExitCode::SUCCESS);
    }
    if machines.is_empty() {
        println!("no saved machines (`calyx machine add NAME TARGET` saves one)");
        return Ok(ExitCode::SUCCESS);
    }
    let width = machines
        .iter()
        .map(|m| m.name.len())
        .max()
        .unwrap_or(4)
        .max(4);
    println!("{:<width$}  TARGET", "NAME");
    for m in &machines {
        let off = if m.enabled { "" } else { "  (disabled)" };
        // The running server's link to it: `live`, `connecting`, or why not.
        let link = match links.get(&m.name) {
            Some((word, _)) if word == "live" || word == "connecting" => format!("  {word}"),
            Some((_, line)) => format!("  {}", printable(line)),
            None => String::new(),
        };
        println!("{:<width$}  {}{off}{link}", m.name, printable(&m.target));
    }
    Ok(ExitCode::SUCCESS)
}

/// The running server's links, by machine name: (state word, line); none without a server
/// (none is started).
async fn link_states() -> std::collections::HashMap<String, (String, String)> {
    let mut out = std::collections::HashMap::new();
    let Ok(mut stream) = crate::client::connect_existing().await else {
        return out;
    };
    let Ok(crate::protocol::Response::Json(answer)) =
        crate::client::request(&mut stream, Request::Machines { reload: false }).await
    else {
        return out;
    };
    for m in answer["machines"].as_array().into_iter().flatten() {
        let field = |k: &str| m[k].as_str().unwrap_or_default().to_string();
        out.insert(field("name"), (field("state"), field("line")));
    }
    out
}

/// Tells this machine's server (when one runs; none is started) to follow the file: its
/// links to removed machines stop, new ones start.
async fn tell_server() {
    if let Ok(mut stream) = crate::client::connect_existing().await {
        let _ = crate::client::request(&mut stream, Request::Machines { reload: true }).await;
    }
}

/// The saved machine called `name`.
pub fn find(name: &str) -> anyhow::Result<Machine> {
    store::load()?
        .into_iter()
        .find(|m| m.name == name)
        .ok_or_else(|| {
            anyhow::anyhow!(
                "no saved machine named {} (`calyx machine list` shows them)",
                printable(name)
            )
        })
}

/// Connects (starting the remote server as `calyx --remote` does), then times a few
/// requests' round trips through ssh and the bridge.
async fn test(name: &str) -> anyhow::Result<ExitCode> {
    let machine = find(name)?;
    let (mut link, connect) = match probe::connect(&machine, true).await {
        Ok(reached) => reached,
        Err(failure) => {
            eprintln!("{}", failure.line(&machine.name));
            return Ok(ExitCode::FAILURE);
        }
    };
    let mut trips = Vec::with_capacity(ROUND_TRIPS);
    for _ in 0..ROUND_TRIPS {
        let began = std::time::Instant::now();
        let asked = tokio::time::timeout(
            probe::ATTEMPT,
            crate::client::request(&mut link.stream, Request::ListSessions),
        )
        .await;
        match asked {
            Ok(Ok(_)) => trips.push(began.elapsed()),
            Ok(Err(e)) => {
                let reason = crate::remote::handshake::printable_line(&format!("{e:#}"));
                eprintln!("unreachable: {} ({reason})", machine.name);
                return Ok(ExitCode::FAILURE);
            }
            Err(_) => {
                eprintln!(
                    "unreachable: {} (the remote server did not answer within {} s)",
                    machine.name,
                    probe::ATTEMPT.as_secs()
                );
                return Ok(ExitCode::FAILURE);
            }
        }
    }
    trips.sort();
    let median = trips.get(trips.len() / 2).copied().unwrap_or_default();
    println!(
        "ok: {} ({}): calyx {}, round trip {} (median of {ROUND_TRIPS}), connected in {}",
        machine.name,
        printable(&machine.target),
        link.peer.version,
        millis(median),
        millis(connect)
    );
    Ok(ExitCode::SUCCESS)
}

fn millis(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn printable(text: &str) -> String {
    crate::remote::handshake::printable_line(text)
}
