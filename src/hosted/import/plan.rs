//! What an import will do, shown before it is done: per server its alias, transport, target,
//! unresolved variables, ignored keys, and what happens when its alias is taken. One policy
//! for every taken alias, as the seed's sheet offers it.

use std::fmt::Write as _;

use super::parse::Candidate;
use crate::hosted::alias::unique_alias;
use crate::hosted::server_list::ServerList;

/// What to do with a server whose alias is taken.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ConflictPolicy {
    /// Append a digit within the 10-character limit (`github` → `github2`).
    #[default]
    Rename,
    /// Replace the existing server (and its secrets).
    Replace,
    /// Keep the existing server, import nothing for this one.
    Skip,
}

impl std::str::FromStr for ConflictPolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "rename" => Ok(ConflictPolicy::Rename),
            "replace" => Ok(ConflictPolicy::Replace),
            "skip" => Ok(ConflictPolicy::Skip),
            other => Err(format!(
                "`{other}` is not a conflict policy: use rename, replace or skip"
            )),
        }
    }
}

/// What happens to one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Added under its derived alias.
    Add,
    /// Added under another alias because its own was taken.
    Rename { from: String },
    /// Replaces the existing server with this alias.
    Replace,
    /// Not imported: its alias is taken and the policy is skip.
    Skip,
    /// Not imported: it is invalid (the sentence says why).
    Invalid(String),
}

/// One server of the preview.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    pub candidate: Candidate,
    pub action: Action,
}

/// Decides each candidate's fate against the current list. Aliases are also kept unique among
/// the imported servers themselves (two `github` entries in one file become `github`, `github2`
/// whatever the policy, since neither is on the list yet).
pub fn plan(candidates: Vec<Candidate>, list: &ServerList, policy: ConflictPolicy) -> Vec<Planned> {
    let mut claimed: Vec<String> = Vec::new();
    let mut planned = Vec::new();
    for mut candidate in candidates {
        if let Some(problem) = candidate.problem.clone() {
            planned.push(Planned {
                candidate,
                action: Action::Invalid(problem),
            });
            continue;
        }
        let base = candidate.entry.alias.clone();
        let on_list = list.get(&base).is_some();
        let action = match (on_list, policy) {
            (true, ConflictPolicy::Skip) => Action::Skip,
            (true, ConflictPolicy::Replace) if !claimed.contains(&base) => Action::Replace,
            (false, _) if !claimed.contains(&base) => Action::Add,
            _ => {
                let taken = |a: &str| list.get(a).is_some() || claimed.iter().any(|c| c == a);
                match unique_alias(&base, &taken) {
                    Some(alias) => {
                        candidate.entry.alias = alias;
                        Action::Rename { from: base }
                    }
                    None => Action::Invalid(format!(
                        "no free alias is left near `{base}`: remove some servers first"
                    )),
                }
            }
        };
        if !matches!(action, Action::Skip | Action::Invalid(_)) {
            claimed.push(candidate.entry.alias.clone());
        }
        if !candidate.unresolved.is_empty() {
            let names = &candidate.unresolved;
            let one = names.len() == 1;
            candidate.entry.note = Some(format!(
                "imported disabled: {} {} not set at import; set {} with `calyx mcp edit {}`, then enable it",
                names.join(", "),
                if one { "was" } else { "were" },
                if one { "it" } else { "them" },
                candidate.entry.alias,
            ));
        }
        planned.push(Planned { candidate, action });
    }
    planned
}

/// Carries out the plan on `list`; returns the servers added or replaced, whose secrets the
/// caller stores (for a replaced one after deleting the old server's).
pub fn apply(planned: &[Planned], list: &mut ServerList) -> Vec<Candidate> {
    let mut done = Vec::new();
    for p in planned {
        let entry = p.candidate.entry.clone();
        let result = match p.action {
            Action::Add | Action::Rename { .. } => list.add(entry).map(|_| ()),
            Action::Replace => list
                .remove(&entry.alias)
                .and_then(|_| list.add(entry))
                .map(|_| ()),
            Action::Skip | Action::Invalid(_) => continue,
        };
        if result.is_ok() {
            done.push(p.candidate.clone());
        }
    }
    done
}

/// The preview (`imported` None: a dry run) or the outcome (the aliases imported) as
/// `calyx mcp import --json` prints it: per server its source key, alias, transport, target,
/// what happens (`add`, `rename` with `renamed_from`, `replace`, `skip`, `invalid` with
/// `problem`), whether it is imported enabled, the import note, unresolved variables and ignored
/// keys. Names only: never a secret value.
pub fn outcome_json(planned: &[Planned], imported: Option<&[Candidate]>) -> serde_json::Value {
    let servers: Vec<serde_json::Value> = planned
        .iter()
        .map(|p| {
            let c = &p.candidate;
            let (action, renamed_from, problem) = match &p.action {
                Action::Add => ("add", None, None),
                Action::Rename { from } => ("rename", Some(from.clone()), None),
                Action::Replace => ("replace", None, None),
                Action::Skip => ("skip", None, None),
                Action::Invalid(why) => ("invalid", None, Some(why.clone())),
            };
            let legacy_sse = matches!(
                &c.entry.transport,
                crate::hosted::entry::Transport::Http(h) if h.legacy_sse
            );
            serde_json::json!({
                "key": c.key,
                "alias": c.entry.alias,
                "name": c.entry.name,
                "transport": c.entry.transport_name(),
                "legacy_sse": legacy_sse,
                "target": c.entry.target(),
                "action": action,
                "renamed_from": renamed_from,
                "problem": problem,
                "enabled": c.entry.enabled,
                "note": c.entry.note,
                "unresolved": c.unresolved,
                "ignored": c.ignored,
            })
        })
        .collect();
    serde_json::json!({
        "dry_run": imported.is_none(),
        "servers": servers,
        "imported": imported
            .unwrap_or_default()
            .iter()
            .map(|c| c.entry.alias.clone())
            .collect::<Vec<_>>(),
    })
}

/// The preview as the CLI prints it and the overlay shows it.
pub fn render(planned: &[Planned]) -> String {
    let mut out = String::new();
    for p in planned {
        let c = &p.candidate;
        let transport = match &c.entry.transport {
            crate::hosted::entry::Transport::Http(h) if h.legacy_sse => "http (legacy SSE)",
            _ => c.entry.transport_name(),
        };
        let what = match &p.action {
            Action::Add => "add".to_string(),
            Action::Rename { from } => format!("add as `{}` (`{from}` is taken)", c.entry.alias),
            Action::Replace => format!("replace the existing `{}`", c.entry.alias),
            Action::Skip => format!("skip (`{}` is taken)", c.entry.alias),
            Action::Invalid(why) => format!("skip: {why}"),
        };
        let _ = writeln!(
            out,
            "{}  '{}'  {transport}  {}",
            c.entry.alias,
            c.key,
            c.entry.target()
        );
        let _ = writeln!(out, "    {what}");
        if !c.unresolved.is_empty() {
            let _ = writeln!(
                out,
                "    unresolved: {} (imported disabled)",
                c.unresolved.join(", ")
            );
        } else if !c.entry.enabled && !matches!(p.action, Action::Skip | Action::Invalid(_)) {
            let _ = writeln!(out, "    disabled in the source: imported disabled");
        }
        if !c.ignored.is_empty() {
            let _ = writeln!(out, "    ignored keys: {}", c.ignored.join(", "));
        }
    }
    out
}
