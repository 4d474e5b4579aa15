//! `machines.toml` (`$XDG_CONFIG_HOME/calyx/machines.toml`): the saved machines, one table
//! each, `[machines.NAME]` with the `target` ssh reaches it by. It is read strictly: a file a
//! human broke by hand is reported (file, line, problem) and never rewritten, so an edit of
//! ours cannot throw away what they meant. Edits go through `toml_edit`, which keeps their
//! comments and order, and land by rename in a 0600 file (a target may name a user and a
//! host the user would not have world-readable).

use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use toml_edit::{DocumentMut, ImDocument, Item, Table};

use crate::remote::Target;

/// A name refused for a saved machine: `calyx agents --all` calls this machine's own rows so.
pub const LOCAL: &str = "local";

/// Longest machine name: it prefixes every row shown for that machine.
const MAX_NAME: usize = 32;

/// One saved machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machine {
    pub name: String,
    /// What `ssh` is given, as the user wrote it (checked with [`Target::parse`]).
    pub target: String,
    /// `enabled = false` keeps a machine saved but out of `--all`.
    pub enabled: bool,
}

impl Machine {
    /// The target as ssh will be told to reach it.
    pub fn ssh_target(&self) -> anyhow::Result<Target> {
        Target::parse(&self.target)
    }
}

/// The file: next to config.toml.
pub fn file() -> PathBuf {
    let config = crate::paths::config_file();
    config.parent().map_or_else(
        || PathBuf::from("machines.toml"),
        |d| d.join("machines.toml"),
    )
}

/// Checks a machine name: 1 to 32 letters, digits, `-` or `_`, starting with a letter or a
/// digit (it is shown in front of rows, and is a bare TOML key), and not [`LOCAL`].
pub fn check_name(name: &str) -> anyhow::Result<()> {
    let ok_chars = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    let starts_well = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric());
    if name.is_empty() || name.len() > MAX_NAME || !ok_chars || !starts_well {
        bail!(
            "machine name {:?}: use 1 to {MAX_NAME} letters, digits, '-' or '_', starting with \
             a letter or a digit (e.g. build, gpu-1)",
            crate::remote::handshake::printable(name)
        );
    }
    if name == LOCAL {
        bail!("machine name {LOCAL:?} is taken: it names this machine's own rows");
    }
    Ok(())
}

/// Every saved machine, in the file's order; none when there is no file.
pub fn load() -> anyhow::Result<Vec<Machine>> {
    load_from(&file())
}

/// [`load`] from `path`.
pub fn load_from(path: &Path) -> anyhow::Result<Vec<Machine>> {
    match read_text(path)? {
        Some(text) => parse(&text, path).map_err(|e| anyhow::anyhow!(e)),
        None => Ok(Vec::new()),
    }
}

/// Saves `name` → `target`; refused when the name or the target is bad, the name is taken,
/// or the file is broken.
pub fn add(path: &Path, name: &str, target: &str) -> anyhow::Result<Machine> {
    check_name(name)?;
    Target::parse(target).with_context(|| format!("machine {name}: bad target"))?;
    let text = read_text(path)?.unwrap_or_default();
    let machines = parse(&text, path).map_err(|e| anyhow::anyhow!(e))?;
    if let Some(old) = machines.iter().find(|m| m.name == name) {
        bail!(
            "a machine named {name} is saved already (target {}): `calyx machine remove {name}` \
             first",
            old.target
        );
    }
    let mut doc: DocumentMut = text
        .parse()
        .with_context(|| format!("{}: not TOML", path.display()))?;
    if !doc.contains_key("machines") {
        let mut table = Table::new();
        table.set_implicit(true);
        doc.insert("machines", Item::Table(table));
    }
    let table = doc["machines"]
        .as_table_mut()
        .with_context(|| format!("{}: `machines` is not a table", path.display()))?;
    let mut entry = Table::new();
    entry.insert("target", toml_edit::value(target.trim()));
    table.insert(name, Item::Table(entry));
    write(path, &doc.to_string())?;
    Ok(Machine {
        name: name.to_string(),
        target: target.trim().to_string(),
        enabled: true,
    })
}

