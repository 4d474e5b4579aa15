//! `calyx mcp ...`: the user's hosted MCP servers from the shell. Each command is checked here
//! first (a bad input exits 2 with its sentence), then sent to the server over its socket
//! ([`Request::Mcp`]), which changes `mcp-servers.json` under its lock and applies the change
//! at once. Secret values (`--env KEY=VALUE`, header values, the client secret) travel over the
//! user's own socket to the server, which keeps them in the secret store, never in the file.

use std::io::{BufRead, IsTerminal, Read, Write};
use std::process::ExitCode;

use crate::cli::{McpAddArgs, McpArgs, McpCommand, McpEditArgs, McpImportArgs, McpServerFlags};
use crate::client;
use crate::hosted::edit::EntryEdit;
use crate::hosted::entry::{
    ClientAuth, HttpTarget, OAuthSettings, ServerEntry, StdioTarget, Transport,
};
use crate::hosted::host::{render_rows, row, McpAnswer};
use crate::hosted::import::{self, ConflictPolicy};
use crate::hosted::server_list;
use crate::hosted::validate;
use crate::hosted::wire::McpRequest;
use crate::protocol::{Request, Response};

/// Bad input: exit 2 with a sentence.
struct Usage(String);

impl<E: std::fmt::Display> From<E> for Usage {
    fn from(e: E) -> Self {
        Usage(e.to_string())
    }
}

const USAGE: u8 = 2;

/// Runs one `calyx mcp` command.
pub async fn run(args: McpArgs) -> ExitCode {
    let json = wants_json(&args.command);
    if let McpCommand::Login(login) = &args.command {
        return match crate::mcp_login::login(login).await {
            Ok(response) => print(response, json),
            Err(sentence) => failure(1, &sentence, json),
        };
    }
    if let McpCommand::ConformanceClient { url } = &args.command {
        return match crate::hosted::conformance_client::run(url).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(sentence) => failure(1, &sentence, false),
        };
    }
    let (request, json) = match build(args.command).await {
        Ok(Some(built)) => built,
        Ok(None) => return ExitCode::SUCCESS,
        Err(Usage(message)) => return failure(USAGE, &message, json),
    };
    let listing = matches!(request, McpRequest::List);
    if request == McpRequest::Views {
        // Views live in a running server: none runs, none exist.
        return match client::connect_existing().await {
            Ok(mut stream) => match client::request(&mut stream, Request::Mcp(request)).await {
                Ok(response) => print(response, json),
                Err(e) => failure(1, &format!("{e:#}"), json),
            },
            Err(_) => print_no_views(json),
        };
    }
    let stream = if listing {
        client::connect_existing().await
    } else {
        client::connect_or_start().await
    };
    let response = match stream {
        Ok(mut stream) => client::request(&mut stream, Request::Mcp(request)).await,
        Err(e) => Err(e),
    };
    match response {
        Ok(response) => print(response, json),
        Err(_) if listing => list_without_server(json),
        Err(e) => failure(1, &format!("{e:#}"), json),
    }
}

/// Whether the command was given `--json`.
fn wants_json(command: &McpCommand) -> bool {
    match command {
        McpCommand::List { json }
        | McpCommand::Views { json }
        | McpCommand::Details { json, .. } => *json,
        McpCommand::Add(a) => a.json,
        McpCommand::Edit(a) => a.json,
        McpCommand::Enable(a)
        | McpCommand::Disable(a)
        | McpCommand::Retry(a)
        | McpCommand::Remove(a)
        | McpCommand::Logout(a) => a.json,
        McpCommand::Import(a) => a.json,
        McpCommand::Login(a) => a.json,
        McpCommand::ConformanceClient { .. } => false,
    }
}

/// A failed command: its sentence on stderr, and with `--json` also `{"error": SENTENCE,
/// "exit": CODE}` on stdout, so a script reading stdout always gets one JSON document.
fn failure(exit: u8, sentence: &str, json: bool) -> ExitCode {
    let sentence = sentence.trim_end();
    eprintln!("calyx: {sentence}");
    if json {
        println!("{}", serde_json::json!({"error": sentence, "exit": exit}));
    }
    ExitCode::from(exit)
}

