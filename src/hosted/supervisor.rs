//! Keeping hosted servers connected. One task per enabled server: connect, publish its tools,
//! wait for the connection to end, and reconnect on the schedule of
//! [`state`](super::connection::state) (1, 2, 4 ... 60 s; five failures in a row give up). A
//! failure before the first `initialize` (command not found, exit before answering) goes
//! straight to `failed` and waits for the user. While a dropped server reconnects its tools stay
//! published for 60 s ([`super::held`]): calls wait up to 10 s for it; after that, or when it
//! fails, they are withdrawn. Every list a server publishes is remembered in the tools cache
//! ([`super::tools_cache`]). Every change of state is broadcast, for the overlay, `calyx mcp
//! list` and tests.

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
use super::connection::{
    connect_with, Asker, Connected, ElicitationPolicy, HttpAuth, HttpLaunch, Launch, INIT_TIMEOUT,
};
use super::entry::{ServerEntry, Transport};
use super::held::{reconnecting_sentence, HeldServer, WithdrawTimer, RETAIN_FOR};
use super::publish::{PublishedServer, Registry};
use super::secrets::{env_account, header_account, SecretStore};
use super::sign_in::SignIns;
use super::sign_in_prompt::{sign_in_sentence, SIGN_IN_WAIT};
use super::tools_cache::{CachedTools, ToolsCache};

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
    cache: Arc<ToolsCache>,
    sign_ins: Arc<SignIns>,
    /// The runtime connections run on: the one the supervisor was made in (the agent
    /// endpoint's), also when `start` is called from the owner's thread.
    runtime: Option<tokio::runtime::Handle>,
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
    cache: Arc<ToolsCache>,
    sign_ins: Arc<SignIns>,
}

impl Shared {
    fn facts(&self, alias: &str, change: impl FnOnce(&mut Facts)) {
        let mut facts = self.facts.lock().unwrap_or_else(|e| e.into_inner());
        change(facts.entry(alias.to_string()).or_default());
    }

    fn settle_after_sign_in(&self, alias: &str, signed_in: bool) {
        let state = match self
            .registry
            .get(alias)
            .filter(|s| !s.peer.is_transport_closed())
        {
            Some(live) => ServerState::Ready {
                tools: live.tools.published.len(),
                with_ui: live.tools.with_ui(),
            },
            None if signed_in => ServerState::Connecting,
            None => ServerState::SignInRequired,
        };
        self.set(alias, state);
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

    /// Publishes `server` and remembers its list in the tools cache (the file is written on a
    /// blocking thread, and only when the list changed).
    fn publish(&self, server: PublishedServer) {
        let alias = server.alias.clone();
        let cached = CachedTools::of(&server.name, server.instructions.as_deref(), &server.tools);
        self.registry.insert(server);
        if self.cache.note(&alias, cached) {
            let cache = self.cache.clone();
            tokio::task::spawn_blocking(move || cache.save());
        }
    }

    /// Keeps `entry`'s tools published while it needs sign-in: the live ones if it was ready,
    /// else the ones it published last (this run or an earlier one, from the tools cache). A
    /// call to one raises the sign-in prompt and waits up to 120 s for the sign-in
    /// ([`super::sign_in_prompt`]), then gets the sign-in sentence as its `isError` text. False
    /// when there is nothing to publish. The tools stay until the server is ready (its live
    /// tools replace them) or stopped.
    fn hold_for_sign_in(&self, entry: &ServerEntry) -> bool {
        if self.registry.hold_live(&entry.alias, |server| {
            server.held_needing_sign_in(&entry.name)
        }) {
            return true;
        }
        let Some((cached, tools)) = self.cache.cached_tools_for(&entry.alias) else {
            return false;
        };
        self.registry.hold(HeldServer {
            alias: entry.alias.clone(),
            name: entry.name.clone(),
            tools,
            instructions: cached.instructions,
            unavailable: sign_in_sentence(&entry.name, &entry.alias),
            wait: SIGN_IN_WAIT,
            sign_in: true,
        });
        true
    }
}

impl Supervisor {
    /// A supervisor publishing into `registry`, reading secret values from `secrets`.
    pub fn new(registry: Registry, secrets: Arc<dyn SecretStore>) -> Self {
        let prompts = registry.sign_in_prompts().clone();
        let supervisor = Supervisor {
            registry,
            states: Arc::default(),
            process_groups: Arc::default(),
            tasks: Mutex::new(HashMap::new()),
            changes: broadcast::channel(CHANGES_BUFFERED).0,
            facts: Arc::default(),
            cache: Arc::new(ToolsCache::in_memory()),
            sign_ins: Arc::new(SignIns::new(secrets.clone()).with_prompts(prompts.clone())),
            secrets,
            runtime: tokio::runtime::Handle::try_current().ok(),
        };
        // A call to a ready server met a challenge: the next sign-in answers it, and the row
        // says so until then.
        let shared = supervisor.shared();
        prompts.set_challenge_hook(Arc::new(move |alias, challenge| {
            shared.sign_ins.note_challenge(alias, challenge);
            shared.set(alias, ServerState::SignInRequired);
        }));
        supervisor
    }