/// Forgets `name`; false when no machine has that name.
pub fn remove(path: &Path, name: &str) -> anyhow::Result<bool> {
    let Some(text) = read_text(path)? else {
        return Ok(false);
    };
    let machines = parse(&text, path).map_err(|e| anyhow::anyhow!(e))?;
    if !machines.iter().any(|m| m.name == name) {
        return Ok(false);
    }
    let mut doc: DocumentMut = text
        .parse()
        .with_context(|| format!("{}: not TOML", path.display()))?;
    if let Some(table) = doc.get_mut("machines").and_then(Item::as_table_mut) {
        table.remove(name);
    }
    write(path, &doc.to_string())?;
    Ok(true)
}

fn read_text(path: &Path) -> anyhow::Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("failed to read {}", path.display())),
    }
}

/// Writes `text` to a new 0600 file beside `path`, then renames it over `path`: a reader sees
/// the old file or the new one, never half of one.
fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("failed to create {}", dir.display()))?;
    }
    let tmp = path.with_extension(format!("toml.tmp.{}", std::process::id()));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .and_then(|mut f| f.write_all(text.as_bytes()).and_then(|()| f.sync_all()));
    if let Err(e) = written.and_then(|()| std::fs::rename(&tmp, path)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("failed to write {}", path.display()));
    }
    Ok(())
}

/// Reads the file's text strictly: the first problem found, as `FILE: line N: PROBLEM`.
pub fn parse(text: &str, path: &Path) -> Result<Vec<Machine>, String> {
    let at = |span: Option<std::ops::Range<usize>>, what: String| {
        let line = span.map(|s| format!(" line {}:", line_of(text, s.start)));
        format!("{}:{} {what}", path.display(), line.unwrap_or_default())
    };
    let doc = ImDocument::parse(text).map_err(|e| {
        let message = e.message().replace('\n', " ");
        at(e.span(), format!("not TOML: {}", message.trim()))
    })?;
    let mut machines = Vec::new();
    for (key, item) in doc.as_table().iter() {
        if key != "machines" {
            let span = doc.as_table().key(key).and_then(|k| k.span());
            return Err(at(
                span,
                format!("unknown key `{key}` (machines are [machines.NAME] tables)"),
            ));
        }
        let Some(table) = item.as_table_like() else {
            return Err(at(item.span(), "`machines` should be a table".into()));
        };
        for (name, entry) in table.iter() {
            let key_span = table.key(name).and_then(|k| k.span());
            check_name(name).map_err(|e| at(key_span.clone(), format!("{e:#}")))?;
            machines.push(machine(name, entry, key_span).map_err(|(span, w)| at(span, w))?);
        }
    }
    Ok(machines)
}

type Problem = (Option<std::ops::Range<usize>>, String);

/// One `[machines.NAME]` table.
fn machine(
    name: &str,
    entry: &Item,
    key_span: Option<std::ops::Range<usize>>,
) -> Result<Machine, Problem> {
    let Some(table) = entry.as_table_like() else {
        return Err((
            entry.span().or(key_span),
            format!("machine {name}: should be a table with `target = \"HOST\"`"),
        ));
    };
    let mut target = None;
    let mut enabled = true;
    for (key, value) in table.iter() {
        let span = table.key(key).and_then(|k| k.span()).or(value.span());
        match key {
            "target" => {
                let text = value.as_str().ok_or_else(|| {
                    (
                        span.clone(),
                        format!("machine {name}: `target` should be a string"),
                    )
                })?;
                Target::parse(text)
                    .map_err(|e| (span.clone(), format!("machine {name}: target: {e:#}")))?;
                target = Some(text.trim().to_string());
            }
            "enabled" => {
                enabled = value.as_bool().ok_or_else(|| {
                    (
                        span.clone(),
                        format!("machine {name}: `enabled` should be true or false"),
                    )
                })?;
            }
            other => {
                return Err((
                    span,
                    format!("machine {name}: unknown key `{other}` (known: target, enabled)"),
                ))
            }
        }
    }
    let target = target.ok_or_else(|| {
        (
            entry.span().or(key_span),
            format!("machine {name}: no `target` (the ssh alias, user@host or ssh:// address)"),
        )
    })?;
    Ok(Machine {
        name: name.to_string(),
        target,
        enabled,
    })
}

