//! The floating sign-in prompt (issue 16, OAuth: "an agent calls a tool of a server that needs
//! sign-in"), drawn over the panes of every attached client while an agent's call waits for a
//! hosted server's sign-in: `<name> requires sign-in`, `s` Sign In, `Esc` Cancel. While shown it
//! takes the keys of the normal mode (the prefix still works), like the approval panel, and
//! like it lets its keys wake only after 500 ms when it appeared while the user was typing.
//!
//! `s` starts the sign-in as `calyx mcp login` does ([`McpRequest::SignIn`] on a blocking
//! thread), then opens the page the way the environment of the client that pressed it allows
//! (the variables it sent when it attached, as for the overlay's `s`): a local desktop runs
//! `$BROWSER` or `xdg-open`; otherwise the prompt shows the address (sanitised, an OSC 8 link) and, over SSH,
//! the `ssh -L` line (the redirect then listens on 41890). The waiting calls run once the server
//! is ready; `Esc` ends them at once with the sign-in sentence and cancels a sign-in in progress.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::{Block, Borders, Clear, Widget};

use crate::hosted::connection::state::ServerState;
use crate::hosted::oauth::open::{opener, Opener};
use crate::hosted::wire::McpRequest;
use crate::keys::{Key, KeyCode};
use crate::server::messages::Msg;
use crate::server::model::sign_in_prompt::{merged, SignInPrompt, SignInStep};
use crate::server::model::state::ClientId;
use crate::server::model::typing::typing;
use crate::server::owner::Server;

/// The widest the box gets.
const MAX_WIDTH: u16 = 78;

impl Server {
    /// Follows the calls waiting for sign-in for as long as the server runs: each change comes
    /// to the loop as [`Msg::SignInPrompts`].
    pub(crate) fn watch_sign_in_prompts(&self) {
        let Some(hosting) = &self.hosting else {
            return;
        };
        let mut changes = hosting.sign_in_prompts().watch();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            while changes.changed().await.is_ok() {
                if tx.send(Msg::SignInPrompts).is_err() {
                    return;
                }
            }
        });
        // A sign-in that failed (the authorization server refused, a bad redirect) puts the
        // server back in `sign-in required` with its reason: the prompt shows it.
        let mut states = hosting.supervisor().subscribe();
        let sign_ins = hosting.supervisor().sign_ins().clone();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            use tokio::sync::broadcast::error::RecvError;
            loop {
                match states.recv().await {
                    Ok((alias, ServerState::SignInRequired)) => {
                        let Some(sentence) = sign_ins.last_error(&alias) else {
                            continue;
                        };
                        if tx.send(Msg::SignInFailed { alias, sentence }).is_err() {
                            return;
                        }
                    }
                    Ok(_) | Err(RecvError::Lagged(_)) => {}
                    Err(RecvError::Closed) => return,
                }
            }
        });
    }

    /// A sign-in started from a prompt failed: the prompt says why (`s` tries again). A prompt
    /// still asking is left alone (the failure is an older sign-in's).
    pub(crate) fn sign_in_failed(&mut self, alias: &str, sentence: String) {
        let started = self.state.sign_in_prompts.iter().any(|p| {
            p.alias == alias && !matches!(p.step, SignInStep::Asking | SignInStep::Failed(_))
        });
        if started {
            self.sign_in_step(alias, SignInStep::Failed(sentence));
        }
    }

    /// The clients whose user is typing at `now` (a panel appearing keeps their keys asleep).
    pub(crate) fn typing_clients(&self, now: tokio::time::Instant) -> Vec<ClientId> {
        self.state
            .clients
            .values()
            .filter(|c| typing(c.last_key_at, now))
            .map(|c| c.id)
            .collect()
    }

    /// The waiting calls changed: prompts come, keep their step, or go, in every client.
    pub(crate) fn sign_in_prompts_changed(&mut self) {
        let waiting = self
            .hosting
            .as_ref()
            .map(|h| h.sign_in_prompts().waiting())
            .unwrap_or_default();
        let now = tokio::time::Instant::now();
        let typing = self.typing_clients(now);
        let next = merged(&self.state.sign_in_prompts, &waiting, now, &typing);
        if next != self.state.sign_in_prompts {
            self.state.sign_in_prompts = next;
            self.redraw_every_client();
        }
    }

    /// How far the sign-in started by `s` got.
    pub(crate) fn sign_in_step(&mut self, alias: &str, step: SignInStep) {
        if let Some(p) = self
            .state
            .sign_in_prompts
            .iter_mut()
            .find(|p| p.alias == alias)
        {
            p.step = step;
            self.redraw_every_client();
        }
    }

    fn redraw_every_client(&mut self) {
        for c in self.state.clients.values_mut() {
            c.dirty = true;
        }
        self.schedule_render();
    }

    /// A key in the normal mode while a prompt is shown: `s` signs in, `Esc` cancels, others
    /// are dropped (the prompt is answered first). False when no prompt is shown.
    pub(crate) fn sign_in_prompt_key(&mut self, client: ClientId, key: Key) -> bool {
        let Some(prompt) = self.state.sign_in_prompts.first().cloned() else {
            return false;
        };
        if prompt.keys_asleep(client, tokio::time::Instant::now()) {
            return true;
        }
        let plain = !key.ctrl && !key.alt;
        match key.code {
            KeyCode::Char('s') if plain && prompt.step != SignInStep::Starting => {
                self.start_sign_in(client, &prompt.alias)
            }
            KeyCode::Escape => self.cancel_sign_in_prompt(&prompt),
            _ => {}
        }
        true
    }

    /// `Esc`: the waiting calls answer the sign-in sentence now; a sign-in in progress is
    /// cancelled (the server waits for one again).
    fn cancel_sign_in_prompt(&mut self, prompt: &SignInPrompt) {
        let Some(hosting) = self.hosting.clone() else {
            return;
        };
        hosting.sign_in_prompts().cancel(&prompt.alias);
        let supervisor = hosting.supervisor();
        if prompt.step != SignInStep::Asking {
            supervisor.sign_ins().cancel(&prompt.alias);
        }
        // Back to `sign-in required`, or `ready` when only a step-up was wanted.
        if matches!(
            supervisor.state(&prompt.alias),
            Some(ServerState::SigningIn | ServerState::SignInRequired)
        ) {
            supervisor.settle_after_sign_in(&prompt.alias, false);
        }
        self.sign_in_prompts_changed();
    }

    /// `s`: starts the sign-in off the loop and opens its page as `client`'s environment allows.
    fn start_sign_in(&mut self, client: ClientId, alias: &str) {
        let Some(hosting) = self.hosting.clone() else {
            return;
        };
        // The variables the client sent when it attached (`opener_env`), as the overlay's `s`.
        let env = self
            .state
            .clients
            .get(&client)
            .map(|c| c.opener_env.clone())
            .unwrap_or_default();
        let opener = opener(|name| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()));
        let forwarded = matches!(opener, Opener::Print { forward: Some(_) });
        self.sign_in_step(alias, SignInStep::Starting);
        let tx = self.tx.clone();
        let alias = alias.to_string();
        tokio::task::spawn_blocking(move || {
            let answer = hosting.handle(McpRequest::SignIn {
                alias: alias.clone(),
                forwarded,
            });
            let url = answer
                .json
                .as_ref()
                .and_then(|j| j["auth_url"].as_str())
                .map(str::to_string);
            let step = match (answer.exit, url) {
                (0, Some(url)) => open_page(opener, url, &env),
                _ => SignInStep::Failed(answer.text.trim().to_string()),
            };
            let _ = tx.send(Msg::SignInStep { alias, step });
        });
    }
}

