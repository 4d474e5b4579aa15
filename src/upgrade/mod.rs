//! `calyx server-upgrade` (issue 18 §3): the running server hands everything to a new binary
//! in place. The checks a binary passes first (`check`), what is handed over (`handover`), and
//! the exec that keeps the pid and the descriptors (`exec`). The server's side (taking the
//! snapshot, rebuilding panes around inherited descriptors) is in `server::operations::upgrade`
//! and `server::model::adopt`; the client's (reconnecting) in `client`.

pub mod check;
pub mod client;
pub mod exec;
pub mod handover;
pub mod inherit;
pub mod orphans;

/// `calyx server --check-adopt`: reads a handed-over state on stdin and says whether this
/// binary can take it over (the line [`check::ADOPT_OK`] with its protocol), else why not.
pub fn check_adopt() -> std::process::ExitCode {
    match handover::Handover::read_from(std::io::stdin().lock()) {
        Ok(_) => {
            println!("{}{}", check::ADOPT_OK, handover::PROTOCOL_VERSION);
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// The installed calyx: this process's binary, by its path (after a reinstall replaced the
/// file, `/proc/self/exe` names the old, deleted one: the path now holds the new binary).
pub fn installed_binary() -> anyhow::Result<std::path::PathBuf> {
    let exe = std::env::current_exe()?;
    let text = exe.to_string_lossy();
    Ok(match text.strip_suffix(" (deleted)") {
        Some(path) => std::path::PathBuf::from(path),
        None => exe,
    })
}
