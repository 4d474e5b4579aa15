//! A real OpenSSH server for the `--remote` tests (issue 20): its own host key, a user key
//! made for the test, listening on 127.0.0.1 at a free port, and a "remote machine" that is a
//! second calyx world (its own HOME, runtime, state and config directories) set on every
//! session by sshd's `SetEnv`. The client reaches it through `CALYX_SSH='ssh -F CONFIG'`
//! with the alias [`HOST`], as a user's ssh config would.
//!
//! Without /usr/sbin/sshd the tests skip, unless `CI` or `CALYX_REQUIRE_SSHD=1` is set: then
//! they fail and say what to install (.ci/run installs openssh-server).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::common::{wait_until, Env};

/// The ssh config alias of the remote machine.
pub const HOST: &str = "calyx-remote";

/// Debian's sshd.
pub const SSHD: &str = "/usr/sbin/sshd";

/// Whether sshd is here; panics with the way to install it when the tests must not skip.
pub fn available() -> bool {
    if Path::new(SSHD).exists() {
        return true;
    }
    let required = std::env::var_os("CI").is_some()
        || std::env::var("CALYX_REQUIRE_SSHD").ok().as_deref() == Some("1");
    assert!(
        !required,
        "{SSHD} is missing: `apt-get install -y openssh-server` (the remote tests need a real sshd)"
    );
    eprintln!("skipped: {SSHD} is missing (apt-get install openssh-server)");
    false
}

/// What the remote machine's `calyx` is.
pub enum RemoteCalyx {
    /// The binary under test, on the remote PATH.
    ThisBinary,
    /// None anywhere (for `--install`).
    Missing,
    /// A script standing for another calyx version: its `remote-bridge` prints this header.
    Fake { header: String, version: String },
}

impl RemoteCalyx {
    /// A calyx 0.4.0 of protocol 1 (before live links and calls across machines).
    pub fn protocol_one() -> Self {
        RemoteCalyx::Fake {
            header: "calyx-remote-bridge calyx=0.4.0 protocol=1".into(),
            version: "0.4.0".into(),
        }
    }
}

/// A running sshd in front of a second calyx world.
pub struct Sshd {
    /// The remote machine's calyx world (its `ok`/`run` act on the remote server directly).
    pub remote: Env,
    /// The port sshd listens on (127.0.0.1).
    pub port: u16,
    dir: tempfile::TempDir,
    child: Child,
}

impl Sshd {
    pub fn start(calyx: RemoteCalyx) -> Self {
        Self::start_with(calyx, &[])
    }

