//! Three `harmonia serve` replicas on three hosts sharing one PostgreSQL
//! on a fourth, behind a stock nginx on a fifth (round robin, no
//! affinity: `examples/cluster/nginx.conf`), driven from a sixth by the
//! official MCP Python SDK on the stateless revision
//! (`serve/tests/clients/cluster_checks.py`). Each host is a network
//! namespace on a private bridge (`harmonia_testkit::netns`); nothing
//! listens on the machine's own addresses.
//!
//! In order:
//! - guarded sessions go round robin and the guard holds across replicas;
//! - a credential's session share (3) and its rate (2/s, burst 4) hold
//!   over all three replicas, not per replica;
//! - a replica killed (SIGKILL) in the middle of a guarded call: the step
//!   is recorded not at all, then exactly once when the session goes on
//!   on another replica; the replica is started again;
//! - PostgreSQL restarted while guarded sessions run: refusals are typed
//!   and retryable, every step is recorded once;
//! - one replica cut off from the database (its packets dropped): it says
//!   it is not ready (503 on `/readyz`), refuses guarded calls as
//!   retryable and runs none, and serves again once the link is back,
//!   with no restart.
//!
//! It needs root (`ip netns`). Not root, it fails saying so, unless
//! `HARMONIA_SKIP_MULTI_HOST=1`, when it says loudly that it did not run.

use crate::support::{python, repo};
use harmonia_testkit::netns::{Host, Network, can_make_namespaces};
use harmonia_testkit::postgres::PostgresServer;
use harmonia_testkit::tempdir::TempDir;
use serde_json::json;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const PORT: u16 = 8080;

/// Whether the test can run here; not root: a failure naming why, or,
/// with `HARMONIA_SKIP_MULTI_HOST=1`, a loud note and no run.
fn namespaces_or_skip() -> bool {
    if can_make_namespaces() {
        return true;
    }
    let why = "the multi-host test needs root (it makes network namespaces with `ip netns`)";
    if std::env::var("HARMONIA_SKIP_MULTI_HOST").as_deref() == Ok("1") {
        eprintln!(
            "\n!!! NOT RUN: {why}; HARMONIA_SKIP_MULTI_HOST=1 skipped it. Nothing here was checked. !!!\n"
        );
        return false;
    }
    panic!("{why}; run the tests as root, or set HARMONIA_SKIP_MULTI_HOST=1 to skip it knowingly");
}

/// A child killed (SIGKILL) when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A child stopped with SIGTERM when dropped (nginx's master then stops
/// its workers, which a SIGKILL would leave running), killed if it has
/// not exited within 10 s.
struct Stopped(Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill").args(["-TERM", &self.0.id().to_string()]).status();
        for _ in 0..200 {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One replica: its host, its config, its process while it runs.
struct Replica {
    name: String,
    host: Host,
    dir: PathBuf,
    running: Option<Running>,
}

impl Replica {
    fn url(&self) -> String {
        format!("http://{}:{PORT}", self.host.address)
    }

    /// Start it, and wait (at most 120 s) until it listens.
    fn start(&mut self) {
        let mut child = self
            .host
            .command(env!("CARGO_BIN_EXE_harmonia"))
            .args(["serve", "--http", &format!("{}:{PORT}", self.host.address), "--config"])
            .arg(self.dir.join("harmonia.toml"))
            .arg("--skills")
            .arg(self.dir.join("skills"))
            .arg("--serve-config")
            .arg(self.dir.join(format!("serve-{}.toml", self.name)))
            .env("XDG_DATA_HOME", &self.dir)
            .env("HARMONIA_LOG", "warn")
            .env_remove("HARMONIA_CONFIG")
            .env_remove("HARMONIA_WORKSPACE")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (said, listening) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = said.send(line);
        });
        let line =
            listening.recv_timeout(Duration::from_secs(120)).expect("the replica says where it listens");
        assert!(line.trim().ends_with(&self.url()), "{}: {line}", self.name);
        self.running = Some(Running(child));
    }

    /// Kill it with SIGKILL, as a machine that dies.
    fn kill(&mut self) {
        self.running.take();
    }
}

