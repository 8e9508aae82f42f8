//! A real PostgreSQL server for tests: Debian's binaries, a cluster made
//! by `initdb` in a temporary directory, a password for TCP clients (the
//! tests pass it as `harmonia serve` takes it: from a file or the
//! environment), and `fsync` off (a test never survives a power cut).
//!
//! [`PostgresServer::start`] listens on 127.0.0.1; [`PostgresServer::start_in`]
//! inside a network namespace a multi-host test made;
//! [`PostgresServer::start_tls`] on 127.0.0.1 accepting TCP clients only
//! over TLS, its certificate (for 127.0.0.1 and localhost) issued by a
//! certificate authority of its own ([`PostgresServer::ca_file`]). As root the server
//! runs as the `postgres` user (PostgreSQL refuses root). It can be
//! stopped, started and restarted in the middle of a test, and it stops
//! when dropped. [`shared`] is one server for a whole test process, each
//! test taking a database of its own ([`PostgresServer::database`]).

use crate::tempdir::TempDir;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The role every test connects as (the cluster's superuser).
pub const ROLE: &str = "harmonia";

/// Where Debian puts the server's binaries: the newest version installed.
pub fn binaries() -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path().join("bin"))
        .filter(|bin| bin.join("initdb").exists())
        .collect();
    found.sort_by_key(|bin| {
        bin.parent()
            .and_then(Path::file_name)
            .and_then(|name| name.to_str())
            .and_then(|name| name.parse::<u32>().ok())
            .unwrap_or(0)
    });
    found
        .pop()
        .expect("PostgreSQL is missing: run scripts/install-test-deps.sh (it installs Debian's postgresql)")
}

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// A running (or stopped) cluster.
pub struct PostgresServer {
    bin: PathBuf,
    dir: TempDir,
    listen: String,
    port: u16,
    netns: Option<String>,
    password: String,
    /// TLS on, and required of every TCP client.
    tls: bool,
    child: Mutex<Option<Child>>,
}

/// One server for the whole test process, started on first use.
pub fn shared() -> &'static PostgresServer {
    static SERVER: OnceLock<PostgresServer> = OnceLock::new();
    SERVER.get_or_init(PostgresServer::start)
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").expect("a free port").local_addr().expect("its address").port()
}

impl PostgresServer {
    /// A new cluster listening on 127.0.0.1 (a free port).
    pub fn start() -> Self {
        Self::start_in(None, "127.0.0.1", free_port())
    }

    /// A new cluster listening on `listen:port`, inside network namespace
    /// `netns` when given.
    pub fn start_in(netns: Option<&str>, listen: &str, port: u16) -> Self {
        Self::start_with(netns, listen, port, false)
    }

    /// A new cluster on 127.0.0.1 that speaks TCP only over TLS (`hostssl`
    /// rules alone); its certificate authority is [`Self::ca_file`].
    pub fn start_tls() -> Self {
        Self::start_with(None, "127.0.0.1", free_port(), true)
    }

    fn start_with(netns: Option<&str>, listen: &str, port: u16, tls: bool) -> Self {
        let bin = binaries();
        let dir = TempDir::new("postgres");
        let mut bytes = [0u8; 12];
        getrandom_bytes(&mut bytes);
        let password: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
        let data = dir.path().join("data");
        std::fs::write(dir.path().join("pwfile"), format!("{password}\n")).expect("write the password file");
        if is_root() {
            // The server's own user must own its files.
            let chown = Command::new("chown").args(["-R", "postgres:postgres"]).arg(dir.path()).status();
            assert!(chown.is_ok_and(|status| status.success()), "chown to postgres failed");
            let _ = Command::new("chmod").arg("755").arg(dir.path()).status();
        }
        let initdb = Self::as_server_user(None)
            .arg(bin.join("initdb"))
            .arg("-D")
            .arg(&data)
            .args(["-U", ROLE, "--auth-local=trust", "--auth-host=scram-sha-256", "--no-sync", "-E", "UTF8"])
            .arg(format!("--pwfile={}", dir.path().join("pwfile").display()))
            .output()
            .expect("run initdb");
        assert_ok(&initdb, "initdb");
        // Clients of other namespaces' addresses, with the password.
        let hba = data.join("pg_hba.conf");
        let mut rules = std::fs::read_to_string(&hba).expect("read pg_hba.conf");
        rules.push_str("host all all 0.0.0.0/0 scram-sha-256\n");
        if tls {
            // Every TCP rule over TLS only; the socket stays trusted.
            rules = rules.lines().map(|line| line.replacen("host ", "hostssl ", 1) + "\n").collect();
            write_certificates(dir.path(), &data);
        }
        std::fs::write(&hba, rules).expect("write pg_hba.conf");
        let server = Self {
            bin,
            dir,
            listen: listen.to_owned(),
            port,
            netns: netns.map(str::to_owned),
            password,
            tls,
            child: Mutex::new(None),
        };
        server.start_again();
        server
    }