    /// [`Sshd::start`] with `extra` variables in every session's environment there (sshd's
    /// `SetEnv`), e.g. `CALYX_BRIDGE_RELAY=1`.
    pub fn start_with(calyx: RemoteCalyx, extra: &[(&str, &str)]) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("calyx-sshd")
            .tempdir()
            .expect("tempdir");
        let d = dir.path();
        let remote = Env::new();
        keygen(&d.join("host_key"));
        keygen(&d.join("user_key"));
        std::fs::copy(d.join("user_key.pub"), d.join("authorized_keys")).expect("authorized");
        let bin = remote.path().join("bin");
        std::fs::create_dir_all(&bin).expect("mkdir bin");
        match calyx {
            RemoteCalyx::ThisBinary => {
                std::os::unix::fs::symlink(crate::common::calyx_bin(), bin.join("calyx"))
                    .expect("symlink calyx");
            }
            RemoteCalyx::Missing => {}
            RemoteCalyx::Fake { header, version } => {
                let script = format!(
                    "#!/bin/sh\ncase \"$1\" in\n--version) echo 'calyx {version}' ;;\n\
                     *) echo '{header}'; sleep 5 ;;\nesac\n"
                );
                write_executable(&bin.join("calyx"), &script);
            }
        }
        // Privilege separation needs this directory; a fresh container has none.
        let _ = std::fs::create_dir_all("/run/sshd");
        let port = free_port();
        let mut env_line = String::from("SetEnv");
        for (k, v) in remote.vars() {
            let v = if k == "PATH" {
                format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display())
            } else {
                v
            };
            if v.is_empty() || v.contains(' ') {
                continue;
            }
            env_line.push_str(&format!(" {k}={v}"));
        }
        for (k, v) in extra {
            env_line.push_str(&format!(" {k}={v}"));
        }
        let config = format!(
            "ListenAddress 127.0.0.1\nPort {port}\nHostKey {hk}\nAuthorizedKeysFile {ak}\n\
             PidFile {pid}\nStrictModes no\nUsePAM no\nPermitRootLogin prohibit-password\n\
             PasswordAuthentication no\nKbdInteractiveAuthentication no\nPrintMotd no\n\
             {env_line}\n",
            hk = d.join("host_key").display(),
            ak = d.join("authorized_keys").display(),
            pid = d.join("sshd.pid").display(),
        );
        std::fs::write(d.join("sshd_config"), config).expect("sshd_config");
        let user = std::env::var("USER").unwrap_or_else(|_| "root".into());
        let client_config = format!(
            "Host {HOST}\n  HostName 127.0.0.1\n  Port {port}\n  User {user}\n  IdentityFile {key}\n\
             \x20 IdentitiesOnly yes\n  UserKnownHostsFile {kh}\n  StrictHostKeyChecking no\n\
             \x20 LogLevel ERROR\n  BatchMode yes\n",
            key = d.join("user_key").display(),
            kh = d.join("known_hosts").display(),
        );
        std::fs::write(d.join("ssh_config"), client_config).expect("ssh_config");
        let child = spawn_sshd(d);
        let sshd = Self {
            remote,
            port,
            dir,
            child,
        };
        sshd.wait_listening();
        sshd
    }

    fn wait_listening(&self) {
        wait_until("sshd listening", || {
            std::net::TcpStream::connect(("127.0.0.1", self.port))
                .ok()
                .map(|_| ())
        });
    }

    /// Starts sshd again after [`Sshd::stop`], on the same port with the same keys.
    pub fn restart(&mut self) {
        self.child = spawn_sshd(self.dir.path());
        self.wait_listening();
    }

    /// `CALYX_SSH` for the client: the user's ssh with this test's config.
    pub fn calyx_ssh(&self) -> String {
        format!("ssh -F {}", self.dir.path().join("ssh_config").display())
    }

    /// The local world's variables plus `CALYX_SSH`.
    pub fn client_vars(&self, local: &Env) -> Vec<(String, String)> {
        let mut vars = local.vars();
        vars.push(("CALYX_SSH".into(), self.calyx_ssh()));
        vars
    }

    /// Runs `calyx ARGS` in the local world with `CALYX_SSH` set.
    pub fn client_run(&self, local: &Env, args: &[&str]) -> std::process::Output {
        Command::new(crate::common::calyx_bin())
            .args(args)
            .env_clear()
            .envs(self.client_vars(local))
            .stdin(Stdio::null())
            .output()
            .expect("run calyx")
    }

    /// [`Sshd::client_run`], asserting success; returns stdout.
    pub fn client_ok(&self, local: &Env, args: &[&str]) -> String {
        let out = self.client_run(local, args);
        assert!(
            out.status.success(),
            "calyx {args:?} failed: {}{}\nsshd log: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            self.log()
        );
        String::from_utf8_lossy(&out.stdout).to_string()
    }

    /// What sshd logged (for failure messages).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("sshd.log")).unwrap_or_default()
    }

    /// Puts an executable script named `name` first on the remote PATH (a fake `uname`).
    pub fn remote_script(&self, name: &str, text: &str) {
        write_executable(&self.remote.path().join("bin").join(name), text);
    }

    /// Stops sshd listening (connections already made go on: sshd serves each in a process
    /// of its own). The remote world stays.
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// The remote machine's home directory.
    pub fn remote_home(&self) -> PathBuf {
        self.remote.path().join("home")
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A passphrase-less ed25519 key pair at `path` and `path.pub`.
pub fn keygen(path: &Path) {
    let out = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(path)
        .output()
        .expect("ssh-keygen");
    assert!(
        out.status.success(),
        "ssh-keygen: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn write_executable(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).expect("write script");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// A port free right now on 127.0.0.1 (sshd binds it a moment later).
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

impl Sshd {
    /// A copy of the harness's ssh config in `local`'s directory, edited by `edit`; returns
    /// the `CALYX_SSH` that uses it. The copy outlives the sshd, and can be made to want a
    /// host-key decision.
    pub fn config_copy(
        &self,
        local: &Env,
        name: &str,
        edit: impl FnOnce(String) -> String,
    ) -> String {
        let original = self
            .calyx_ssh()
            .strip_prefix("ssh -F ")
            .map(str::to_string)
            .expect("CALYX_SSH is ssh -F CONFIG");
        let config = std::fs::read_to_string(original).expect("ssh config");
        let path = local.path().join(name);
        std::fs::write(&path, edit(config)).expect("write ssh config");
        format!("ssh -F {}", path.display())
    }
}

/// Saves two machines in `local`: `build` (the harness's sshd, [`HOST`]) and `down` (a
/// loopback port nothing listens on).
pub fn save_build_and_a_dead_machine(local: &Env) {
    let dead_port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a port")
        .port();
    local.ok(&["machine", "add", "build", HOST]);
    local.ok(&[
        "machine",
        "add",
        "down",
        &format!("ssh://127.0.0.1:{dead_port}"),
    ]);
}

/// sshd in the foreground with the config in `dir`, its log appended to `dir/sshd.log`.
fn spawn_sshd(dir: &Path) -> Child {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("sshd.log"))
        .expect("sshd log");
    Command::new(SSHD)
        .args(["-D", "-e", "-f"])
        .arg(dir.join("sshd_config"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("start sshd")
}