/// A phase of `cluster_checks.py` running in the client's host.
struct Phase {
    name: String,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    seen: String,
}

impl Phase {
    fn start(client: &Host, name: &str, settings: &serde_json::Value) -> Self {
        let mut child = client
            .command(python())
            .arg(repo().join("serve/tests/clients/cluster_checks.py"))
            .arg(name)
            .arg(settings.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout: ChildStdout = child.stdout.take().unwrap();
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    return;
                }
            }
        });
        Self { name: name.to_owned(), child, stdin, lines, seen: String::new() }
    }

    /// The lines up to one starting with `wanted` (at most 120 s): that line.
    fn until(&mut self, wanted: &str) -> String {
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(120))
                .unwrap_or_else(|_| panic!("phase {} never said {wanted:?}:\n{}", self.name, self.seen));
            println!("[{}] {line}", self.name);
            self.seen.push_str(&line);
            self.seen.push('\n');
            if line.starts_with(wanted) {
                return line;
            }
        }
    }

    fn say(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// Wait for its end: it passed.
    fn passed(mut self) {
        self.until(&format!("phase {} passed", self.name));
        let status = self.child.wait().unwrap();
        assert!(status.success(), "phase {}:\n{}", self.name, self.seen);
    }
}

/// `harmonia serve token add` into `dir`'s token file; the token.
fn token(dir: &Path, extra: &[&str]) -> String {
    crate::support::add_token_with(dir, "ws_demo", "get_job_status,hostile_loop", extra).0
}

fn write_private(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
}

/// The shared files every replica reads: host config, skills, tokens,
/// keys; and each replica's serve config. The tokens, by use.
fn configure(
    dir: &Path,
    database_url: &str,
    password_file: &Path,
    replicas: &[&Host],
    balancer: &Host,
) -> serde_json::Value {
    let hostile_loop = harmonia_artifacts::test_guest("hostile-loop").unwrap();
    write_private(&dir.join("trace.key"), &"5a".repeat(32));
    std::fs::write(
        dir.join("harmonia.toml"),
        format!(
            "mock = true\n[plugins]\nfiles = [{hostile_loop:?}]\n[limits]\nmax_deadline_ms = 2000\n[trace]\nkey_file = {:?}\n",
            dir.join("trace.key")
        ),
    )
    .unwrap();
    // The repository's skills; trend-scan also allows the hostile loop
    // (whose descriptor lists it), for a guarded call that lasts.
    for skill in std::fs::read_dir(repo().join("skills")).unwrap() {
        let skill = skill.unwrap().path();
        let name = skill.file_name().unwrap().to_owned();
        let mut text = std::fs::read_to_string(skill.join("SKILL.md")).unwrap();
        if name == "trend-scan" {
            text = text.replace(
                "allowed-tools: fetch_trend_signals, search_trend_signals\n",
                "allowed-tools: fetch_trend_signals, search_trend_signals, hostile_loop\n",
            );
        }
        std::fs::create_dir_all(dir.join("skills").join(&name)).unwrap();
        std::fs::write(dir.join("skills").join(&name).join("SKILL.md"), text).unwrap();
    }
    write_private(&dir.join("session.key"), "a-handle-key-every-replica-shares-0123456789\n");
    for replica in replicas {
        let name = replica.namespace.rsplit('-').next().unwrap();
        std::fs::write(
            dir.join(format!("serve-{name}.toml")),
            format!(
                "tokens_file = \"tokens.toml\"\nreplica_id = \"{name}\"\nallowed_hosts = [\"{}\", \"{}\"]\n\
                 [sessions]\nkey_file = \"session.key\"\nledger = \"{database_url}\"\npassword_file = {password_file:?}\ntimeout_ms = 1000\n\
                 [limits]\nmax_sessions = 1000\nmax_sessions_per_credential = 3\nidle_session_s = 60\n",
                balancer.address, replica.address
            ),
        )
        .unwrap();
    }
    let pool: Vec<String> = (0..40).map(|_| token(dir, &[])).collect();
    json!({
        "tokens": {
            "limited": token(dir, &[]),
            "rated": token(dir, &["--calls-per-second", "2", "--burst", "4"]),
            "slow": token(dir, &[]),
            "cut": token(dir, &[]),
        },
        "pool": pool,
    })
}

