//! Shell integration: bash, zsh and fish panes report their commands to calyx (OSC 133 and
//! OSC 7, parsed by calyx-pty into each pane's command history).
//!
//! It is switched on through the environment and arguments calyx gives a shell pane, never by
//! editing the user's startup files: bash gets `--rcfile` (our file sources the usual ones
//! first), zsh a ZDOTDIR whose `.zshenv` restores the user's and then adds hooks, fish an
//! XDG_DATA_DIRS entry whose `vendor_conf.d` file does the same. The scripts ship inside the
//! binary and are written to the runtime directory when the server starts.

use std::path::{Path, PathBuf};

const BASH: &str = include_str!("shell/calyx.bash");
const ZSHENV: &str = include_str!("shell/zshenv.zsh");
const FISH: &str = include_str!("shell/calyx.fish");

/// Where fish looks when XDG_DATA_DIRS is unset (we must keep these when we set it).
const XDG_DATA_DIRS_DEFAULT: &str = "/usr/local/share:/usr/share";

/// The installed scripts.
#[derive(Debug, Clone)]
pub struct ShellIntegration {
    dir: PathBuf,
}

/// A shell calyx can integrate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
}

impl Shell {
    /// The shell a program path names (`/usr/bin/zsh`, `bash`, `-fish`), if any.
    pub fn of(program: &str) -> Option<Shell> {
        let name = Path::new(program).file_name()?.to_str()?;
        match name.trim_start_matches('-') {
            "bash" => Some(Shell::Bash),
            "zsh" => Some(Shell::Zsh),
            "fish" => Some(Shell::Fish),
            _ => None,
        }
    }
}

impl ShellIntegration {
    /// Writes the scripts under `dir` (over what an earlier server left there, whose shells
    /// died with it). Refuses a directory someone else owns: its scripts run in every shell.
    pub fn install(dir: &Path) -> std::io::Result<Self> {
        use std::os::unix::fs::{DirBuilderExt, MetadataExt};
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        if std::fs::metadata(dir)?.uid() != crate::paths::current_uid() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                "the directory belongs to another user",
            ));
        }
        if let Ok(entries) = std::fs::read_dir(dir.join("bash")) {
            for entry in entries.flatten() {
                if entry
                    .file_name()
                    .to_string_lossy()
                    .starts_with(".bash-history-")
                {
                    let _ = std::fs::remove_file(entry.path());
                }
            }
        }
        let files = [
            ("bash/calyx.bash", BASH),
            ("zsh/.zshenv", ZSHENV),
            ("fish/fish/vendor_conf.d/calyx.fish", FISH),
        ];
        for (name, text) in files {
            let path = dir.join(name);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(path, text)?;
        }
        Ok(Self {
            dir: dir.to_path_buf(),
        })
    }

    /// Writes the scripts again (the runtime directory was removed with them: see
    /// `socket_keeper`), so that new panes still find them.
    pub fn reinstall(&self) -> std::io::Result<()> {
        Self::install(&self.dir).map(drop)
    }

    /// Turns the integration on for a pane about to run `command` (empty: `$SHELL` from `env`)
    /// when that is a bare bash, zsh or fish: returns the command to start instead and adds to
    /// `env`. Anything else (arguments, other programs) is left alone.
    pub fn activate(
        &self,
        command: &[String],
        env: &mut Vec<(String, String)>,
    ) -> Option<(Shell, Vec<String>)> {
        let program = match command {
            [] => env
                .iter()
                .find(|(k, _)| k == "SHELL")
                .map(|(_, v)| v.clone())
                .filter(|s| !s.is_empty())?,
            [one] => one.clone(),
            _ => return None,
        };
        let shell = Shell::of(&program)?;
        let dir = |sub: &str| self.dir.join(sub).display().to_string();
        let take = |env: &mut Vec<(String, String)>, key: &str| {
            let old = env.iter().position(|(k, _)| k == key);
            old.map(|i| env.remove(i).1)
        };
        let command = match shell {
            Shell::Bash => {
                env.push(("CALYX_SHELL_DIR".into(), dir("bash")));
                vec![program, "--rcfile".into(), dir("bash/calyx.bash")]
            }
            Shell::Zsh => {
                if let Some(old) = take(env, "ZDOTDIR") {
                    env.push(("CALYX_ZSH_ZDOTDIR".into(), old));
                }
                env.push(("ZDOTDIR".into(), dir("zsh")));
                vec![program]
            }
            Shell::Fish => {
                let old = take(env, "XDG_DATA_DIRS");
                let rest = old.clone().filter(|o| !o.is_empty());
                let rest = rest.unwrap_or_else(|| XDG_DATA_DIRS_DEFAULT.to_string());
                if let Some(old) = old {
                    env.push(("CALYX_FISH_XDG_DATA_DIRS".into(), old));
                }
                env.push(("XDG_DATA_DIRS".into(), format!("{}:{rest}", dir("fish"))));
                vec![program]
            }
        };
        Some((shell, command))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn activates_bare_shells_only_and_keeps_the_users_dirs() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let si = ShellIntegration::install(tmp.path()).expect("install");
        assert!(tmp.path().join("zsh/.zshenv").is_file());

        let mut e = env(&[("SHELL", "/bin/bash")]);
        let (shell, cmd) = si.activate(&[], &mut e).expect("bash");
        assert_eq!(shell, Shell::Bash);
        assert_eq!(cmd[1], "--rcfile");

        let mut e = env(&[("ZDOTDIR", "/home/me/.zsh")]);
        let (_, cmd) = si.activate(&["zsh".into()], &mut e).expect("zsh");
        assert_eq!(cmd, ["zsh"]);
        assert!(e.contains(&("CALYX_ZSH_ZDOTDIR".into(), "/home/me/.zsh".into())));
        assert_eq!(e.iter().filter(|(k, _)| k == "ZDOTDIR").count(), 1);

        let mut e = env(&[]);
        si.activate(&["/usr/bin/fish".into()], &mut e)
            .expect("fish");
        let dirs = e
            .iter()
            .find(|(k, _)| k == "XDG_DATA_DIRS")
            .map(|(_, v)| v.clone());
        assert!(dirs.is_some_and(|d| d.ends_with(":/usr/local/share:/usr/share")));
        assert!(!e.iter().any(|(k, _)| k == "CALYX_FISH_XDG_DATA_DIRS"));

        let mut e = env(&[("SHELL", "/bin/sh")]);
        assert!(si.activate(&[], &mut e).is_none());
        assert!(si
            .activate(&["bash".into(), "-c".into(), "x".into()], &mut e)
            .is_none());
        assert!(si.activate(&["vim".into()], &mut e).is_none());
    }
}