/// The request a command makes (None: nothing to send, such as a dry run), and whether it
/// prints JSON.
async fn build(command: McpCommand) -> Result<Option<(McpRequest, bool)>, Usage> {
    let json = wants_json(&command);
    let request = match command {
        McpCommand::List { json } => return Ok(Some((McpRequest::List, json))),
        McpCommand::Views { json } => return Ok(Some((McpRequest::Views, json))),
        McpCommand::Logout(a) => McpRequest::SignOut { alias: a.alias },
        // Answered in `run`.
        McpCommand::ConformanceClient { .. } | McpCommand::Login(_) => return Ok(None),
        McpCommand::Details { alias, json } => {
            return Ok(Some((McpRequest::Details { alias }, json)))
        }
        McpCommand::Add(args) => add(args)?,
        McpCommand::Edit(args) => edit(args)?,
        McpCommand::Enable(a) => McpRequest::SetEnabled {
            alias: a.alias,
            enabled: true,
        },
        McpCommand::Disable(a) => McpRequest::SetEnabled {
            alias: a.alias,
            enabled: false,
        },
        McpCommand::Retry(a) => McpRequest::Retry { alias: a.alias },
        McpCommand::Remove(a) => McpRequest::Remove { alias: a.alias },
        McpCommand::Import(args) => match import_request(args)? {
            Some(request) => request,
            None => return Ok(None),
        },
    };
    Ok(Some((request, json)))
}

/// Prints the server's answer and turns it into the exit code.
fn print(response: Response, json: bool) -> ExitCode {
    let answer = match response {
        Response::Json(value) => {
            serde_json::from_value::<McpAnswer>(value).unwrap_or_else(|e| McpAnswer {
                exit: 1,
                text: format!("the server's answer did not parse: {e}"),
                json: None,
            })
        }
        Response::Error(e) => McpAnswer {
            exit: 1,
            text: e,
            json: None,
        },
        other => McpAnswer {
            exit: 1,
            text: format!("unexpected answer from the server: {other:?}"),
            json: None,
        },
    };
    if answer.exit != 0 {
        return failure(answer.exit, &answer.text, json);
    }
    let mut out = std::io::stdout().lock();
    let written = match (&answer.json, json) {
        (Some(value), true) => writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(value).unwrap_or_default()
        ),
        _ => write!(out, "{}", answer.text),
    };
    // A closed stdout (a script's `grep -q`) is not a failure of the command.
    drop(written);
    ExitCode::SUCCESS
}

/// `calyx mcp views` with no server running: there are no views.
fn print_no_views(json: bool) -> ExitCode {
    if json {
        println!("[]");
    } else {
        println!("no views (no calyx server is running)");
    }
    ExitCode::SUCCESS
}

/// `calyx mcp list` with no server running: the file's servers, and a word that nothing runs.
fn list_without_server(json: bool) -> ExitCode {
    let path = server_list::servers_file();
    let list = match server_list::load(&path) {
        Ok(list) => list,
        Err(e) => {
            eprintln!("calyx: {e}");
            return ExitCode::FAILURE;
        }
    };
    eprintln!(
        "calyx: no calyx server runs: showing {} (nothing is connected)",
        path.display()
    );
    let rows: Vec<serde_json::Value> = list
        .servers
        .iter()
        .map(|e| {
            let mut r = row(e, &crate::hosted::connection::state::ServerState::Disabled);
            r["state"] = "not running".into();
            r["status"] = "calyx is not running".into();
            r
        })
        .collect();
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&rows).unwrap_or_default()
        );
    } else {
        print!("{}", render_rows(&rows));
    }
    ExitCode::SUCCESS
}

/// `--env KEY[=VALUE]`: the name and value (asked without echo when missing).
fn env_value(alias: &str, given: &str) -> Result<(String, String), Usage> {
    let (name, value) = match given.split_once('=') {
        Some((name, value)) => (name.to_string(), value.to_string()),
        None => {
            validate::check_env_name(alias, given)?;
            (given.to_string(), ask_secret(given)?)
        }
    };
    validate::check_env_name(alias, &name)?;
    validate::check_env_value(alias, &name, &value)?;
    Ok((name, value))
}

/// `--header 'Name: value'`.
fn header_value(alias: &str, given: &str) -> Result<(String, String), Usage> {
    let Some((name, value)) = given.split_once(':') else {
        return Err(Usage(format!(
            "the header `{given}` of `{alias}` has no `:`: write it as 'Name: value'"
        )));
    };
    let (name, value) = (name.trim().to_string(), value.trim().to_string());
    validate::check_header_name(alias, &name)?;
    validate::check_header_value(alias, &name, &value)?;
    Ok((name, value))
}

/// A secret value typed on the terminal without echo; refused without a terminal.
fn ask_secret(name: &str) -> Result<String, Usage> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return Err(Usage(format!(
            "no value for {name} and stdin is not a terminal to ask on: give it as --env {name}=VALUE"
        )));
    }
    eprint!("value of {name} (not shown): ");
    let _ = std::io::stderr().flush();
    let value = read_without_echo(&stdin).map_err(|e| Usage(format!("reading {name}: {e}")))?;
    eprintln!();
    Ok(value)
}

