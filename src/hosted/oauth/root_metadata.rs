//! The authorization server metadata of a 2025-03-26 server. That revision had no protected
//! resource metadata: the MCP server's origin is the authorization server and publishes its
//! metadata at `/.well-known/oauth-authorization-server`, often with an `issuer` that names a
//! path under it (`https://host/oauth`), which the RFC 8414 issuer check of newer revisions
//! (rmcp's) refuses. calyx accepts such a document only when both its authorization and token
//! endpoints are on the server's own origin, so it trusts nothing the server itself could not
//! already serve there (the conformance suite's `auth/2025-03-26-oauth-metadata-backcompat`).

use rmcp::transport::auth::AuthorizationMetadata;
use url::Url;

use crate::hosted::connection::http_client::http_client;

/// The origin's root metadata, when it is usable as described above.
pub async fn root_metadata(server: &Url) -> Option<AuthorizationMetadata> {
    let mut well_known = server.clone();
    well_known.set_path("/.well-known/oauth-authorization-server");
    well_known.set_query(None);
    well_known.set_fragment(None);
    let response = http_client().ok()?.get(well_known).send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    let metadata: AuthorizationMetadata = response.json().await.ok()?;
    same_origin_endpoints(server, &metadata).then_some(metadata)
}

/// Whether both endpoints are on `server`'s origin.
fn same_origin_endpoints(server: &Url, metadata: &AuthorizationMetadata) -> bool {
    let origin = server.origin();
    [&metadata.authorization_endpoint, &metadata.token_endpoint]
        .iter()
        .all(|endpoint| Url::parse(endpoint).is_ok_and(|u| u.origin() == origin))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata(authorize: &str, token: &str) -> AuthorizationMetadata {
        serde_json::from_value(serde_json::json!({
            "issuer": "http://127.0.0.1:9/oauth",
            "authorization_endpoint": authorize,
            "token_endpoint": token
        }))
        .expect("metadata")
    }

    #[test]
    fn only_endpoints_on_the_servers_origin_are_trusted() {
        let server = Url::parse("http://127.0.0.1:9/mcp").expect("url");
        assert!(same_origin_endpoints(
            &server,
            &metadata(
                "http://127.0.0.1:9/oauth/authorize",
                "http://127.0.0.1:9/oauth/token"
            )
        ));
        assert!(!same_origin_endpoints(
            &server,
            &metadata(
                "https://evil.example/authorize",
                "http://127.0.0.1:9/oauth/token"
            )
        ));
        assert!(!same_origin_endpoints(
            &server,
            &metadata("http://127.0.0.1:9/authorize", "http://127.0.0.1:10/token")
        ));
    }
}
