//! What a failed request says about authorization: rmcp's Streamable HTTP client reports a 401
//! as `AuthRequiredError` and a 403 `insufficient_scope` as `InsufficientScopeError`, each with
//! the server's `WWW-Authenticate` header, somewhere down the error chain.

use std::error::Error as StdError;

use rmcp::transport::streamable_http_client::{AuthRequiredError, InsufficientScopeError};

/// An authorization challenge found in an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Challenge {
    /// 401: sign in (the header seeds discovery and the scopes).
    Unauthorized(String),
    /// 403 `insufficient_scope`: step up to the scopes it names.
    InsufficientScope(String),
}

/// The challenge somewhere in `error`'s chain.
pub fn find_challenge(error: &(dyn StdError + 'static)) -> Option<Challenge> {
    let mut current = Some(error);
    while let Some(e) = current {
        if let Some(required) = e.downcast_ref::<AuthRequiredError>() {
            return Some(Challenge::Unauthorized(
                required.www_authenticate_header.clone(),
            ));
        }
        if let Some(scope) = e.downcast_ref::<InsufficientScopeError>() {
            return Some(Challenge::InsufficientScope(
                scope.www_authenticate_header.clone(),
            ));
        }
        current = e.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::transport::streamable_http_client::StreamableHttpError;

    #[test]
    fn challenges_are_found_down_the_chain() {
        let unauthorized: StreamableHttpError<std::io::Error> = StreamableHttpError::AuthRequired(
            AuthRequiredError::new("Bearer resource_metadata=\"x\"".into()),
        );
        assert_eq!(
            find_challenge(&unauthorized),
            Some(Challenge::Unauthorized(
                "Bearer resource_metadata=\"x\"".into()
            ))
        );
        let scope: StreamableHttpError<std::io::Error> = StreamableHttpError::InsufficientScope(
            InsufficientScopeError::new("Bearer error=\"insufficient_scope\"".into(), None),
        );
        assert!(matches!(
            find_challenge(&scope),
            Some(Challenge::InsufficientScope(_))
        ));
        assert_eq!(find_challenge(&std::io::Error::other("plain")), None);
    }
}
