//! Keeping hosted servers connected. One task per enabled server: connect, publish its tools,
//! wait for the connection to end, withdraw them, and reconnect on the schedule of
//! [`state`](super::connection::state) (1, 2, 4 ... 60 s; five failures in a row give up). A
//! failure before the first `initialize` (command not found, exit before answering) goes
//! straight to `failed` and waits for the user. Every change of state is broadcast, for the
//! overlay, `calyx mcp list` and tests.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::broadcast;
use tokio::task::JoinHandle;

use super::connection::filter::{classify, Classified};
use super::connection::raw_tap::TaskRequired;
use super::connection::ring::StderrRing;
use super::connection::spawn::StdioLaunch;
use super::connection::state::{Reconnects, ServerState};
use super::connection::{connect_with, Connected, HttpAuth, HttpLaunch, Launch, INIT_TIMEOUT};
use super::entry::{ServerEntry, Transport};
use super::publish::{PublishedServer, Registry};
use super::secrets::{env_account, header_account, SecretStore};
use super::sign_in::SignIns;

/// State changes kept for subscribers that fall behind.
const CHANGES_BUFFERED: usize = 256;

/// The connections of every hosted server.
pub struct Supervisor {
    registry: Registry,
    secrets: Arc<dyn SecretStore>,
    states: Arc<Mutex<BTreeMap<String, ServerState>>>,
    process_groups: Arc<Mutex<HashMap<String, i32>>>,
    tasks: Mutex<HashMap<String, JoinHandle<()>>>,
    changes: broadcast::Sender<(String, ServerState)>,
    facts: Arc<Mutex<HashMap<String, Facts>>>,
    sign_ins: Arc<SignIns>,
}

/// What `calyx mcp details` shows of a server beyond its tools: what its last connection
/// negotiated, its last failure and its stderr.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    pub protocol_version: Option<String>,
    pub server_name: Option<String>,
    pub server_version: Option<String>,
    pub last_failure: Option<String>,
    /// The stderr of the last process (stdio servers).
    pub stderr: Option<StderrRing>,
}

/// What one server's task shares with the supervisor.
#[derive(Clone)]
struct Shared {
    registry: Registry,
    states: Arc<Mutex<BTreeMap<String, ServerState>>>,
    process_groups: Arc<Mutex<HashMap<String, i32>>>,
    changes: broadcast::Sender<(String, ServerState)>,
    facts: Arc<Mutex<HashMap<String, Facts>>>,
    sign_ins: Arc<SignIns>,
}

impl Shared {
    fn facts(&self, alias: &str, change: impl FnOnce(&mut Facts)) {
        let mut facts = self.facts.lock().unwrap_or_else(|e| e.into_inner());
        change(facts.entry(alias.to_string()).or_default());
    }

    fn set(&self, alias: &str, state: ServerState) {
        if let ServerState::Failed { sentence } = &state {
            let sentence = sentence.clone();
            self.facts(alias, |f| f.last_failure = Some(sentence));
        }
        let mut states = self.states.lock().unwrap_or_else(|e| e.into_inner());
        states.insert(alias.to_string(), state.clone());
        // Nobody listening is fine.
        let _ = self.changes.send((alias.to_string(), state));
    }
}

impl Supervisor {
    /// A supervisor publishing into `registry`, reading secret values from `secrets`.
    pub fn new(registry: Registry, secrets: Arc<dyn SecretStore>) -> Self {
        Supervisor {
            registry,
            states: Arc::default(),
            process_groups: Arc::default(),
            tasks: Mutex::new(HashMap::new()),
            changes: broadcast::channel(CHANGES_BUFFERED).0,
            facts: Arc::default(),
            sign_ins: Arc::new(SignIns::new(secrets.clone())),
            secrets,
        }
    }

    fn shared(&self) -> Shared {
        Shared {
            registry: self.registry.clone(),
            states: self.states.clone(),
            process_groups: self.process_groups.clone(),
            changes: self.changes.clone(),
            facts: self.facts.clone(),
            sign_ins: self.sign_ins.clone(),
        }
    }

    /// The OAuth side of the HTTP servers (sign-in, paste, sign-out, the prompt hook).
    pub fn sign_ins(&self) -> &Arc<SignIns> {
        &self.sign_ins
    }

