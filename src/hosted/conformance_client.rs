//! The hidden `calyx mcp conformance-client URL`: the client side of the MCP conformance suite
//! (`conformance client --command "calyx mcp conformance-client"`). It runs calyx's real
//! connection, OAuth and call code against a throw-away HTTP entry `conf` whose secrets live
//! in memory, reading the scenario from `MCP_CONFORMANCE_SCENARIO` and its context from
//! `MCP_CONFORMANCE_CONTEXT`. The "browser" is `$BROWSER` (a script that GETs the
//! authorization URL and follows the suite's 302 into calyx's redirect listener). Form
//! elicitations are accepted with the schema's defaults.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::CallToolRequestParams;
use tokio_util::sync::CancellationToken;

use super::connection::{
    connect_http_with, ConnectError, Connected, ElicitationPolicy, HttpAuth, HttpLaunch,
    INIT_TIMEOUT,
};
use super::entry::ClientAuth;
use super::oauth::open::launch;
use super::oauth::{find_challenge, Challenge, OAuthEngine, OAuthSettings, PendingSignIn};
use super::secrets::MemoryStore;

/// The alias of the throw-away entry.
const ALIAS: &str = "conf";
/// The client ID metadata document the suite's `auth/basic-cimd` expects.
const CIMD_URL: &str = "https://conformance-test.local/client-metadata.json";
/// How long the stand-in browser may take (the suite gives a scenario 30 s).
const BROWSER_LIMIT: Duration = Duration::from_secs(20);
/// Sign-ins and reconnects one run may need (the engine stops at 3 authorization requests).
const MAX_ROUNDS: usize = 6;

/// Runs the scenario against `url`; `Err` is the sentence printed before exiting 1.
pub async fn run(url: &str) -> Result<(), String> {
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let context: serde_json::Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or_default();
    let settings = settings_for(&scenario, &context);
    let engine = OAuthEngine::new(ALIAS, url, settings, Arc::new(MemoryStore::default()))
        .await
        .map_err(|e| e.to_string())?;
    let auth = HttpAuth {
        oauth: Some(engine.clone()),
        elicitation: ElicitationPolicy::AcceptDefaults,
    };
    let launch = HttpLaunch {
        url: url.to_string(),
        legacy_sse: false,
        headers: Vec::new(),
    };
    let connected = connect(&engine, &launch, &auth).await?;
    let outcome = exercise(&engine, &connected, &scenario).await;
    connected.shutdown().await;
    outcome
}

/// The entry's OAuth settings for `scenario`: the pre-registered client of
/// `auth/pre-registration` (from the context), the metadata document of `auth/basic-cimd`.
fn settings_for(scenario: &str, context: &serde_json::Value) -> OAuthSettings {
    let text = |key: &str| {
        context
            .get(key)
            .and_then(|v| v.as_str())
            .map(str::to_string)
    };
    let mut settings = OAuthSettings::default();
    if let Some(client_id) = text("client_id").filter(|_| text("client_secret").is_some()) {
        settings.client_id = Some(client_id);
        settings.client_secret = text("client_secret");
        settings.client_auth = ClientAuth::ClientSecretBasic;
    }
    if scenario == "auth/basic-cimd" {
        settings.client_metadata_url = Some(CIMD_URL.into());
    }
    settings
}

/// Connects, signing in (or stepping up) whenever the server challenges.
async fn connect(
    engine: &OAuthEngine,
    launch: &HttpLaunch,
    auth: &HttpAuth,
) -> Result<Connected, String> {
    for _ in 0..MAX_ROUNDS {
        match connect_http_with(ALIAS, launch, auth, INIT_TIMEOUT).await {
            Ok(connected) => return Ok(connected),
            Err(ConnectError::NeedsSignIn { challenge }) => {
                let pending = engine
                    .begin(challenge.as_deref(), false)
                    .await
                    .map_err(|e| e.to_string())?;
                sign_in(engine, pending).await?;
            }
            Err(ConnectError::NeedsScope { challenge }) => {
                let pending = engine
                    .step_up(&challenge)
                    .await
                    .map_err(|e| e.to_string())?;
                sign_in(engine, pending).await?;
            }
            Err(other) => return Err(other.to_string()),
        }
    }
    Err("the server kept asking for sign-in".into())
}

/// Opens the page with `$BROWSER` and finishes with what comes back to the listener.
async fn sign_in(engine: &OAuthEngine, pending: PendingSignIn) -> Result<(), String> {
    let PendingSignIn {
        auth_url,
        state,
        issuer,
        listener,
    } = pending;
    let browser = std::env::var("BROWSER")
        .map_err(|_| "BROWSER is not set: the conformance client needs a stand-in browser")?;
    launch(&browser, &auth_url).map_err(|e| format!("cannot run {browser}: {e}"))?;
    let callback = listener
        .wait(
            &state,
            issuer.as_deref(),
            ALIAS,
            BROWSER_LIMIT,
            CancellationToken::new(),
        )
        .await
        .map_err(|e| e.to_string())?;
    engine.finish(&callback).await.map_err(|e| e.to_string())
}

/// What the scenario checks after connecting: `tools_call` wants `add_numbers`, the others
/// a call of their first tool (which is where step-up scenarios challenge); `initialize` only
/// the handshake.
async fn exercise(
    engine: &OAuthEngine,
    connected: &Connected,
    scenario: &str,
) -> Result<(), String> {
    if scenario == "initialize" {
        return Ok(());
    }
    let (name, arguments) = if scenario == "tools_call" {
        (
            "add_numbers".to_string(),
            serde_json::json!({"a": 5, "b": 3}),
        )
    } else {
        let first = connected
            .tools
            .published
            .first()
            .map(|(_, tool)| tool.name.to_string())
            .or_else(|| connected.tools.app_only.first().map(|t| t.name.to_string()));
        match first {
            Some(name) => (name, serde_json::json!({})),
            None => return Ok(()),
        }
    };
    let arguments = arguments.as_object().cloned().unwrap_or_default();
    for _ in 0..MAX_ROUNDS {
        let params = CallToolRequestParams::new(name.clone()).with_arguments(arguments.clone());
        let error = match connected.service.peer().call_tool(params).await {
            Ok(_) => return Ok(()),
            Err(error) => error,
        };
        let pending = match find_challenge(&error) {
            Some(Challenge::Unauthorized(challenge)) => engine.begin(Some(&challenge), false).await,
            Some(Challenge::InsufficientScope(challenge)) => engine.step_up(&challenge).await,
            None => return Err(format!("tools/call {name} failed: {error}")),
        }
        .map_err(|e| e.to_string())?;
        sign_in(engine, pending).await?;
    }
    Err(format!("tools/call {name} kept asking for sign-in"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenario_settings() {
        let pre = settings_for(
            "auth/pre-registration",
            &serde_json::json!({"client_id": "pre-registered-client", "client_secret": "pre-registered-secret"}),
        );
        assert_eq!(pre.client_id.as_deref(), Some("pre-registered-client"));
        assert_eq!(pre.client_secret.as_deref(), Some("pre-registered-secret"));
        assert_eq!(pre.client_auth, ClientAuth::ClientSecretBasic);
        let cimd = settings_for("auth/basic-cimd", &serde_json::Value::Null);
        assert_eq!(cimd.client_metadata_url.as_deref(), Some(CIMD_URL));
        assert!(cimd.client_id.is_none());
        let plain = settings_for("auth/metadata-default", &serde_json::Value::Null);
        assert!(plain.client_id.is_none() && plain.client_metadata_url.is_none());
    }
}
