//! Who calyx is to an authorization server, in the order: the client ID the user
//! entered (with its secret, and the client authentication forced by narrowing the AS's
//! `token_endpoint_auth_methods_supported` before rmcp picks basic or post); a client ID
//! metadata document when `[mcp] client_metadata_url` is set and the AS supports them; a
//! registration calyx already made with that issuer (`issuer/<url>/registration`); or a new
//! RFC 7591 registration, remembered for next time.

use rmcp::transport::auth::AuthorizationMetadata;
use serde::{Deserialize, Serialize};

use crate::hosted::entry::ClientAuth;

/// A registration calyx made with an issuer, as stored under `issuer/<url>/registration`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredRegistration {
    pub client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    pub redirect_uri: String,
}

impl StoredRegistration {
    /// The loopback port its redirect URI names (later sign-ins bind the same one).
    pub fn redirect_port(&self) -> Option<u16> {
        url::Url::parse(&self.redirect_uri).ok()?.port()
    }
}

/// The key the issuer's registration is kept under: its `issuer`, else the origin of its
/// authorization endpoint (the 2025-03-26 fallback has no issuer).
pub fn issuer_key(metadata: &AuthorizationMetadata) -> String {
    if let Some(issuer) = metadata.issuer.as_deref().filter(|i| !i.is_empty()) {
        return issuer.to_string();
    }
    url::Url::parse(&metadata.authorization_endpoint)
        .map(|u| u.origin().ascii_serialization())
        .unwrap_or_else(|_| metadata.authorization_endpoint.clone())
}

/// Makes rmcp authenticate at the token endpoint the way the user chose: rmcp uses basic
/// unless the AS lists only post, so the list is narrowed to the one method.
pub fn force_client_auth(metadata: &mut AuthorizationMetadata, auth: ClientAuth) {
    let method = match auth {
        ClientAuth::None => return,
        ClientAuth::ClientSecretPost => "client_secret_post",
        ClientAuth::ClientSecretBasic => "client_secret_basic",
    };
    metadata.additional_fields.insert(
        "token_endpoint_auth_methods_supported".into(),
        serde_json::json!([method]),
    );
}

/// Whether the AS accepts URL client IDs (SEP-991).
pub fn supports_client_metadata_documents(metadata: &AuthorizationMetadata) -> bool {
    metadata
        .additional_fields
        .get("client_id_metadata_document_supported")
        .and_then(|v| v.as_bool())
        .unwrap_or(false)
}

/// Whether the metadata advertises S256 PKCE, which the 2025-11-25 spec requires clients to
/// check (rmcp only warns when the field is missing).
pub fn advertises_pkce(metadata: &AuthorizationMetadata) -> bool {
    metadata
        .code_challenge_methods_supported
        .as_ref()
        .is_some_and(|methods| methods.iter().any(|m| m == "S256"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata(json: serde_json::Value) -> AuthorizationMetadata {
        serde_json::from_value(json).expect("metadata")
    }

    #[test]
    fn forcing_a_client_auth_narrows_the_methods() {
        let mut m = metadata(serde_json::json!({
            "authorization_endpoint": "https://as.example/authorize",
            "token_endpoint": "https://as.example/token",
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"]
        }));
        force_client_auth(&mut m, ClientAuth::ClientSecretPost);
        assert_eq!(
            m.additional_fields["token_endpoint_auth_methods_supported"],
            serde_json::json!(["client_secret_post"])
        );
        force_client_auth(&mut m, ClientAuth::ClientSecretBasic);
        assert_eq!(
            m.additional_fields["token_endpoint_auth_methods_supported"],
            serde_json::json!(["client_secret_basic"])
        );
    }

    #[test]
    fn the_issuer_key_falls_back_to_the_authorization_origin() {
        let with = metadata(serde_json::json!({
            "issuer": "https://as.example/tenant",
            "authorization_endpoint": "https://as.example/authorize",
            "token_endpoint": "https://as.example/token"
        }));
        assert_eq!(issuer_key(&with), "https://as.example/tenant");
        let without = metadata(serde_json::json!({
            "authorization_endpoint": "http://127.0.0.1:9/authorize",
            "token_endpoint": "http://127.0.0.1:9/token"
        }));
        assert_eq!(issuer_key(&without), "http://127.0.0.1:9");
    }

    #[test]
    fn pkce_and_cimd_support_are_read_from_the_metadata() {
        let none = metadata(serde_json::json!({
            "authorization_endpoint": "a", "token_endpoint": "t"
        }));
        assert!(!advertises_pkce(&none));
        assert!(!supports_client_metadata_documents(&none));
        let both = metadata(serde_json::json!({
            "authorization_endpoint": "a", "token_endpoint": "t",
            "code_challenge_methods_supported": ["S256"],
            "client_id_metadata_document_supported": true
        }));
        assert!(advertises_pkce(&both));
        assert!(supports_client_metadata_documents(&both));
        let plain = metadata(serde_json::json!({
            "authorization_endpoint": "a", "token_endpoint": "t",
            "code_challenge_methods_supported": ["plain"]
        }));
        assert!(!advertises_pkce(&plain));
    }

    #[test]
    fn a_registration_remembers_its_port() {
        let r = StoredRegistration {
            client_id: "c".into(),
            client_secret: None,
            redirect_uri: "http://127.0.0.1:41890/callback".into(),
        };
        assert_eq!(r.redirect_port(), Some(41890));
    }
}