    /// A setter of states for tasks that outlive the call (a sign-in's listener).
    pub fn state_setter(&self) -> impl Fn(&str, ServerState) + Send + Sync + 'static {
        let shared = self.shared();
        move |alias, state| shared.set(alias, state)
    }

    /// Sets the state of `alias` and tells subscribers (sign-in steps driven from outside).
    pub fn set_state(&self, alias: &str, state: ServerState) {
        self.shared().set(alias, state);
    }

    /// What the last connection of `alias` negotiated, its last failure and stderr.
    pub fn facts(&self, alias: &str) -> Facts {
        let facts = self.facts.lock().unwrap_or_else(|e| e.into_inner());
        facts.get(alias).cloned().unwrap_or_default()
    }

    /// Stops `alias` and forgets it (a removed server): no state, no facts.
    pub fn forget(&self, alias: &str) {
        self.stop(alias);
        self.sign_ins.forget(alias);
        self.states
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(alias);
        self.facts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(alias);
    }

    /// Every state change from now on, as `(alias, state)`.
    pub fn subscribe(&self) -> broadcast::Receiver<(String, ServerState)> {
        self.changes.subscribe()
    }

    /// The current state of `alias`.
    pub fn state(&self, alias: &str) -> Option<ServerState> {
        let states = self.states.lock().unwrap_or_else(|e| e.into_inner());
        states.get(alias).cloned()
    }

    /// The process group of a connected stdio server (tests, and "kill" in Details later).
    pub fn process_group(&self, alias: &str) -> Option<i32> {
        let groups = self
            .process_groups
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        groups.get(alias).copied()
    }

    /// Starts (or restarts) the connection of `entry`; a disabled entry is only recorded.
    /// Must be called inside a tokio runtime.
    pub fn start(&self, entry: ServerEntry) {
        self.stop(&entry.alias);
        let shared = self.shared();
        if !entry.enabled {
            shared.set(&entry.alias, ServerState::Disabled);
            return;
        }
        let secrets = self.secrets.clone();
        let alias = entry.alias.clone();
        let task = tokio::spawn(async move {
            shared.set(&entry.alias, ServerState::Connecting);
            match launch_of(secrets, &entry).await {
                Ok(launch) => {
                    let auth = shared.sign_ins.auth_for(&entry).await;
                    run(shared, entry, launch, auth).await
                }
                Err(sentence) => shared.set(&entry.alias, ServerState::Failed { sentence }),
            }
        });
        let mut tasks = self.tasks.lock().unwrap_or_else(|e| e.into_inner());
        tasks.insert(alias, task);
    }

    /// Stops the connection of `alias` (its process group is killed) and withdraws its tools.
    pub fn stop(&self, alias: &str) {
        let task = {
            let mut tasks = self.tasks.lock().unwrap_or_else(|e| e.into_inner());
            tasks.remove(alias)
        };
        if let Some(task) = task {
            // Aborting drops the connection, whose process kills its group on drop.
            task.abort();
        }
        self.registry.remove(alias);
        let mut groups = self
            .process_groups
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        groups.remove(alias);
    }
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        let tasks = self.tasks.get_mut().unwrap_or_else(|e| e.into_inner());
        for (_, task) in tasks.drain() {
            task.abort();
        }
    }
}

/// How to reach `entry`, with its configured variables or headers read from the secret store
/// on a blocking thread (the keyring may take 3 s).
async fn launch_of(secrets: Arc<dyn SecretStore>, entry: &ServerEntry) -> Result<Launch, String> {
    let (kind, names, account): (_, _, fn(&str, &str) -> String) = match &entry.transport {
        Transport::Stdio(stdio) => ("", stdio.env.clone(), env_account),
        Transport::Http(http) => ("header ", http.headers.clone(), header_account),
    };
    let alias = entry.alias.clone();
    let values = tokio::task::spawn_blocking(move || {
        names
            .into_iter()
            .map(|name| {
                match secrets.get(&account(&alias, &name)) {
                    Ok(Some(value)) => Ok((name, value)),
                    Ok(None) => Err(format!(
                        "`{alias}` needs {kind}{name}, which has no stored value: set it with `calyx mcp edit {alias}`"
                    )),
                    Err(e) => Err(format!("`{alias}` needs {kind}{name}: {e}")),
                }
            })
            .collect::<Result<Vec<_>, String>>()
    })
    .await
    .unwrap_or_else(|e| Err(format!("reading the secrets failed: {e}")))?;
    Ok(match &entry.transport {
        Transport::Stdio(stdio) => Launch::Stdio(StdioLaunch {
            command: stdio.command.clone(),
            args: stdio.args.clone(),
            cwd: stdio.cwd.clone(),
            env: values,
        }),
        Transport::Http(http) => Launch::Http(HttpLaunch {
            url: http.url.clone(),
            legacy_sse: http.legacy_sse,
            headers: values,
        }),
    })
}