/// Opens the sign-in page with `opener` (the client's `env` added to the browser's, for its
/// `DISPLAY`); what the prompt shows next.
fn open_page(opener: Opener, url: String, env: &[(String, String)]) -> SignInStep {
    match opener {
        Opener::Browser(program) => match launch(&program, &url, env) {
            Ok(()) => SignInStep::Opened,
            Err(e) => {
                tracing::warn!("sign-in: starting the browser `{program}` failed: {e}");
                SignInStep::Url { url, forward: None }
            }
        },
        Opener::Print { forward } => SignInStep::Url { url, forward },
    }
}

/// Runs `program URL` (split like a shell would) with `env` added and its output discarded, and
/// reaps it on a thread of its own: the server lives on, so a browser that exits must not stay
/// a zombie.
pub(crate) fn launch(program: &str, url: &str, env: &[(String, String)]) -> std::io::Result<()> {
    use std::process::Stdio;
    let words = crate::argsplit::split_args(program).unwrap_or_else(|_| vec![program.into()]);
    let Some((first, rest)) = words.split_first() else {
        return Err(std::io::Error::other("no browser program"));
    };
    let mut child = std::process::Command::new(first)
        .args(rest)
        .arg(url)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    std::thread::spawn(move || child.wait());
    Ok(())
}

/// The prompt's lines under its title: (text, style, link target).
fn lines(prompt: &SignInPrompt) -> Vec<(String, Style, Option<String>)> {
    let plain = Style::default();
    let dim = Style::default().fg(Color::Gray);
    let keys = Style::default().add_modifier(Modifier::BOLD);
    let alias = calyx_tui::escape::visible(&prompt.alias);
    let waits = match prompt.calls {
        1 => "1 call waits".to_string(),
        n => format!("{n} calls wait"),
    };
    let mut out = vec![(
        format!("An agent called a tool of `{alias}`: {waits} up to 2 minutes."),
        dim,
        None,
    )];
    match &prompt.step {
        SignInStep::Asking => {
            out.push(("s Sign In    Esc Cancel".into(), keys, None));
        }
        SignInStep::Starting => out.push(("Starting the sign-in…".into(), plain, None)),
        SignInStep::Opened => {
            out.push((
                "The sign-in page opened in your browser: finish there.".into(),
                plain,
                None,
            ));
            out.push(("Esc Cancel    s Start again".into(), keys, None));
        }
        SignInStep::Url { url, forward } => {
            out.push(("Open this address to sign in:".into(), plain, None));
            let shown = calyx_tui::escape::visible(url);
            out.push((shown, Style::default().fg(Color::Cyan), Some(url.clone())));
            if let Some(forward) = forward {
                out.push(("Forward the redirect's port first:".into(), plain, None));
                out.push((calyx_tui::escape::visible(forward), plain, None));
            }
            out.push(("Esc Cancel    s Start again".into(), keys, None));
        }
        SignInStep::Failed(sentence) => {
            out.push((
                calyx_tui::escape::visible(sentence),
                Style::default().fg(Color::Red),
                None,
            ));
            out.push(("s Try again    Esc Cancel".into(), keys, None));
        }
    }
    out
}