/// One line from the terminal with echo off (restored afterwards, also on error).
fn read_without_echo(stdin: &std::io::Stdin) -> std::io::Result<String> {
    use nix::sys::termios::{tcgetattr, tcsetattr, LocalFlags, SetArg};
    let mut locked = stdin.lock();
    let saved = tcgetattr(&locked).map_err(std::io::Error::from)?;
    let mut quiet = saved.clone();
    quiet.local_flags.remove(LocalFlags::ECHO);
    tcsetattr(&locked, SetArg::TCSANOW, &quiet).map_err(std::io::Error::from)?;
    let mut line = String::new();
    let read = locked.read_line(&mut line);
    let _ = tcsetattr(&locked, SetArg::TCSANOW, &saved);
    read?;
    Ok(line.trim_end_matches(['\r', '\n']).to_string())
}

fn client_auth(given: &str) -> Result<ClientAuth, Usage> {
    match given {
        "none" => Ok(ClientAuth::None),
        "post" => Ok(ClientAuth::ClientSecretPost),
        "basic" => Ok(ClientAuth::ClientSecretBasic),
        other => Err(Usage(format!(
            "--client-auth `{other}` is not one of none, post, basic"
        ))),
    }
}

/// The client secret from stdin (one line), as `client-secret`.
fn client_secret_from_stdin() -> Result<(String, String), Usage> {
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| Usage(format!("reading the client secret from stdin: {e}")))?;
    let secret = line.trim_end_matches(['\r', '\n']).to_string();
    if secret.is_empty() {
        return Err(Usage(
            "--client-secret-stdin read an empty line: pipe the secret in".into(),
        ));
    }
    Ok(("client-secret".into(), secret))
}

/// A directory made absolute against the shell's.
fn absolute(dir: &str) -> String {
    let path = std::path::Path::new(dir);
    if path.is_absolute() {
        return dir.to_string();
    }
    match std::env::current_dir() {
        Ok(here) => here.join(path).display().to_string(),
        Err(_) => dir.to_string(),
    }
}

/// The secrets of the flags: (`env/NAME` | `header/Name` | `client-secret`, value), and the
/// names of the variables and headers.
struct FlagSecrets {
    env: Vec<String>,
    headers: Vec<String>,
    values: Vec<(String, String)>,
}

fn flag_secrets(alias: &str, flags: &McpServerFlags) -> Result<FlagSecrets, Usage> {
    let mut out = FlagSecrets {
        env: Vec::new(),
        headers: Vec::new(),
        values: Vec::new(),
    };
    for given in &flags.env {
        let (name, value) = env_value(alias, given)?;
        out.values.push((format!("env/{name}"), value));
        out.env.push(name);
    }
    for given in &flags.headers {
        let (name, value) = header_value(alias, given)?;
        out.values.push((format!("header/{name}"), value));
        out.headers.push(name);
    }
    if flags.client_secret_stdin {
        out.values.push(client_secret_from_stdin()?);
    }
    Ok(out)
}

fn add(args: McpAddArgs) -> Result<McpRequest, Usage> {
    let McpAddArgs {
        alias,
        flags,
        command,
        json: _,
    } = args;
    validate::check_alias(&alias)?;
    let secrets = flag_secrets(&alias, &flags)?;
    let transport = match (&flags.url, command.split_first()) {
        (Some(_), Some(_)) => {
            return Err(Usage(format!(
                "`{alias}` has both --url and a command: a server is either HTTP or stdio"
            )))
        }
        (None, None) => {
            return Err(Usage(format!(
                "`{alias}` needs a command after `--` (stdio) or --url URL (HTTP)"
            )))
        }
        (Some(url), None) => Transport::Http(HttpTarget {
            url: url.clone(),
            legacy_sse: flags.legacy_sse,
            headers: secrets.headers.clone(),
            oauth: OAuthSettings {
                client_id: flags.client_id.clone(),
                client_auth: flags
                    .client_auth
                    .as_deref()
                    .map(client_auth)
                    .transpose()?
                    .unwrap_or_default(),
                fixed_redirect_port: flags.fixed_redirect_port,
            },
        }),
        (None, Some((program, rest))) => Transport::Stdio(StdioTarget {
            command: program.clone(),
            args: rest.to_vec(),
            cwd: flags.cwd.as_deref().map(absolute),
            env: secrets.env.clone(),
        }),
    };
    let entry = ServerEntry {
        name: flags.name.clone().unwrap_or_else(|| alias.clone()),
        alias,
        enabled: true,
        transport,
        note: None,
    };
    validate::check_entry(&entry)?;
    Ok(McpRequest::Add {
        entry,
        secrets: secrets.values,
    })
}