    /// A command run as the server's user (`postgres` when we are root),
    /// inside `netns` when given.
    fn as_server_user(netns: Option<&str>) -> Command {
        let mut command = match netns {
            Some(netns) => {
                let mut command = Command::new("ip");
                command.args(["netns", "exec", netns]);
                command
            }
            None => Command::new("env"),
        };
        if is_root() {
            command.args(["runuser", "-u", "postgres", "--"]);
        }
        command
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// Start the server (again), and wait until it accepts connections.
    pub fn start_again(&self) {
        let mut child = self.child.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if child.is_some() {
            return;
        }
        let started = Self::as_server_user(self.netns.as_deref())
            .arg(self.bin.join("postgres"))
            .arg("-D")
            .arg(self.data())
            .args(["-p", &self.port.to_string(), "-c", &format!("listen_addresses={}", self.listen)])
            .arg("-k")
            .arg(self.data())
            .args(["-c", "fsync=off", "-c", "max_connections=200", "-c", "log_min_messages=warning"])
            .args(["-c", if self.tls { "ssl=on" } else { "ssl=off" }])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start postgres");
        *child = Some(started);
        drop(child);
        self.watch();
        let deadline = Instant::now() + Duration::from_secs(30);
        while !self.answers() {
            assert!(Instant::now() < deadline, "postgres did not start within 30 s on {}", self.address());
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Stop the server and remove its files when this process is gone,
    /// however it ends (a server in a static is never dropped; a test that
    /// panics may not drop it either): a watchdog polls this process.
    fn watch(&self) {
        let script = format!(
            "while kill -0 {parent} 2>/dev/null; do sleep 1; done; \
             pid=$(head -n 1 '{data}/postmaster.pid' 2>/dev/null) && kill -INT \"$pid\" 2>/dev/null; \
             while [ -n \"$pid\" ] && kill -0 \"$pid\" 2>/dev/null; do sleep 0.2; done; rm -rf '{dir}'",
            parent = std::process::id(),
            data = self.data().display(),
            dir = self.dir.path().display(),
        );
        let _ = Command::new("sh")
            .args(["-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
    }

    /// Whether the server accepts a query now.
    pub fn answers(&self) -> bool {
        self.psql_output("postgres", "SELECT 1").is_ok_and(|output| output.status.success())
    }

    /// Stop the server: `fast` (clients disconnected, a clean shutdown) or,
    /// when not, killed with SIGKILL (a crash).
    pub fn stop(&self, fast: bool) {
        let mut child = self.child.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(mut running) = child.take() else { return };
        if fast {
            let stopped = Self::as_server_user(None)
                .arg(self.bin.join("pg_ctl"))
                .arg("-D")
                .arg(self.data())
                .args(["-m", "fast", "-w", "-t", "30", "stop"])
                .output();
            if !stopped.is_ok_and(|output| output.status.success()) {
                let _ = running.kill();
            }
        } else {
            // The postmaster's pid (runuser's child when we are root).
            let pid = std::fs::read_to_string(self.data().join("postmaster.pid"))
                .ok()
                .and_then(|text| text.lines().next().map(str::to_owned));
            match pid {
                Some(pid) => drop(Command::new("kill").args(["-KILL", &pid]).status()),
                None => drop(running.kill()),
            }
        }
        let _ = running.wait();
        if !fast {
            // Its backends die with it; wait until the port is free.
            let deadline = Instant::now() + Duration::from_secs(10);
            while self.answers() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }

    /// Stop (cleanly) and start again.
    pub fn restart(&self) {
        self.stop(true);
        self.start_again();
    }

    /// `host:port` clients connect to.
    pub fn address(&self) -> String {
        format!("{}:{}", self.listen, self.port)
    }

    /// The URL of `database`, without its password (as `harmonia serve`
    /// wants it).
    pub fn url(&self, database: &str) -> String {
        format!("postgres://{ROLE}@{}/{database}", self.address())
    }

    /// The certificate authority (PEM) that issued a TLS server's
    /// certificate ([`Self::start_tls`]).
    pub fn ca_file(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    /// The role's password.
    pub fn password(&self) -> &str {
        &self.password
    }

    /// A file holding the password (mode 600), as `sessions.password_file`
    /// names it.
    pub fn password_file(&self, dir: &Path) -> PathBuf {
        let file = dir.join("database-password");
        std::fs::write(&file, format!("{}\n", self.password)).expect("write the password file");
        set_mode_600(&file);
        file
    }

    /// A new database of its own: its name, unique in this process.
    pub fn database(&self, label: &str) -> String {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "{}_{}_{}",
            label.replace(|c: char| !c.is_ascii_alphanumeric(), "_"),
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        )
        .to_lowercase();
        self.psql("postgres", &format!("CREATE DATABASE {name}"));
        name
    }

    fn psql_output(&self, database: &str, sql: &str) -> std::io::Result<Output> {
        // Over the server's socket (trusted), as the superuser: a path
        // socket is reached from any network namespace.
        let mut command = Command::new(self.bin.join("psql"));
        command
            .arg("-h")
            .arg(self.data())
            .args(["-p", &self.port.to_string(), "-U", ROLE, "-d", database])
            .args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql])
            .output()
    }

    /// Run `sql` on `database`; its output (unaligned, tuples only).
    pub fn psql(&self, database: &str, sql: &str) -> String {
        let output = self.psql_output(database, sql).expect("run psql");
        assert_ok(&output, &format!("psql {sql:?}"));
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    }
}

impl Drop for PostgresServer {
    fn drop(&mut self) {
        self.stop(true);
    }
}

fn assert_ok(output: &Output, what: &str) {
    assert!(
        output.status.success(),
        "{what} failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A certificate authority (`dir/ca.pem`) and the server's certificate
/// and key it issued, for 127.0.0.1 and localhost, where the server reads
/// them (`data/server.crt`, `data/server.key`, the key readable by the
/// server's user alone).
fn write_certificates(dir: &Path, data: &Path) {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
    let authority_key = KeyPair::generate().expect("a key");
    let mut authority = CertificateParams::new(Vec::<String>::new()).expect("parameters");
    authority.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    authority.distinguished_name.push(DnType::CommonName, "harmonia test PostgreSQL CA");
    let authority_certificate = authority.self_signed(&authority_key).expect("the authority's certificate");
    let server_key = KeyPair::generate().expect("a key");
    let mut server =
        CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()]).expect("parameters");
    server.distinguished_name.push(DnType::CommonName, "localhost");
    let server_certificate = server
        .signed_by(&server_key, &Issuer::from_params(&authority, &authority_key))
        .expect("the server's certificate");
    std::fs::write(dir.join("ca.pem"), authority_certificate.pem()).expect("write ca.pem");
    std::fs::write(data.join("server.crt"), server_certificate.pem()).expect("write server.crt");
    let key = data.join("server.key");
    std::fs::write(&key, server_key.serialize_pem()).expect("write server.key");
    set_mode_600(&key);
    if is_root() {
        let chown =
            Command::new("chown").args(["postgres:postgres"]).arg(&key).arg(data.join("server.crt")).status();
        assert!(chown.is_ok_and(|status| status.success()), "chown to postgres failed");
    }
}

fn set_mode_600(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).expect("chmod 600");
}

/// Random bytes from the kernel (a password nobody else knows).
fn getrandom_bytes(bytes: &mut [u8]) {
    use std::io::Read;
    std::fs::File::open("/dev/urandom")
        .and_then(|mut random| random.read_exact(bytes))
        .expect("/dev/urandom");
}