/// Draws `prompt` centred in `area`; a long address wraps over as many rows as it needs (each
/// row of it an OSC 8 link to the whole address when `links` is given).
pub fn draw(
    prompt: &SignInPrompt,
    area: Rect,
    buf: &mut Buffer,
    mut links: Option<&mut calyx_tui::FrameLinks>,
) {
    let title = format!(
        " {} requires sign-in ",
        calyx_tui::escape::visible(&prompt.name)
    );
    let width = area.width.min(MAX_WIDTH);
    let inner_width = usize::from(width.saturating_sub(4)).max(1);
    let mut rows: Vec<(String, Style, Option<String>)> = Vec::new();
    for (text, style, link) in lines(prompt) {
        let chars: Vec<char> = text.chars().collect();
        if chars.is_empty() {
            rows.push((String::new(), style, link));
            continue;
        }
        for chunk in chars.chunks(inner_width) {
            rows.push((chunk.iter().collect(), style, link.clone()));
        }
    }
    let height = u16::try_from(rows.len() + 2)
        .unwrap_or(u16::MAX)
        .min(area.height);
    if width < 8 || height < 3 {
        return;
    }
    let rect = Rect::new(
        area.x + (area.width - width) / 2,
        area.y + (area.height - height) / 2,
        width,
        height,
    );
    Clear.render(rect, buf);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(title)
        .border_style(Style::default().fg(Color::Yellow))
        .title_style(Style::default().add_modifier(Modifier::BOLD));
    let inside = block.inner(rect);
    block.render(rect, buf);
    for (i, (text, style, link)) in rows.iter().enumerate() {
        let Ok(dy) = u16::try_from(i) else { break };
        if dy >= inside.height {
            break;
        }
        let (x, y) = (inside.x + 1, inside.y + dy);
        let max = usize::from(inside.width.saturating_sub(1));
        let (end, _) = buf.set_stringn(x, y, text, max, *style);
        if let (Some(links), Some(target)) = (links.as_deref_mut(), link) {
            if let Some(handle) = links.add(target, None) {
                for cx in x..end {
                    links.set(cx, y, handle);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(buf: &Buffer) -> String {
        let area = buf.area;
        (0..area.height)
            .map(|y| {
                (0..area.width)
                    .map(|x| buf[(x, y)].symbol().to_string())
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn prompt(step: SignInStep) -> SignInPrompt {
        SignInPrompt {
            alias: "lin".into(),
            name: "Linear\x1b]0;owned\x07".into(),
            calls: 2,
            since: tokio::time::Instant::now(),
            typing: Vec::new(),
            step,
        }
    }

    #[test]
    fn the_prompt_names_the_server_safely_and_offers_its_keys() {
        let area = Rect::new(0, 0, 80, 20);
        let mut buf = Buffer::empty(area);
        draw(&prompt(SignInStep::Asking), area, &mut buf, None);
        let shown = text(&buf);
        assert!(
            shown.contains("Linear\\x1b]0;owned\\x07 requires sign-in"),
            "{shown}"
        );
        assert!(shown.contains("s Sign In    Esc Cancel"), "{shown}");
        assert!(shown.contains("2 calls wait up to 2 minutes"), "{shown}");
        assert!(!shown.contains('\x1b'));
    }

    #[test]
    fn without_a_browser_the_address_is_shown_linked_with_the_forward_line() {
        let area = Rect::new(0, 0, 60, 20);
        let mut buf = Buffer::empty(area);
        let mut links = calyx_tui::FrameLinks::new(60, 20);
        let url = format!("http://127.0.0.1:9/authorize?state={}", "x".repeat(80));
        let step = SignInStep::Url {
            url: url.clone(),
            forward: Some("ssh -L 41890:127.0.0.1:41890 ana@host".into()),
        };
        draw(&prompt(step), area, &mut buf, Some(&mut links));
        let shown = text(&buf);
        assert!(
            shown.contains("http://127.0.0.1:9/authorize?state=xx"),
            "{shown}"
        );
        assert!(
            shown.contains("ssh -L 41890:127.0.0.1:41890 ana@host"),
            "{shown}"
        );
        let (x, y) = (0..60)
            .flat_map(|x| (0..20).map(move |y| (x, y)))
            .find(|&(x, y)| links.at(x, y).is_some())
            .expect("a linked cell");
        assert_eq!(links.at(x, y), Some(format!(";{url}").as_str()));
    }
}