/// 1-based line of byte `offset`.
fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset.min(text.len()))
        .map_or(1, |before| before.matches('\n').count() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> tempfile::TempDir {
        tempfile::tempdir().expect("tempdir")
    }

    #[test]
    fn add_list_remove_keeps_comments_and_is_private() {
        use std::os::unix::fs::PermissionsExt as _;
        let d = dir();
        let path = d.path().join("calyx/machines.toml");
        assert_eq!(load_from(&path).expect("no file"), vec![]);
        add(&path, "build", "me@build").expect("add build");
        add(&path, "gpu-1", "ssh://me@10.0.0.7:2222").expect("add gpu");
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let text = std::fs::read_to_string(&path).expect("read");
        std::fs::write(&path, format!("# my boxes\n{text}")).expect("comment");
        let names: Vec<String> = load_from(&path)
            .expect("load")
            .into_iter()
            .map(|m| m.name)
            .collect();
        assert_eq!(names, ["build", "gpu-1"]);
        assert!(add(&path, "build", "other").is_err(), "a taken name");
        assert!(remove(&path, "gpu-1").expect("remove"));
        assert!(!remove(&path, "gpu-1").expect("again"));
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(text.starts_with("# my boxes\n"), "{text}");
        assert!(
            text.contains("me@build") && !text.contains("10.0.0.7"),
            "{text}"
        );
    }

    #[test]
    fn bad_names_and_targets_are_refused_at_add() {
        let d = dir();
        let path = d.path().join("machines.toml");
        for name in ["", "local", "-x", "a b", "a.b", "é", &"x".repeat(33)] {
            assert!(add(&path, name, "host").is_err(), "{name:?}");
        }
        for target in ["", "-oProxyCommand=x", "ssh://h:0", "a b"] {
            assert!(add(&path, "ok", target).is_err(), "{target:?}");
        }
        assert!(!path.exists(), "nothing written");
    }

    #[test]
    fn a_broken_file_is_reported_with_its_line_and_never_rewritten() {
        let d = dir();
        let path = d.path().join("machines.toml");
        for (text, line, says) in [
            (
                "[machines.build]\ntarget = \"h\"\n[machines.x\n",
                3,
                "not TOML",
            ),
            ("[machines.build]\ntarget = 3\n", 2, "should be a string"),
            (
                "[machines.build]\ntarget = \"-oX=y\"\n",
                2,
                "cannot start with '-'",
            ),
            ("[machines.build]\nhost = \"h\"\n", 2, "unknown key `host`"),
            ("[machines.build]\n", 1, "no `target`"),
            ("\n[machines.\"a b\"]\ntarget = \"h\"\n", 2, "machine name"),
            ("\nmachine = 1\n", 2, "unknown key `machine`"),
        ] {
            std::fs::write(&path, text).expect("write");
            let e = format!("{:#}", load_from(&path).expect_err(text));
            let wanted = format!("{}: line {line}:", path.display());
            assert!(e.starts_with(&wanted) && e.contains(says), "{text:?}: {e}");
            assert!(add(&path, "gpu", "h").is_err(), "{text:?}");
            assert!(remove(&path, "build").is_err(), "{text:?}");
            assert_eq!(std::fs::read_to_string(&path).expect("read"), text);
        }
    }

    #[test]
    fn enabled_is_read() {
        let d = dir();
        let path = d.path().join("machines.toml");
        std::fs::write(&path, "[machines.a]\ntarget = \"h\"\nenabled = false\n").expect("w");
        let m = load_from(&path).expect("load");
        assert!(!m[0].enabled);
    }
}
