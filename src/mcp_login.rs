//! `calyx mcp login ALIAS [--no-browser] [--paste]`: asks the server to start the sign-in,
//! then opens the page where the client is local (its `DISPLAY`/`WAYLAND_DISPLAY` or macOS,
//! no `SSH_CONNECTION`), or prints it with the two ways back over SSH: forward port 41890
//! (the `ssh -L` line; the server then listens on 41890 for this sign-in), or `--paste` the
//! address the browser fails to load. Then it waits for the outcome (or sends the paste).

use std::io::BufRead;

use crate::cli::McpLoginArgs;
use crate::client;
use crate::hosted::host::McpAnswer;
use crate::hosted::oauth::open::{launch, opener, Opener};
use crate::hosted::wire::McpRequest;
use crate::protocol::{Request, Response};

/// Runs `calyx mcp login`: the server's last answer, which the caller prints, or why there is
/// none.
pub async fn login(args: &McpLoginArgs) -> Result<Response, String> {
    let alias = args.alias.clone();
    let opened = opener(|name| std::env::var(name).ok());
    let forward = match &opened {
        Opener::Print { forward } => forward.clone(),
        Opener::Browser(_) => None,
    };
    let forwarded = forward.is_some() && !args.paste;
    let started = ask(McpRequest::SignIn {
        alias: alias.clone(),
        forwarded,
    })
    .await;
    let answer = match answer_of(started) {
        Ok(answer) if answer.exit == 0 => answer,
        Ok(failed) => return Ok(Response::Json(to_json(&failed))),
        Err(e) => return Err(e),
    };
    let Some(url) = answer
        .json
        .as_ref()
        .and_then(|j| j["auth_url"].as_str())
        .map(str::to_string)
    else {
        return Err("the server did not send a sign-in address".into());
    };
    match (&opened, args.no_browser) {
        (Opener::Browser(program), false) => {
            if let Err(e) = launch(program, &url) {
                eprintln!("calyx: cannot run {program} ({e}); open this address to sign in to `{alias}`:\n  {url}");
            } else {
                eprintln!("calyx: opened the sign-in page of `{alias}` in {program}");
            }
        }
        _ => {
            eprintln!("Open this address to sign in to `{alias}`:\n  {url}");
            if let (Some(line), false) = (&forward, args.paste) {
                eprintln!(
                    "Over SSH, forward the redirect port first so the browser's redirect reaches calyx:\n  {line}\nor run `calyx mcp login {alias} --paste` and paste the address the browser fails to load."
                );
            }
        }
    }
    if args.paste {
        eprintln!("After approving, paste the address the browser failed to load (http://127.0.0.1:PORT/callback?code=...):");
        let mut line = String::new();
        if std::io::stdin().lock().read_line(&mut line).is_err() || line.trim().is_empty() {
            return Err("nothing was pasted: run the login again".into());
        }
        ask(McpRequest::SignInPaste {
            alias,
            redirect: line.trim().to_string(),
        })
        .await
    } else {
        ask(McpRequest::SignInWait { alias }).await
    }
}

async fn ask(request: McpRequest) -> Result<Response, String> {
    let mut stream = client::connect_or_start()
        .await
        .map_err(|e| format!("{e:#}"))?;
    client::request(&mut stream, Request::Mcp(request))
        .await
        .map_err(|e| format!("{e:#}"))
}

fn answer_of(response: Result<Response, String>) -> Result<McpAnswer, String> {
    match response? {
        Response::Json(value) => serde_json::from_value(value).map_err(|e| e.to_string()),
        Response::Error(e) => Err(e),
        other => Err(format!("unexpected answer from the server: {other:?}")),
    }
}

fn to_json(answer: &McpAnswer) -> serde_json::Value {
    serde_json::to_value(answer).unwrap_or_default()
}
