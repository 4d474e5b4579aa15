//! The sign-in errors a user must be able to act on, against a real loopback HTTP server
//! playing the MCP server and its authorization server.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::*;
use crate::hosted::secrets::MemoryStore;

/// Serves `routes` (path → JSON body; anything else 404) on 127.0.0.1; returns the origin.
async fn serve(
    routes: impl Fn(&str) -> HashMap<String, serde_json::Value> + Send + 'static,
) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let origin = format!(
        "http://127.0.0.1:{}",
        listener.local_addr().expect("addr").port()
    );
    let routes = routes(&origin);
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut buf = vec![0u8; 16 * 1024];
            let n = socket.read(&mut buf).await.unwrap_or(0);
            let head = String::from_utf8_lossy(&buf[..n]).to_string();
            let path = head
                .split_whitespace()
                .nth(1)
                .unwrap_or("/")
                .split('?')
                .next()
                .unwrap_or("/")
                .to_string();
            let (status, body) = match routes.get(&path) {
                Some(json) => ("200 OK", json.to_string()),
                None => ("404 Not Found", "{}".to_string()),
            };
            let response = format!(
                "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = socket.write_all(response.as_bytes()).await;
        }
    });
    origin
}

/// Protected resource metadata for `/mcp` naming the origin as its authorization server,
/// and that server's metadata with `extra` fields.
fn with_metadata(extra: serde_json::Value) -> impl Fn(&str) -> HashMap<String, serde_json::Value> {
    move |origin: &str| {
        let mut metadata = serde_json::json!({
            "issuer": origin,
            "authorization_endpoint": format!("{origin}/authorize"),
            "token_endpoint": format!("{origin}/token"),
            "response_types_supported": ["code"],
        });
        if let (Some(m), Some(e)) = (metadata.as_object_mut(), extra.as_object()) {
            m.extend(e.clone());
        }
        HashMap::from([
            (
                "/.well-known/oauth-protected-resource/mcp".to_string(),
                serde_json::json!({"resource": format!("{origin}/mcp"), "authorization_servers": [origin]}),
            ),
            (
                "/.well-known/oauth-authorization-server".to_string(),
                metadata,
            ),
        ])
    }
}

async fn engine(origin: &str) -> Arc<OAuthEngine> {
    OAuthEngine::new(
        "t",
        &format!("{origin}/mcp"),
        OAuthSettings::default(),
        Arc::new(MemoryStore::default()),
    )
    .await
    .expect("engine")
}

#[tokio::test]
async fn a_server_without_any_oauth_metadata_says_to_add_a_header() {
    let origin = serve(|_| HashMap::new()).await;
    let error = engine(&origin)
        .await
        .begin(None, false)
        .await
        .err()
        .expect("no metadata");
    assert_eq!(
        error.to_string(),
        "the server wants authorization but publishes no OAuth metadata; add an Authorization header in Edit"
    );
}

#[tokio::test]
async fn an_authorization_server_without_registration_asks_for_a_client_id() {
    let origin = serve(with_metadata(
        serde_json::json!({"code_challenge_methods_supported": ["S256"]}),
    ))
    .await;
    let error = engine(&origin)
        .await
        .begin(None, false)
        .await
        .err()
        .expect("no registration");
    assert_eq!(
        error.to_string(),
        "the authorization server does not support automatic client registration: enter the client ID of an OAuth app registered with it in Edit"
    );
}

#[tokio::test]
async fn an_authorization_server_without_pkce_is_refused() {
    let origin = serve(with_metadata(
        serde_json::json!({"registration_endpoint": "http://127.0.0.1:9/register"}),
    ))
    .await;
    let error = engine(&origin)
        .await
        .begin(None, false)
        .await
        .err()
        .expect("no PKCE");
    assert_eq!(
        error,
        OAuthError::NoPkce {
            issuer: origin.clone()
        }
    );
    assert!(
        error.to_string().starts_with(&format!(
            "the authorization server {origin} does not advertise PKCE"
        )),
        "{error}"
    );
}

#[tokio::test]
async fn a_configured_client_id_skips_registration_and_a_fourth_request_is_refused() {
    let origin = serve(with_metadata(
        serde_json::json!({"code_challenge_methods_supported": ["S256"]}),
    ))
    .await;
    let settings = OAuthSettings {
        client_id: Some("my-app".into()),
        ..Default::default()
    };
    let engine = OAuthEngine::new(
        "t",
        &format!("{origin}/mcp"),
        settings,
        Arc::new(MemoryStore::default()),
    )
    .await
    .expect("engine");
    for _ in 0..MAX_AUTHORIZATION_REQUESTS {
        let pending = engine.begin(None, false).await.expect("begins");
        assert!(
            pending.auth_url.contains("client_id=my-app"),
            "{}",
            pending.auth_url
        );
        assert!(pending.auth_url.contains("code_challenge_method=S256"));
        assert!(!pending.state.is_empty());
    }
    assert_eq!(
        engine.begin(None, false).await.err(),
        Some(OAuthError::TooManyRequests(MAX_AUTHORIZATION_REQUESTS))
    );
    engine.reset_requests();
    assert!(
        engine.begin(None, false).await.is_ok(),
        "a new login starts over"
    );
}
