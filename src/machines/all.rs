//! Asking this machine's server and every enabled saved machine the same request at once
//! (`calyx agents --all`, `calyx ls --all`): one bridged request per machine, each within
//! [`probe::ATTEMPT`], answers handed over as they arrive, so a slow or unreachable machine
//! never holds back this machine's answer or another machine's. `--all` starts no server
//! anywhere: a machine with none running answers nothing, and is not an error.

use std::time::Duration;

use tokio::sync::mpsc;

use super::{probe, store, Machine};
use crate::protocol::{Request, Response};

/// One machine's answer: None when no server runs there.
pub type Answer = Result<Option<Response>, probe::Failure>;

/// The answers of every saved machine, as they come.
pub struct Answers {
    rx: mpsc::UnboundedReceiver<(String, Answer)>,
    left: usize,
}

impl Answers {
    /// The next machine's name and answer; None once every machine answered.
    pub async fn next(&mut self) -> Option<(String, Answer)> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        self.rx.recv().await
    }
}

/// Refuses `--all` with `--remote`, then asks every enabled saved machine `request` (in the
/// background: the caller asks this machine meanwhile, with [`local`]).
pub fn ask_every(request: &Request) -> anyhow::Result<Answers> {
    if crate::remote::target().is_some() {
        anyhow::bail!("--all asks this machine and its saved machines; it takes no --remote");
    }
    let machines = store::load()?;
    let (tx, rx) = mpsc::unbounded_channel();
    let mut left = 0usize;
    for machine in machines.into_iter().filter(|m| m.enabled) {
        let tx = tx.clone();
        let request = request.clone();
        left += 1;
        tokio::spawn(async move {
            let answer = ask(&machine, request).await;
            let _ = tx.send((machine.name, answer));
        });
    }
    Ok(Answers { rx, left })
}

/// This machine's answer; None when no server runs here.
pub async fn local(request: Request) -> Option<Response> {
    let mut stream = crate::client::connect_existing().await.ok()?;
    crate::client::request(&mut stream, request).await.ok()
}

/// What the bridge says when no server runs there (`client::connect_existing`).
const NO_SERVER: &str = "no calyx server running";

/// One machine's answer, through one bridged request.
pub async fn ask(machine: &Machine, request: Request) -> Answer {
    match ask_within(machine, request, probe::ATTEMPT).await {
        Ok(Some(Response::Error(e))) => Err(probe::Failure::Unreachable(
            crate::remote::handshake::printable_line(&e),
        )),
        answer => answer,
    }
}

/// Asks `machine` one `request` over a connection of its own (never prompting, starting no
/// server there); its answer, error answers included, must come within `within` once
/// connected. None when no server runs there.
pub async fn ask_within(machine: &Machine, request: Request, within: Duration) -> Answer {
    let (mut link, _) = match probe::connect(machine, false).await {
        Ok(reached) => reached,
        Err(probe::Failure::Unreachable(reason)) if reason.contains(NO_SERVER) => return Ok(None),
        Err(failure) => return Err(failure),
    };
    let asked = tokio::time::timeout(within, crate::client::request(&mut link.stream, request));
    match asked.await {
        Ok(Ok(response)) => Ok(Some(response)),
        Ok(Err(e)) => Err(probe::classify(&machine.target, &format!("{e:#}"))),
        Err(_) => Err(probe::Failure::Unreachable(format!(
            "its server did not answer within {} s",
            within.as_secs()
        ))),
    }
}
