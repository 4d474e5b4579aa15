//! A real MCP server behind OAuth on a random loopback port, for the sign-in tests: `/mcp`
//! answers `401` with `WWW-Authenticate: Bearer resource_metadata=...` until a request carries
//! the token its own authorization server issued; the same origin serves the protected
//! resource metadata, the authorization server metadata (PKCE S256, RFC 7591 registration),
//! `/register`, `/authorize` (a `302` to the redirect URI with a code and the state, as a user
//! approving would get) and `/token`. Once signed in, `/mcp` speaks Streamable HTTP with JSON
//! answers and offers two tools: `whoami` answers "signed in as tester"; `admin` needs the
//! scope `admin`, answering a token without it `403` with `WWW-Authenticate: Bearer
//! error="insufficient_scope", scope="admin"` (what makes a client step up), and "admin
//! granted" once the token has it.
//!
//! [`browser_script`] writes the browser stand-in: a script that GETs the authorization URL
//! and follows its redirect into calyx's listener (the same stand-in the conformance runs use).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

/// The access token `/token` issues.
const TOKEN: &str = "token-for-tester";
/// The one it issues for an authorization that asked for the scope `admin`.
const ADMIN_TOKEN: &str = "admin-token-for-tester";

/// The server; it runs until the test process ends (its threads own nothing else).
pub struct OAuthServer {
    pub origin: String,
    /// How many `tools/call` requests reached a tool with a good token.
    pub calls: Arc<AtomicUsize>,
    /// The `scope` of every authorization request, in order.
    pub scopes: Arc<Mutex<Vec<String>>>,
}

impl OAuthServer {
    pub fn start() -> OAuthServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let origin = format!(
            "http://127.0.0.1:{}",
            listener.local_addr().expect("addr").port()
        );
        let calls = Arc::new(AtomicUsize::new(0));
        let scopes = Arc::new(Mutex::new(Vec::new()));
        let seen = Seen {
            calls: calls.clone(),
            scopes: scopes.clone(),
        };
        let served = origin.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (origin, seen) = (served.clone(), seen.clone());
                std::thread::spawn(move || serve(stream, &origin, &seen));
            }
        });
        OAuthServer {
            origin,
            calls,
            scopes,
        }
    }

    /// The MCP endpoint.
    pub fn url(&self) -> String {
        format!("{}/mcp", self.origin)
    }
}

/// What the server records for the test.
#[derive(Clone)]
struct Seen {
    calls: Arc<AtomicUsize>,
    scopes: Arc<Mutex<Vec<String>>>,
}

/// A request: method, path with query, headers (lower-case names), body.
struct Request {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("/")
    }

    fn query(&self, name: &str) -> Option<String> {
        let query = self.target.split_once('?')?.1;
        form_value(query, name)
    }
}

/// `name`'s value in an `application/x-www-form-urlencoded` string.
fn form_value(form: &str, name: &str) -> Option<String> {
    form.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        (k == name).then(|| percent_decode(v))
    })
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                match u8::from_str_radix(hex, 16) {
                    Ok(b) => {
                        out.push(b);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn read_request(stream: &mut TcpStream) -> Option<Request> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut words = line.split_whitespace();
    let method = words.next()?.to_string();
    let target = words.next()?.to_string();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let length = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Request {
        method,
        target,
        headers,
        body,
    })
}