fn edit(args: McpEditArgs) -> Result<McpRequest, Usage> {
    let McpEditArgs {
        alias,
        flags,
        unset_env,
        unset_header,
        no_legacy_sse,
        command,
        json: _,
    } = args;
    validate::check_alias(&alias)?;
    let secrets = flag_secrets(&alias, &flags)?;
    if let Some(url) = &flags.url {
        validate::check_url(&alias, url)?;
    }
    if let Some(cwd) = &flags.cwd {
        if !cwd.is_empty() && !std::path::Path::new(&absolute(cwd)).is_dir() {
            return Err(Usage::from(validate::InvalidEntry::Cwd {
                alias: alias.clone(),
                cwd: cwd.clone(),
            }));
        }
    }
    let edit = EntryEdit {
        name: flags.name.clone(),
        command: (!command.is_empty()).then_some(command),
        cwd: flags.cwd.as_deref().map(|d| {
            if d.is_empty() {
                String::new()
            } else {
                absolute(d)
            }
        }),
        env: secrets.env,
        unset_env,
        url: flags.url.clone(),
        legacy_sse: if flags.legacy_sse {
            Some(true)
        } else if no_legacy_sse {
            Some(false)
        } else {
            None
        },
        headers: secrets.headers,
        unset_headers: unset_header,
        client_id: flags.client_id.clone(),
        client_auth: flags.client_auth.as_deref().map(client_auth).transpose()?,
        fixed_redirect_port: flags.fixed_redirect_port.then_some(true),
    };
    if let Some(name) = &edit.name {
        let chars = name.chars().count();
        if name.trim().is_empty() {
            return Err(Usage::from(validate::InvalidEntry::NameEmpty { alias }));
        }
        if chars > validate::MAX_NAME_CHARS {
            return Err(Usage::from(validate::InvalidEntry::NameTooLong {
                alias,
                chars,
            }));
        }
    }
    Ok(McpRequest::Edit {
        alias,
        edit,
        secrets: secrets.values,
    })
}

/// Reads and previews an import; None when nothing is to be sent (a dry run).
fn import_request(args: McpImportArgs) -> Result<Option<McpRequest>, Usage> {
    let policy: ConflictPolicy = args.on_conflict.parse().map_err(Usage)?;
    let from_stdin = args.file.as_deref().is_none_or(|f| f == "-");
    let text = if from_stdin {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| Usage(format!("reading the import JSON from stdin: {e}")))?;
        text
    } else {
        let file = args.file.clone().unwrap_or_default();
        std::fs::read_to_string(&file).map_err(|e| Usage(format!("cannot read {file}: {e}")))?
    };
    let lookup = |name: &str| std::env::var(name).ok();
    let candidates = import::parse(&text, &lookup)?;
    // The preview against the list as it is now; the server plans again under the lock.
    let list = server_list::load(&server_list::servers_file()).map_err(|e| Usage(e.to_string()))?;
    let planned = import::plan(candidates.clone(), &list, policy);
    if args.json && args.dry_run {
        let preview = import::outcome_json(&planned, None);
        println!(
            "{}",
            serde_json::to_string_pretty(&preview).unwrap_or_default()
        );
        return Ok(None);
    }
    if args.json {
        // stdout is for the one JSON document of the outcome.
        eprint!("{}", import::render(&planned));
    } else {
        print!("{}", import::render(&planned));
    }
    if args.dry_run {
        return Ok(None);
    }
    if !args.yes {
        let stdin = std::io::stdin();
        if from_stdin || !stdin.is_terminal() {
            return Err(Usage(
                "not importing without a confirmation: run it on a terminal, or add --yes".into(),
            ));
        }
        eprint!("import these servers? [y/N] ");
        let _ = std::io::stderr().flush();
        let mut line = String::new();
        let _ = stdin.lock().read_line(&mut line);
        if !matches!(line.trim(), "y" | "Y" | "yes") {
            eprintln!("calyx: nothing imported");
            if args.json {
                let declined = import::outcome_json(&planned, Some(&[]));
                println!(
                    "{}",
                    serde_json::to_string_pretty(&declined).unwrap_or_default()
                );
            }
            return Ok(None);
        }
    }
    Ok(Some(McpRequest::Import {
        candidates,
        policy: args.on_conflict,
    }))
}
