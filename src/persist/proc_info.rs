//! What /proc says about a pane's processes: the working directory and argv, as list-panes and
//! `ps` show them. Read on the writer thread, never on the owner.

/// A process's working directory.
pub fn cwd(pid: u32) -> Option<String> {
    std::fs::read_link(format!("/proc/{pid}/cwd"))
        .ok()
        .map(|p| p.display().to_string())
}

/// A process's argv (empty when it is gone or has none, as a zombie does).
pub fn argv(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|bytes| split_cmdline(&bytes))
        .unwrap_or_default()
}

/// /proc's cmdline: NUL-terminated arguments.
pub fn split_cmdline(bytes: &[u8]) -> Vec<String> {
    bytes
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cmdline_splits_on_nul_and_drops_the_terminator() {
        assert_eq!(
            split_cmdline(b"less\0notes file.txt\0"),
            vec!["less".to_string(), "notes file.txt".to_string()]
        );
        assert!(split_cmdline(b"").is_empty());
    }

    #[test]
    fn this_process_has_an_argv_and_a_cwd() {
        let me = std::process::id();
        assert!(!argv(me).is_empty());
        let here = std::env::current_dir().expect("cwd").display().to_string();
        assert_eq!(cwd(me), Some(here));
    }
}
