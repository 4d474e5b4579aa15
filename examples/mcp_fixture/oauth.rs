//! `mcp_fixture http --oauth`: the fixture as an MCP server that wants OAuth, and its own
//! authorization server on the same origin, so a sign-in runs end to end on loopback: `/mcp`
//! answers 401 with a `WWW-Authenticate` naming the protected resource metadata until it gets
//! `Bearer fixture-token`; the authorization server advertises S256 PKCE and dynamic
//! registration, `/authorize` approves at once (a 302 to the redirect URI with
//! `code=fixture-code` and the request's `state`, which a browser stand-in follows or a test
//! pastes), and `/token` hands out the token. Not a real authorization server: it checks nothing
//! but the bearer.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::http::request::Parts;
use hyper::{Response, StatusCode};
use serde_json::{json, Value};

/// The one access token the fixture accepts.
pub const TOKEN: &str = "fixture-token";

type Answer = Response<BoxBody<Bytes, Infallible>>;

fn reply(status: StatusCode, headers: &[(&str, String)], body: String) -> Answer {
    let mut response = Response::new(Full::new(Bytes::from(body)).boxed());
    *response.status_mut() = status;
    for (name, value) in headers {
        if let (Ok(name), Ok(value)) = (
            hyper::header::HeaderName::try_from(*name),
            hyper::header::HeaderValue::try_from(value.as_str()),
        ) {
            response.headers_mut().insert(name, value);
        }
    }
    response
}

fn json_reply(status: StatusCode, value: Value) -> Answer {
    reply(
        status,
        &[("content-type", "application/json".into())],
        value.to_string(),
    )
}

/// The answer for an OAuth path or for `/mcp` without the token; None lets rmcp answer.
pub fn route(origin: &str, parts: &Parts, body: &Bytes) -> Option<Answer> {
    let path = parts.uri.path();
    let query = parts.uri.query().unwrap_or_default();
    let answer = match path {
        "/.well-known/oauth-protected-resource/mcp" | "/.well-known/oauth-protected-resource" => {
            json_reply(
                StatusCode::OK,
                json!({"resource": format!("{origin}/mcp"), "authorization_servers": [origin]}),
            )
        }
        "/.well-known/oauth-authorization-server" => json_reply(
            StatusCode::OK,
            json!({
                "issuer": origin,
                "authorization_endpoint": format!("{origin}/authorize"),
                "token_endpoint": format!("{origin}/token"),
                "registration_endpoint": format!("{origin}/register"),
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
            }),
        ),
        "/register" => {
            let mut registered: Value = serde_json::from_slice(body).unwrap_or_else(|_| json!({}));
            if let Some(fields) = registered.as_object_mut() {
                fields.insert("client_id".into(), json!("fixture-client"));
            }
            json_reply(StatusCode::CREATED, registered)
        }
        "/authorize" => {
            let params: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
                .into_owned()
                .collect();
            let param = |name: &str| {
                params
                    .iter()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default()
            };
            let state: String =
                url::form_urlencoded::byte_serialize(param("state").as_bytes()).collect();
            let location = format!("{}?code=fixture-code&state={state}", param("redirect_uri"));
            reply(StatusCode::FOUND, &[("location", location)], String::new())
        }
        "/token" => json_reply(
            StatusCode::OK,
            json!({"access_token": TOKEN, "token_type": "Bearer", "expires_in": 3600}),
        ),
        _ => {
            let bearer = parts
                .headers
                .get(hyper::header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok());
            if bearer == Some(&format!("Bearer {TOKEN}")) {
                return None;
            }
            reply(
                StatusCode::UNAUTHORIZED,
                &[(
                    "www-authenticate",
                    format!(
                        "Bearer resource_metadata=\"{origin}/.well-known/oauth-protected-resource/mcp\""
                    ),
                )],
                String::new(),
            )
        }
    };
    Some(answer)
}