/// One server's connection loop.
async fn run(shared: Shared, entry: ServerEntry, launch: Launch, auth: HttpAuth) {
    let alias = entry.alias.as_str();
    let mut reconnects = Reconnects::default();
    let mut ever_ready = false;
    loop {
        let failure = match connect_with(alias, &launch, &auth, INIT_TIMEOUT).await {
            Ok(connected) => {
                ever_ready = true;
                reconnects.succeeded();
                let since = Instant::now();
                serve_until_dropped(&shared, &entry, connected).await;
                reconnects.connected(since.elapsed());
                "the server's connection ended".to_string()
            }
            // Not a failure: wait for the user to sign in, then connect again.
            Err(error) if error.needs_sign_in() => {
                shared.set(alias, ServerState::SignInRequired);
                shared.sign_ins.wait_for_sign_in(&entry, &error).await;
                shared.set(alias, ServerState::Connecting);
                continue;
            }
            Err(error) if !ever_ready => {
                shared.set(
                    alias,
                    ServerState::Failed {
                        sentence: error.to_string(),
                    },
                );
                return;
            }
            Err(error) => {
                let sentence = error.to_string();
                shared.facts(alias, |f| f.last_failure = Some(sentence.clone()));
                sentence
            }
        };
        match reconnects.after_failure() {
            Some((state, wait)) => {
                shared.set(alias, state);
                tokio::time::sleep(wait).await;
            }
            None => {
                shared.set(
                    alias,
                    ServerState::Failed {
                        sentence: format!("gave up reconnecting after 5 attempts: {failure}"),
                    },
                );
                return;
            }
        }
    }
}

/// Publishes a ready connection until it ends, then withdraws it.
async fn serve_until_dropped(shared: &Shared, entry: &ServerEntry, connected: Connected) {
    let alias = entry.alias.as_str();
    let Connected {
        service,
        process,
        tools,
        instructions,
        protocol_version,
        server_name,
        server_version,
        task_required,
    } = connected;
    shared.facts(alias, |f| {
        f.protocol_version = Some(protocol_version);
        f.server_name = server_name;
        f.server_version = server_version;
        f.stderr = process.as_ref().map(|p| p.stderr.clone());
    });
    let ready = ServerState::Ready {
        tools: tools.published.len(),
        with_ui: tools.with_ui(),
    };
    if let Some(pgid) = process.as_ref().and_then(|p| p.pgid()) {
        let mut groups = shared
            .process_groups
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        groups.insert(alias.to_string(), pgid);
    }
    shared.registry.insert(PublishedServer {
        alias: alias.to_string(),
        name: entry.name.clone(),
        peer: service.peer().clone(),
        tools,
        instructions,
        progress: service.service().progress(),
    });
    // Ready is said once the tools are published (and the process group known), so whoever
    // hears it can list and call them at once.
    shared.set(alias, ready);
    // Aborted with this connection, also when the supervisor aborts this task (stop).
    let relister = AbortOnDrop(tokio::spawn(relist_on_change(
        shared.clone(),
        alias.to_string(),
        service.service().tools_changed(),
        task_required,
    )));
    // Ends when the transport closes: the process exited or closed its stdout.
    let _ = service.waiting().await;
    drop(relister);
    shared.registry.remove(alias);
    {
        let mut groups = shared
            .process_groups
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        groups.remove(alias);
    }
    if let Some(process) = process {
        process.shutdown().await;
    }
}

/// Re-lists a ready server each time it says `notifications/tools/list_changed`, and publishes
/// the new list (which tells the agents, see `route`). A failed re-list keeps the old tools.
async fn relist_on_change(
    shared: Shared,
    alias: String,
    changed: Arc<tokio::sync::Notify>,
    task_required: TaskRequired,
) {
    loop {
        changed.notified().await;
        let Some(current) = shared.registry.get(&alias) else {
            return;
        };
        let tools = match current.peer.list_all_tools().await {
            Ok(tools) => tools,
            Err(e) => {
                tracing::warn!("hosted MCP: re-listing `{alias}` failed: {e}");
                continue;
            }
        };
        let required = task_required
            .lock()
            .map(|set| set.clone())
            .unwrap_or_default();
        let tools = classify(&alias, tools, &required);
        if same_tools(&tools, &current.tools) {
            // Nothing agents see changed: no new list, no announcement.
            continue;
        }
        let ready = ServerState::Ready {
            tools: tools.published.len(),
            with_ui: tools.with_ui(),
        };
        shared.registry.insert(PublishedServer {
            alias: alias.clone(),
            name: current.name.clone(),
            peer: current.peer.clone(),
            tools,
            instructions: current.instructions.clone(),
            progress: current.progress.clone(),
        });
        shared.set(&alias, ready);
    }
}

/// A task that ends when this is dropped.
struct AbortOnDrop(JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Whether two classifications publish, exclude and keep for views the same tools.
fn same_tools(a: &Classified, b: &Classified) -> bool {
    let json = |c: &Classified| serde_json::to_string(&(&c.published, &c.app_only)).ok();
    a.excluded == b.excluded && json(a).is_some() && json(a) == json(b)
}