fn respond(stream: &mut TcpStream, status: &str, headers: &[(&str, String)], body: &str) {
    let mut head = format!(
        "HTTP/1.1 {status}\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body.as_bytes());
}

fn json_response(stream: &mut TcpStream, status: &str, body: &Value) {
    respond(
        stream,
        status,
        &[("content-type", "application/json".into())],
        &body.to_string(),
    );
}

fn serve(mut stream: TcpStream, origin: &str, seen: &Seen) {
    let Some(request) = read_request(&mut stream) else {
        return;
    };
    let path = request.path().to_string();
    match (request.method.as_str(), path.as_str()) {
        (_, p) if p.starts_with("/.well-known/oauth-protected-resource") => json_response(
            &mut stream,
            "200 OK",
            &json!({
                "resource": format!("{origin}/mcp"),
                "authorization_servers": [origin],
            }),
        ),
        (_, p)
            if p.starts_with("/.well-known/oauth-authorization-server")
                || p.starts_with("/.well-known/openid-configuration") =>
        {
            json_response(
                &mut stream,
                "200 OK",
                &json!({
                    "issuer": origin,
                    "authorization_endpoint": format!("{origin}/authorize"),
                    "token_endpoint": format!("{origin}/token"),
                    "registration_endpoint": format!("{origin}/register"),
                    "response_types_supported": ["code"],
                    "grant_types_supported": ["authorization_code", "refresh_token"],
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": ["none"],
                }),
            )
        }
        ("POST", "/register") => {
            let asked: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
            json_response(
                &mut stream,
                "201 Created",
                &json!({
                    "client_id": "calyx-test-client",
                    "redirect_uris": asked["redirect_uris"],
                    "token_endpoint_auth_method": "none",
                    "grant_types": ["authorization_code", "refresh_token"],
                    "response_types": ["code"],
                    "client_name": asked["client_name"],
                }),
            )
        }
        ("GET", "/authorize") => {
            let (Some(redirect), Some(state)) =
                (request.query("redirect_uri"), request.query("state"))
            else {
                return respond(&mut stream, "400 Bad Request", &[], "no redirect_uri");
            };
            let scope = request.query("scope").unwrap_or_default();
            seen.scopes
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(scope.clone());
            let code = if scope.split(' ').any(|s| s == "admin") {
                "approved-admin"
            } else {
                "approved"
            };
            let location = format!("{redirect}?code={code}&state={state}");
            respond(&mut stream, "302 Found", &[("location", location)], "");
        }
        ("POST", "/token") => {
            let form = String::from_utf8_lossy(&request.body).into_owned();
            let (token, scope) = match form_value(&form, "code").as_deref() {
                Some("approved") => (TOKEN, ""),
                Some("approved-admin") => (ADMIN_TOKEN, "admin"),
                _ => {
                    return json_response(
                        &mut stream,
                        "400 Bad Request",
                        &json!({"error": "invalid_grant"}),
                    )
                }
            };
            json_response(
                &mut stream,
                "200 OK",
                &json!({
                    "access_token": token,
                    "token_type": "Bearer",
                    "expires_in": 3600,
                    "scope": scope,
                }),
            )
        }
        (_, "/mcp") => {
            let token = request
                .header("authorization")
                .and_then(|h| h.strip_prefix("Bearer "));
            if token != Some(TOKEN) && token != Some(ADMIN_TOKEN) {
                let challenge = format!(
                    "Bearer resource_metadata=\"{origin}/.well-known/oauth-protected-resource/mcp\""
                );
                return respond(
                    &mut stream,
                    "401 Unauthorized",
                    &[("www-authenticate", challenge)],
                    "",
                );
            }
            let admin = token == Some(ADMIN_TOKEN);
            mcp(&mut stream, &request, origin, admin, &seen.calls)
        }
        _ => respond(&mut stream, "404 Not Found", &[], ""),
    }
}

/// Streamable HTTP with JSON answers; no stream for `GET`.
fn mcp(stream: &mut TcpStream, request: &Request, origin: &str, admin: bool, calls: &AtomicUsize) {
    match request.method.as_str() {
        "POST" => {}
        "DELETE" => return respond(stream, "200 OK", &[], ""),
        _ => return respond(stream, "405 Method Not Allowed", &[], ""),
    }
    let message: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
    let id = message["id"].clone();
    if id.is_null() {
        // A notification or a response.
        return respond(stream, "202 Accepted", &[], "");
    }
    let result = match message["method"].as_str().unwrap_or_default() {
        "initialize" => json!({
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "oauth-test", "version": "1.0.0"},
        }),
        "tools/list" => json!({"tools": [{
            "name": "whoami",
            "description": "Who the token belongs to.",
            "inputSchema": {"type": "object"},
        }, {
            "name": "admin",
            "description": "Needs the scope admin.",
            "inputSchema": {"type": "object"},
        }]}),
        "tools/call" if message["params"]["name"] == "admin" => {
            if !admin {
                let challenge = format!(
                    "Bearer error=\"insufficient_scope\", scope=\"admin\", resource_metadata=\"{origin}/.well-known/oauth-protected-resource/mcp\""
                );
                return respond(
                    stream,
                    "403 Forbidden",
                    &[("www-authenticate", challenge)],
                    "",
                );
            }
            calls.fetch_add(1, Ordering::SeqCst);
            json!({"content": [{"type": "text", "text": "admin granted"}]})
        }
        "tools/call" => {
            calls.fetch_add(1, Ordering::SeqCst);
            json!({"content": [{"type": "text", "text": "signed in as tester"}]})
        }
        "ping" => json!({}),
        _ => {
            return json_response(
                stream,
                "200 OK",
                &json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no such method"}}),
            )
        }
    };
    json_response(
        stream,
        "200 OK",
        &json!({"jsonrpc": "2.0", "id": id, "result": result}),
    );
}

/// Writes the browser stand-in into `dir`: it GETs the authorization URL it is given and
/// follows the redirect into calyx's listener, as a browser whose user approves would.
pub fn browser_script(dir: &Path) -> PathBuf {
    let path = dir.join("test-browser");
    std::fs::write(
        &path,
        "#!/bin/sh\nexec curl --silent --show-error --location --max-time 30 --output /dev/null \"$1\"\n",
    )
    .expect("write the browser script");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

/// Writes a browser stand-in whose user refuses: it follows the authorization URL to the
/// redirect and sends calyx's listener `error=access_denied` (with the state) instead.
pub fn refusing_browser_script(dir: &Path) -> PathBuf {
    let path = dir.join("refusing-browser");
    std::fs::write(
        &path,
        "#!/bin/sh\n\
         loc=$(curl --silent --output /dev/null --max-time 30 --write-out '%{redirect_url}' \"$1\")\n\
         state=${loc##*state=}\n\
         exec curl --silent --output /dev/null --max-time 30 \"${loc%%\\?*}?error=access_denied&error_description=no+thanks&state=$state\"\n",
    )
    .expect("write the browser script");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}
