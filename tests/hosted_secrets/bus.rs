//! A private D-Bus session bus for one test (`dbus-daemon` with no service files, so nothing is
//! activated behind the test's back), optionally with a real `gnome-keyring-daemon` providing
//! the Secret Service on it, locked or unlocked. Everything lives in a temporary directory:
//! the keyrings, the runtime directory, the bus socket; dropping it ends both daemons.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Set in CI (`.ci/run`, with the packages installed): a missing daemon fails the test
/// instead of skipping it.
pub const REQUIRE: &str = "CALYX_REQUIRE_SECRET_SERVICE";

/// How long a daemon may take to come up on a loaded machine.
const START_DEADLINE: Duration = Duration::from_secs(30);

/// Says why a test cannot run here: a failure when [`REQUIRE`] is set, else a printed skip.
pub fn skip(why: &str) {
    assert!(
        std::env::var_os(REQUIRE).is_none(),
        "{REQUIRE} is set but {why}"
    );
    eprintln!("SKIPPED: {why}");
}

/// Whether `program` is on PATH.
pub fn installed(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// The state of the Secret Service on the private bus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// No Secret Service on the bus at all.
    None,
    /// The name is D-Bus-activatable but its program never takes it: every call waits for an
    /// activation that never finishes (a hung provider, as other projects report).
    Stuck,
    /// gnome-keyring running, never unlocked (no login keyring, no password given).
    Locked,
    /// gnome-keyring started with `--unlock` and a password on stdin.
    Unlocked,
}

pub struct Bus {
    pub dir: tempfile::TempDir,
    pub address: String,
    daemons: Vec<Child>,
}

impl Bus {
    /// A bus with `provider` on it; `None` (after printing why) when the daemons are not
    /// installed.
    pub fn start(provider: Provider) -> Option<Bus> {
        let needed: &[&str] = match provider {
            Provider::None | Provider::Stuck => &["dbus-daemon"],
            _ => &["dbus-daemon", "dbus-send", "gnome-keyring-daemon"],
        };
        if let Some(missing) = needed.iter().find(|p| !installed(p)) {
            skip(&format!(
                "{missing} is not installed (Debian: apt-get install --no-install-recommends dbus gnome-keyring)"
            ));
            return None;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        for sub in ["run", "data", "home"] {
            std::fs::create_dir_all(dir.path().join(sub)).expect("mkdir");
        }
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            dir.path().join("run"),
            std::fs::Permissions::from_mode(0o700),
        )
        .expect("chmod");
        let config = dir.path().join("bus.conf");
        let services = (provider == Provider::Stuck).then(|| stuck_service(dir.path()));
        std::fs::write(
            &config,
            bus_config(&dir.path().join("bus"), services.as_deref()),
        )
        .expect("bus config");
        let mut daemon = Command::new("dbus-daemon")
            .arg(format!("--config-file={}", config.display()))
            .args(["--nofork", "--print-address=1"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("dbus-daemon starts");
        let mut line = String::new();
        let stdout = daemon.stdout.take().expect("piped stdout");
        // dbus-daemon prints its address once it listens.
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("dbus-daemon prints its address");
        let address = line.trim().to_string();
        assert!(address.starts_with("unix:"), "address: {address:?}");
        let mut bus = Bus {
            dir,
            address,
            daemons: vec![daemon],
        };
        if matches!(provider, Provider::Locked | Provider::Unlocked) {
            bus.start_keyring(provider == Provider::Unlocked);
        }
        Some(bus)
    }

    /// The environment a client of this bus (and only this bus) gets.
    pub fn env(&self) -> Vec<(String, String)> {
        let d = self.dir.path();
        vec![
            ("DBUS_SESSION_BUS_ADDRESS".into(), self.address.clone()),
            ("XDG_RUNTIME_DIR".into(), path(&d.join("run"))),
            ("XDG_DATA_HOME".into(), path(&d.join("data"))),
            ("XDG_STATE_HOME".into(), path(&d.join("state"))),
            ("XDG_CONFIG_HOME".into(), path(&d.join("config"))),
            ("HOME".into(), path(&d.join("home"))),
        ]
    }

    fn start_keyring(&mut self, unlock: bool) {
        let mut command = Command::new("gnome-keyring-daemon");
        command
            .args(["--foreground", "--components=secrets"])
            .envs(self.env())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if unlock {
            command.arg("--unlock").stdin(Stdio::piped());
        } else {
            command.stdin(Stdio::null());
        }
        let mut keyring = command.spawn().expect("gnome-keyring-daemon starts");
        if let Some(mut stdin) = keyring.stdin.take() {
            // The login keyring's password; the daemon reads it to its end.
            stdin
                .write_all(b"calyx-test-password")
                .expect("password written");
        }
        self.daemons.push(keyring);
        self.wait_for_name("org.freedesktop.secrets");
    }

    /// Polls the bus until `name` has an owner.
    fn wait_for_name(&self, name: &str) {
        let deadline = Instant::now() + START_DEADLINE;
        loop {
            let out = Command::new("dbus-send")
                .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
                .args([
                    "--session",
                    "--print-reply",
                    "--dest=org.freedesktop.DBus",
                    "/org/freedesktop/DBus",
                    "org.freedesktop.DBus.NameHasOwner",
                    &format!("string:{name}"),
                ])
                .output()
                .expect("dbus-send runs");
            if String::from_utf8_lossy(&out.stdout).contains("boolean true") {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{name} did not appear on the bus within {START_DEADLINE:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Bus {
    fn drop(&mut self) {
        for daemon in self.daemons.iter_mut().rev() {
            let _ = daemon.kill();
            let _ = daemon.wait();
        }
    }
}

fn path(p: &Path) -> String {
    p.display().to_string()
}

/// How long the stuck provider's program lives; longer than any call is given (3 s), and it
/// ends by itself after the bus is gone.
const STUCK_SECONDS: u32 = 20;

/// A service directory whose `org.freedesktop.secrets` starts a program that never takes the
/// name.
fn stuck_service(dir: &Path) -> PathBuf {
    let services = dir.join("services");
    std::fs::create_dir_all(&services).expect("mkdir");
    std::fs::write(
        services.join("org.freedesktop.secrets.service"),
        format!("[D-BUS Service]\nName=org.freedesktop.secrets\nExec=/bin/sleep {STUCK_SECONDS}\n"),
    )
    .expect("service file");
    services
}

/// A session bus that listens on `socket` and activates only what `services` holds (nothing
/// without it, so "no provider" is really none).
fn bus_config(socket: &Path, services: Option<&Path>) -> String {
    let servicedir = services
        .map(|d| format!("  <servicedir>{}</servicedir>\n", d.display()))
        .unwrap_or_default();
    format!(
        r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={}</listen>
  <auth>EXTERNAL</auth>
{}  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"#,
        socket.display(),
        servicedir
    )
}