    /// The state of `alias` once a sign-in ended (`signed_in`) or was given up: `ready` again
    /// when its connection is still up (a step-up), else `connecting` after a sign-in and
    /// `sign-in required` without one.
    pub fn settle_after_sign_in(&self, alias: &str, signed_in: bool) {
        self.shared().settle_after_sign_in(alias, signed_in);
    }

    /// [`Supervisor::settle_after_sign_in`] for tasks that outlive the call (a sign-in's
    /// listener).
    pub fn settler(&self) -> impl Fn(&str, bool) + Send + Sync + 'static {
        let shared = self.shared();
        move |alias, signed_in| shared.settle_after_sign_in(alias, signed_in)
    }

    /// This supervisor remembering published lists in `cache` (the server's is the file
    /// [`ToolsCache::default_path`]; without this, a memory-only cache).
    pub fn with_tools_cache(mut self, cache: ToolsCache) -> Self {
        self.cache = Arc::new(cache);
        self
    }

    /// The last tool list `alias` published (this run or, from the tools cache file, an
    /// earlier one) as the registry would publish it; `None` when it never published one.
    /// With [`Registry::hold`] this keeps a not-ready server's tools visible to agents.
    pub fn cached_tools_for(
        &self,
        alias: &str,
    ) -> Option<(CachedTools, super::connection::filter::Classified)> {
        self.cache.cached_tools_for(alias)
    }

    fn shared(&self) -> Shared {
        Shared {
            registry: self.registry.clone(),
            states: self.states.clone(),
            process_groups: self.process_groups.clone(),
            changes: self.changes.clone(),
            facts: self.facts.clone(),
            cache: self.cache.clone(),
            sign_ins: self.sign_ins.clone(),
        }
    }