/// nginx on `balancer` with the example config, its addresses put in.
fn balancer(dir: &Path, balancer: &Host, replicas: &[&Host]) -> Stopped {
    let mut config = std::fs::read_to_string(repo().join("examples/cluster/nginx.conf")).unwrap();
    config = config.replace("10.0.0.20:8080", &format!("{}:{PORT}", balancer.address));
    for (n, replica) in replicas.iter().enumerate() {
        config = config.replace(&format!("10.0.0.1{}:8080", n + 1), &format!("{}:{PORT}", replica.address));
    }
    let prefix = dir.join("nginx");
    std::fs::create_dir_all(prefix.join("tmp")).unwrap();
    std::fs::write(prefix.join("nginx.conf"), config).unwrap();
    let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx"]
        .into_iter()
        .find(|path| Path::new(path).exists())
        .expect("nginx is missing: run scripts/install-test-deps.sh (it installs Debian's nginx)");
    let child = balancer
        .command(nginx)
        .arg("-p")
        .arg(&prefix)
        .args(["-c", "nginx.conf", "-e", "stderr", "-g", "daemon off; user root;"])
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    Stopped(child)
}

#[test]
fn three_replicas_on_three_hosts_share_one_postgresql_and_keep_every_promise_through_faults() {
    if !namespaces_or_skip() {
        return;
    }
    let dir = TempDir::new("cluster");
    let mut network = Network::new("hc");
    let db = network.host("db", 10);
    let hosts: Vec<Host> = (1..=3).map(|n| network.host(&format!("r{n}"), 10 + n as u8)).collect();
    let lb = network.host("lb", 20);
    let client = network.host("cl", 30);

    let postgres = PostgresServer::start_in(Some(&db.namespace), &db.address, 5432);
    let database = postgres.database("cluster");
    let password = postgres.password_file(dir.path());
    let replica_hosts: Vec<&Host> = hosts.iter().collect();
    let mut settings = configure(dir.path(), &postgres.url(&database), &password, &replica_hosts, &lb);
    let mut replicas: Vec<Replica> = hosts
        .iter()
        .enumerate()
        .map(|(n, host)| Replica {
            name: format!("r{}", n + 1),
            host: host.clone(),
            dir: dir.path().to_owned(),
            running: None,
        })
        .collect();
    for replica in &mut replicas {
        replica.start();
    }
    let _nginx = balancer(dir.path(), &lb, &replica_hosts);
    settings["balancer"] = json!(format!("http://{}:{PORT}", lb.address));
    settings["replicas"] =
        replicas.iter().map(|replica| (replica.name.clone(), json!(replica.url()))).collect();
    let phase = |name: &str| Phase::start(&client, name, &settings);

    phase("ready").passed();
    phase("round-robin").passed();
    phase("share").passed();
    phase("rate").passed();

    // A replica dies in the middle of a guarded call.
    let mut kill = phase("kill");
    let holding = kill.until("holding ");
    let holder = holding.trim_start_matches("holding ").trim().to_owned();
    let dead = replicas.iter_mut().find(|replica| replica.name == holder).expect("a replica's name");
    dead.kill();
    kill.say("killed");
    kill.passed();
    dead.start();
    phase("ready").passed();

    // PostgreSQL restarts while guarded sessions run.
    let mut restart = phase("database-restart");
    restart.until("looping");
    std::thread::sleep(Duration::from_millis(800));
    postgres.restart();
    restart.passed();

    // r2 loses its link to the database, then gets it back.
    replicas[1].host.cut_from(&db.address);
    let mut cut = phase("cut");
    cut.until("mend it");
    replicas[1].host.mend_to(&db.address);
    cut.say("mended");
    cut.passed();

    drop(replicas);
}