    /// Drops the cached tool list of a server removed from the list. Blocking (the tools
    /// cache file): call it from a blocking thread.
    pub fn forget_cached_tools(&self, alias: &str) {
        self.cache.forget(alias);
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

    /// Stops `alias` and forgets it (a removed server, or hosting switched off): no state, no
    /// facts.
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
    /// Runs it on the supervisor's runtime; one made outside any must be started inside one.
    pub fn start(&self, entry: ServerEntry) {
        self.stop(&entry.alias);
        let shared = self.shared();
        if !entry.enabled {
            shared.set(&entry.alias, ServerState::Disabled);
            return;
        }
        let secrets = self.secrets.clone();
        let alias = entry.alias.clone();
        let connection = async move {
            shared.set(&entry.alias, ServerState::Connecting);
            match launch_of(secrets, &entry).await {
                Ok(launch) => {
                    let mut auth = shared.sign_ins.auth_for(&entry).await;
                    // The user answers this server's elicitations in the panel.
                    auth.elicitation = ElicitationPolicy::Ask(Asker {
                        queue: shared.registry.elicitations().clone(),
                        alias: entry.alias.clone(),
                        name: entry.name.clone(),
                    });
                    run(shared, entry, launch, auth).await
                }
                Err(sentence) => shared.set(&entry.alias, ServerState::Failed { sentence }),
            }
        };
        let task = match &self.runtime {
            Some(runtime) => runtime.spawn(connection),
            None => tokio::spawn(connection),
        };
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
        // Its questions have nobody to answer them now (the panel's `Done` ones too).
        self.registry.elicitations().forget(alias);
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
    // While reconnecting: withdraws the held tools after 60 s unless dropped first.
    let mut retention: Option<WithdrawTimer> = None;
    loop {
        let failure = match connect_with(alias, &launch, &auth, INIT_TIMEOUT).await {
            Ok(connected) => {
                ever_ready = true;
                reconnects.succeeded();
                // The live tools replace the held ones: no withdrawal.
                drop(retention.take());
                let since = Instant::now();
                serve_until_dropped(&shared, &entry, connected).await;
                reconnects.connected(since.elapsed());
                retention.replace(shared.registry.withdraw_held_after(alias, RETAIN_FOR));
                "the server's connection ended".to_string()
            }
            // Not a failure: wait for the user to sign in, then connect again.
            Err(error) if error.needs_sign_in() => {
                // Its tools stay published (no 60 s withdrawal): a call raises the prompt.
                drop(retention.take());
                shared.hold_for_sign_in(&entry);
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
                shared
                    .registry
                    .set_held_sentence(alias, reconnecting_sentence(alias, &sentence));
                sentence
            }
        };
        match reconnects.after_failure() {
            Some((state, wait)) => {
                shared.set(alias, state);
                tokio::time::sleep(wait).await;
            }
            None => {
                // A failed server publishes nothing.
                drop(retention.take());
                shared.registry.remove(alias);
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
    shared.publish(PublishedServer {
        alias: alias.to_string(),
        name: entry.name.clone(),
        peer: service.peer().clone(),
        tools,
        instructions,
        progress: service.service().progress(),
        resources: service.service().resources(),
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
    let resources_told = AbortOnDrop(tokio::spawn(tell_resource_changes(
        shared.clone(),
        alias.to_string(),
        service.service().resources_changed(),
    )));
    // Ends when the transport closes: the process exited or closed its stdout.
    let _ = service.waiting().await;
    drop(relister);
    drop(resources_told);
    // Agents keep seeing the tools while the server reconnects (the caller withdraws them
    // after 60 s or when it gives up).
    shared.registry.hold_live(alias, |server| {
        server.held_while_reconnecting("the server's connection ended")
    });
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
/// Tells the server's views each `notifications/resources/list_changed` it sends.
async fn tell_resource_changes(shared: Shared, alias: String, changed: Arc<tokio::sync::Notify>) {
    loop {
        changed.notified().await;
        shared.registry.upstream_list_changed(&alias, "resources");
    }
}

async fn relist_on_change(
    shared: Shared,
    alias: String,
    changed: Arc<tokio::sync::Notify>,
    task_required: TaskRequired,
) {
    loop {
        changed.notified().await;
        // The server's views hear it whatever agents see (app-only tools change too).
        shared.registry.upstream_list_changed(&alias, "tools");
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
        shared.publish(PublishedServer {
            alias: alias.clone(),
            name: current.name.clone(),
            peer: current.peer.clone(),
            tools,
            instructions: current.instructions.clone(),
            progress: current.progress.clone(),
            resources: current.resources.clone(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hosted::connection::filter::classify;
    use crate::hosted::secrets::FileStore;
    use std::time::Duration;

    #[test]
    fn a_server_needing_sign_in_keeps_its_cached_tools_held_for_the_prompt() {
        let dir = tempfile::tempdir().expect("tempdir");
        let registry = Registry::default();
        let supervisor = Supervisor::new(
            registry.clone(),
            Arc::new(FileStore::new(dir.path().join("s.json"))),
        );
        let shared = supervisor.shared();
        let entry = ServerEntry {
            alias: "linear".into(),
            name: "Linear".into(),
            enabled: true,
            transport: Transport::Http(crate::hosted::entry::HttpTarget {
                url: "http://127.0.0.1:9/mcp".into(),
                legacy_sse: false,
                headers: Vec::new(),
                oauth: Default::default(),
            }),
            note: None,
        };
        assert!(!shared.hold_for_sign_in(&entry), "nothing cached");
        assert!(supervisor.cached_tools_for("linear").is_none());

        let tool: rmcp::model::Tool = serde_json::from_value(
            serde_json::json!({"name": "list_issues", "inputSchema": {"type": "object"}}),
        )
        .expect("a tool");
        let tools = classify("linear", vec![tool], &Default::default());
        supervisor
            .cache
            .remember("linear", CachedTools::of("Old name", None, &tools));
        assert!(shared.hold_for_sign_in(&entry));
        let names: Vec<String> = registry
            .tools()
            .iter()
            .map(|t| t.name.to_string())
            .collect();
        assert_eq!(names, ["linear-list_issues"]);
        let held = registry.held("linear").expect("held");
        assert_eq!(
            held.unavailable,
            "`Linear` requires sign-in: run `calyx mcp login linear` or sign in from prefix M"
        );
        assert_eq!(held.wait, Duration::from_secs(120));
        assert!(held.sign_in);
        assert!(registry.get("linear").is_none(), "not callable until ready");
    }
}
