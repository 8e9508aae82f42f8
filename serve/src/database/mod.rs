//! The PostgreSQL database that replicas on several machines share: its
//! address and password, a pool of connections, every wait on it bounded,
//! its schema migrated, and whether it can serve now.
//!
//! - The address is one URL in the serve config (`[sessions] ledger =
//!   "postgres://user@host:port/db"`); the password never is: it comes
//!   from `[sessions] password_file` or `$HARMONIA_LEDGER_PASSWORD`, and a
//!   URL carrying one is refused at start (without repeating it). No log
//!   line or message names the password or the URL's query.
//! - TLS: `sslmode=require` in the URL (or libpq's `verify-full` and
//!   `verify-ca`, which mean the same here) speaks TLS (rustls) and always
//!   verifies the server's certificate, its chain and its host name,
//!   against `[sessions] ca_file` or else the Mozilla roots; a connection
//!   that cannot verify fails, never falling back to plain text. Without
//!   `sslmode` (or `disable`) the connection is plain text, for a private
//!   network; `prefer`, which a network in between can silently turn
//!   into plain text, is refused at start.
//! - Every operation ([`Database::run`]) waits at most `[sessions]
//!   timeout_ms` in all, for a connection and for its statements; past it,
//!   or when the database refuses, the connection is dropped from the pool
//!   (a connection cut mid-statement is never reused) and the caller gets
//!   [`LedgerError::Unavailable`]. TCP keepalives and a user timeout make a
//!   silent peer an error at the socket too.
//! - Connections commit asynchronously by default (`synchronous_commit =
//!   off`): only what must survive a crash asks for a durable commit
//!   ([`DURABLE`]). Holds, places, rate buckets and heartbeats are leases
//!   or counters a crash may lose without opening anything.
//! - [`Database::keep`] runs for the server's life: it migrates the
//!   schema (retrying while the database is away), then beats this
//!   replica's heartbeat every [`BEAT`], which also says whether the
//!   database answers and how many replicas beat with this one. A server
//!   whose database is unreachable or not migrated is not ready.
//!
//! Parts: this module, [`migrate`] (versioned migrations, run at start
//! under an advisory lock, or by `harmonia serve migrate`).

pub mod migrate;

use crate::sessions::ledger::{LedgerError, Readiness};
use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod, Runtime};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_postgres::NoTls;
use tokio_postgres::config::SslMode;
use tokio_postgres::error::SqlState;
use tokio_postgres_rustls::MakeRustlsConnect;

/// The environment variable a password may come from.
pub const PASSWORD_VARIABLE: &str = "HARMONIA_LEDGER_PASSWORD";

/// Between two heartbeats.
pub const BEAT: Duration = Duration::from_secs(2);

/// A replica whose heartbeat is older than this is not counted.
pub const GONE_AFTER_S: u32 = 10;

/// Sent before a statement whose commit must survive a crash.
pub const DURABLE: &str = "BEGIN; SET LOCAL synchronous_commit = on";

/// Whether `ledger` (the config's value) names a PostgreSQL database.
pub fn is_url(ledger: &str) -> bool {
    ledger.starts_with("postgres://") || ledger.starts_with("postgresql://")
}

/// Why the database settings are unusable.
#[derive(Debug, thiserror::Error)]
pub enum DatabaseConfigError {
    /// The URL does not parse (the reason, never the URL).
    #[error("sessions.ledger is not a PostgreSQL URL this server can use: {0}")]
    Url(String),
    /// The URL carries a password.
    #[error(
        "sessions.ledger must not carry the password: put it in sessions.password_file (mode 600) or ${PASSWORD_VARIABLE}"
    )]
    PasswordInUrl,
    /// `sslmode=prefer`: TLS that anyone in between can strip.
    #[error(
        "sessions.ledger says sslmode=prefer, which falls back to plain text when anything between refuses TLS: say sslmode=require (TLS, the server's certificate verified) or sslmode=disable (a private network)"
    )]
    Prefer,
    /// A CA file without TLS to use it.
    #[error("sessions.ca_file is for a PostgreSQL ledger whose URL says sslmode=require")]
    CaWithoutTls,
    /// The CA file is unusable.
    #[error("sessions.ca_file {0}: {1}")]
    CaFile(PathBuf, String),
    /// The TLS settings could not be made.
    #[error("TLS to PostgreSQL: {0}")]
    Tls(String),
    /// The password file is unusable.
    #[error("sessions.password_file {0}: {1}")]
    PasswordFile(PathBuf, String),
}

/// `url` parsed: the driver's config (TLS required, or none at all).
fn parse_url(url: &str) -> Result<tokio_postgres::Config, DatabaseConfigError> {
    let lowered = url.to_ascii_lowercase();
    if lowered.contains("sslmode=prefer") {
        return Err(DatabaseConfigError::Prefer);
    }
    // libpq's verifying modes: this server verifies the chain and the
    // host name under any TLS mode, so both are `require` here (the
    // driver knows only disable, prefer and require).
    let url =
        url.replace("sslmode=verify-full", "sslmode=require").replace("sslmode=verify-ca", "sslmode=require");
    let mut config = tokio_postgres::Config::from_str(&url)
        .map_err(|error| DatabaseConfigError::Url(error.to_string()))?;
    if config.get_ssl_mode() != SslMode::Require {
        // No `sslmode` is the driver's `prefer`: plain text, said so.
        config.ssl_mode(SslMode::Disable);
    }
    Ok(config)
}

/// Why `url` (with a CA file or not) cannot be used; the password and the
/// CA file are not read here.
pub fn check_url(url: &str, ca_file: bool) -> Result<(), DatabaseConfigError> {
    check_config(&parse_url(url)?, ca_file)
}

/// Why the parsed `config` (with a CA file or not) cannot be used.
fn check_config(config: &tokio_postgres::Config, ca_file: bool) -> Result<(), DatabaseConfigError> {
    if config.get_password().is_some() {
        return Err(DatabaseConfigError::PasswordInUrl);
    }
    if ca_file && config.get_ssl_mode() != SslMode::Require {
        return Err(DatabaseConfigError::CaWithoutTls);
    }
    Ok(())
}

/// The TLS client: ring's primitives, the safe protocol versions, and
/// the certificates of `ca_file` (PEM) as the only roots, else Mozilla's.
fn tls_client(ca_file: Option<&Path>) -> Result<rustls::ClientConfig, DatabaseConfigError> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let roots = match ca_file {
        None => rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() },
        Some(path) => {
            let failed = |why: String| DatabaseConfigError::CaFile(path.to_owned(), why);
            let mut roots = rustls::RootCertStore::empty();
            for certificate in
                CertificateDer::pem_file_iter(path).map_err(|error| failed(error.to_string()))?
            {
                let certificate = certificate.map_err(|error| failed(error.to_string()))?;
                roots.add(certificate).map_err(|error| failed(error.to_string()))?;
            }
            if roots.is_empty() {
                return Err(failed("holds no certificate".into()));
            }
            roots
        }
    };
    rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map(|builder| builder.with_root_certificates(roots).with_no_client_auth())
        .map_err(|error| DatabaseConfigError::Tls(error.to_string()))
}

/// What the server connects with, checked.
#[derive(Clone)]
pub struct DatabaseSettings {
    config: tokio_postgres::Config,
    /// TLS, when the URL requires it.
    tls: Option<rustls::ClientConfig>,
    /// Most connections in the pool.
    pub pool_size: u32,
    /// The longest an operation waits, in all.
    pub timeout: Duration,
    /// For logs and `/readyz`: host, port and database, nothing else.
    pub described: String,
}

impl std::fmt::Debug for DatabaseSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DatabaseSettings").field("database", &self.described).finish_non_exhaustive()
    }
}

/// Read a password file: one line of secret, not readable by others.
fn read_password(path: &Path) -> Result<String, DatabaseConfigError> {
    let failed = |why: String| DatabaseConfigError::PasswordFile(path.to_owned(), why);
    crate::sessions::check_secret_mode(path).map_err(failed)?;
    let text = std::fs::read_to_string(path).map_err(|error| failed(error.to_string()))?;
    let password = text.trim_end_matches(['\n', '\r']).to_owned();
    if password.is_empty() {
        return Err(failed("is empty".into()));
    }
    Ok(password)
}

impl DatabaseSettings {
    /// Settings for `url`, the password from `password_file` or the
    /// environment (none: the server's own authentication, e.g. `trust`),
    /// the server's certificate checked against `ca_file` when the URL
    /// requires TLS.
    pub fn new(
        url: &str,
        password_file: Option<&Path>,
        ca_file: Option<&Path>,
        pool_size: u32,
        timeout: Duration,
    ) -> Result<Self, DatabaseConfigError> {
        let mut config = parse_url(url)?;
        check_config(&config, ca_file.is_some())?;
        let tls = match config.get_ssl_mode() {
            SslMode::Require => Some(tls_client(ca_file)?),
            _ => None,
        };
        let password = match password_file {
            Some(path) => Some(read_password(path)?),
            None => std::env::var(PASSWORD_VARIABLE).ok().filter(|password| !password.is_empty()),
        };
        if let Some(password) = password {
            config.password(password);
        }
        let hosts: Vec<String> = config
            .get_hosts()
            .iter()
            .map(|host| match host {
                tokio_postgres::config::Host::Tcp(name) => name.clone(),
                tokio_postgres::config::Host::Unix(path) => path.display().to_string(),
            })
            .collect();
        let described = format!(
            "postgres {}:{} database {}{}",
            hosts.join(","),
            config.get_ports().first().copied().unwrap_or(5432),
            config.get_dbname().unwrap_or("(default)"),
            if tls.is_some() { " over TLS" } else { "" }
        );
        let budget = timeout.max(Duration::from_millis(100));
        config
            .application_name("harmonia-serve")
            .connect_timeout(budget)
            .keepalives(true)
            .keepalives_idle(Duration::from_secs(5))
            .keepalives_interval(Duration::from_secs(2))
            .keepalives_retries(3)
            .tcp_user_timeout(budget.max(Duration::from_secs(5)))
            .options(format!(
                "-c synchronous_commit=off -c statement_timeout={} -c idle_in_transaction_session_timeout={}",
                budget.as_millis(),
                budget.as_millis().saturating_mul(2)
            ));
        Ok(Self { config, tls, pool_size: pool_size.max(1), timeout: budget, described })
    }
}

/// Whether the database can serve, as the server last saw it.
#[derive(Default)]
struct Health {
    reachable: AtomicBool,
    migrated: AtomicBool,
    /// Replicas beating with this one (this one included; 0 until known).
    replicas: AtomicU32,
    /// Why it cannot serve, for `/readyz` and the log (no secret).
    problem: Mutex<String>,
}

/// The shared database: a pool and what the server knows of it.
pub struct Database {
    pool: Pool,
    settings: DatabaseSettings,
    health: Health,
    /// This replica's name in the heartbeat table.
    replica: String,
}

/// A boxed statement (or several) run on a borrowed connection.
pub type Work<'c, T> = Pin<Box<dyn Future<Output = Result<T, tokio_postgres::Error>> + Send + 'c>>;

/// Whether `error` says the database is away, rather than refusing a
/// statement: connection failures, shutdowns and exhaustion.
fn is_unavailable(error: &tokio_postgres::Error) -> bool {
    let Some(code) = error.code() else {
        // No SQL state: the socket, the TLS layer or the protocol.
        return true;
    };
    let class = &code.code()[..2];
    class == "08"
        || class == "53"
        || class == "57"
        || *code == SqlState::QUERY_CANCELED
        || *code == SqlState::IDLE_IN_TRANSACTION_SESSION_TIMEOUT
}

/// The error's text for a log: the server's message, or the driver's
/// with its causes (a TLS handshake's says which certificate check
/// failed); none of them carries the password.
fn describe(error: &tokio_postgres::Error) -> String {
    if let Some(db) = error.as_db_error() {
        return format!("{}: {}", db.code().code(), db.message());
    }
    let mut text = error.to_string();
    let mut cause = std::error::Error::source(error);
    while let Some(inner) = cause {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        cause = inner.source();
    }
    text
}

/// Why no connection could be had from the pool: the server's reason
/// when it refused (an authentication failure, say), else the pool's.
fn describe_pool(error: &deadpool_postgres::PoolError) -> String {
    match error {
        deadpool_postgres::PoolError::Backend(error) => describe(error),
        deadpool_postgres::PoolError::Timeout(_) => "no connection within the timeout".into(),
        other => other.to_string(),
    }
}

impl Database {
    /// A pool for `settings` (connections are made when first needed);
    /// `replica` names this process in the heartbeat table.
    pub fn new(settings: DatabaseSettings, replica: String) -> Result<Arc<Self>, LedgerError> {
        let recycling = || ManagerConfig { recycling_method: RecyclingMethod::Fast };
        let manager = match &settings.tls {
            Some(tls) => Manager::from_config(
                settings.config.clone(),
                MakeRustlsConnect::new(tls.clone()),
                recycling(),
            ),
            None => Manager::from_config(settings.config.clone(), NoTls, recycling()),
        };
        let pool = Pool::builder(manager)
            .max_size(settings.pool_size as usize)
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(settings.timeout))
            .create_timeout(Some(settings.timeout))
            .recycle_timeout(Some(settings.timeout))
            .build()
            .map_err(|error| LedgerError::Store(error.to_string()))?;
        let database = Arc::new(Self { pool, settings, health: Health::default(), replica });
        database.failed("not connected yet");
        Ok(database)
    }

    /// Host, port and database (for logs).
    pub fn described(&self) -> &str {
        &self.settings.described
    }

    /// The longest an operation waits.
    pub fn timeout(&self) -> Duration {
        self.settings.timeout
    }

    fn failed(&self, why: &str) {
        let was = self.health.reachable.swap(false, Ordering::SeqCst);
        let mut problem = self.health.problem.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if was || problem.as_str() != why {
            tracing::warn!(database = %self.settings.described, reason = why, "the shared database cannot serve");
        }
        *problem = why.to_owned();
    }

    fn answered(&self) {
        if !self.health.reachable.swap(true, Ordering::SeqCst) && self.health.migrated.load(Ordering::SeqCst)
        {
            tracing::info!(database = %self.settings.described, "the shared database answers again");
        }
    }

    /// Whether the last operation reached the database (and its schema is
    /// current): when not, callers that may do without it (rate limits)
    /// do not wait for it.
    pub fn reachable(&self) -> bool {
        self.health.reachable.load(Ordering::SeqCst) && self.health.migrated.load(Ordering::SeqCst)
    }

    /// Replicas beating with this one, this one included (at least 1).
    pub fn replicas(&self) -> u32 {
        self.health.replicas.load(Ordering::SeqCst).max(1)
    }

    /// What `/readyz` says.
    pub fn readiness(&self) -> Readiness {
        if self.reachable() {
            return Readiness::Ready;
        }
        let problem = self.health.problem.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        Readiness::NotReady(format!("the shared database cannot serve: {problem}"))
    }

    /// Run `work` on a pooled connection within `budget` (at most the
    /// settings' timeout). A failure that says the database is away
    /// drops the connection and is [`LedgerError::Unavailable`]; another
    /// is [`LedgerError::Store`].
    pub async fn run_within<T>(
        &self,
        budget: Duration,
        work: impl for<'c> FnOnce(&'c deadpool_postgres::Client) -> Work<'c, T>,
    ) -> Result<T, LedgerError> {
        if !self.health.migrated.load(Ordering::SeqCst) {
            return Err(LedgerError::Unavailable("the database's schema is not migrated yet".into()));
        }
        let deadline = tokio::time::Instant::now() + budget.min(self.settings.timeout);
        let client = match tokio::time::timeout_at(deadline, self.pool.get()).await {
            Ok(Ok(client)) => client,
            Ok(Err(error)) => {
                let why = format!("no connection: {}", describe_pool(&error));
                self.failed(&why);
                return Err(LedgerError::Unavailable(why));
            }
            Err(_) => {
                self.failed("no connection within the timeout");
                return Err(LedgerError::Unavailable("no connection within the timeout".into()));
            }
        };
        match tokio::time::timeout_at(deadline, work(&client)).await {
            Ok(Ok(value)) => {
                self.answered();
                Ok(value)
            }
            Ok(Err(error)) if is_unavailable(&error) => {
                let why = describe(&error);
                drop(Object::take(client));
                self.failed(&why);
                Err(LedgerError::Unavailable(why))
            }
            Ok(Err(error)) => {
                // The database answered: it is there, the statement failed.
                // A transaction left open is rolled back with the connection.
                drop(Object::take(client));
                self.answered();
                Err(LedgerError::Store(describe(&error)))
            }
            Err(_) => {
                // Cut mid-statement: never reuse this connection.
                drop(Object::take(client));
                self.failed("a statement did not finish within the timeout");
                Err(LedgerError::Unavailable("the database did not answer within the timeout".into()))
            }
        }
    }

    /// [`Database::run_within`] the settings' timeout.
    pub async fn run<T>(
        &self,
        work: impl for<'c> FnOnce(&'c deadpool_postgres::Client) -> Work<'c, T>,
    ) -> Result<T, LedgerError> {
        self.run_within(self.settings.timeout, work).await
    }

    /// Migrate the schema (see [`migrate`]); the versions applied now.
    pub async fn migrate(&self) -> Result<Vec<u32>, LedgerError> {
        let deadline = self.settings.timeout.saturating_mul(10);
        let migrated = async {
            let mut client = self.pool.get().await.map_err(|error| {
                LedgerError::Unavailable(format!("no connection: {}", describe_pool(&error)))
            })?;
            migrate::run(&mut client).await.map_err(|error| match error {
                migrate::MigrateError::Database(error) if is_unavailable(&error) => {
                    LedgerError::Unavailable(describe(&error))
                }
                migrate::MigrateError::Database(error) => LedgerError::Store(describe(&error)),
                other => LedgerError::Store(other.to_string()),
            })
        };
        let applied = tokio::time::timeout(deadline, migrated)
            .await
            .unwrap_or_else(|_| Err(LedgerError::Unavailable("migrating did not finish in time".into())));
        match &applied {
            Ok(_) => {
                self.health.migrated.store(true, Ordering::SeqCst);
                self.answered();
            }
            Err(error) => self.failed(&error.to_string()),
        }
        applied
    }

    /// One heartbeat: this replica is seen now; how many replicas were
    /// seen within [`GONE_AFTER_S`].
    pub async fn beat(&self) -> Result<u32, LedgerError> {
        let replica = self.replica.clone();
        let replicas = self
            .run(move |client| {
                Box::pin(async move {
                    let statement = client
                        .prepare_cached(
                            "WITH seen AS (
                                 INSERT INTO replicas (id, seen) VALUES ($1, clock_timestamp())
                                 ON CONFLICT (id) DO UPDATE SET seen = EXCLUDED.seen
                             )
                             SELECT count(*) + 1 FROM replicas
                             WHERE id <> $1 AND seen > clock_timestamp() - make_interval(secs => $2)",
                        )
                        .await?;
                    let row = client.query_one(&statement, &[&replica, &f64::from(GONE_AFTER_S)]).await?;
                    Ok(row.get::<_, i64>(0))
                })
            })
            .await?;
        let replicas = u32::try_from(replicas).unwrap_or(u32::MAX);
        self.health.replicas.store(replicas, Ordering::SeqCst);
        Ok(replicas)
    }

    /// For the server's life: migrate (retrying every [`BEAT`] while the
    /// database is away), then beat every [`BEAT`] (and once more at once
    /// after a failure), until `stop` is cancelled.
    pub async fn keep(self: Arc<Self>, stop: tokio_util::sync::CancellationToken) {
        loop {
            match self.migrate().await {
                Ok(applied) => {
                    if !applied.is_empty() {
                        tracing::info!(database = %self.settings.described, ?applied, "the shared database's schema was migrated");
                    }
                    break;
                }
                Err(error) => {
                    tracing::warn!(%error, "the shared database's schema could not be migrated; retrying")
                }
            }
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tokio::time::sleep(BEAT) => {}
            }
        }
        loop {
            let _ = self.beat().await;
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tokio::time::sleep(BEAT) => {}
            }
        }
    }
}

/// Migrate the database `config` names now, on a runtime of its own
/// (`harmonia serve migrate`); the versions applied (empty: current).
pub fn migrate_now(config: &crate::config::SessionsConfig) -> anyhow::Result<Vec<u32>> {
    use anyhow::Context as _;
    let url = config
        .ledger
        .as_deref()
        .filter(|ledger| is_url(ledger))
        .context("sessions.ledger names no PostgreSQL database (postgres://…): nothing to migrate")?;
    let settings = DatabaseSettings::new(
        url,
        config.password_file.as_deref(),
        config.ca_file.as_deref(),
        config.pool_size,
        Duration::from_millis(config.timeout_ms),
    )?;
    let described = settings.described.clone();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let database = Database::new(settings, "migrate".into())?;
    runtime.block_on(database.migrate()).with_context(|| format!("cannot migrate {described}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_is_required_verified_or_absent_and_never_preferred() {
        // No sslmode, or disable: plain text, said so (not the driver's
        // silent `prefer`).
        for url in ["postgres://h@db:5432/d", "postgres://h@db:5432/d?sslmode=disable"] {
            assert_eq!(parse_url(url).unwrap().get_ssl_mode(), SslMode::Disable, "{url}");
        }
        // require, and libpq's verifying modes, which verify here anyway.
        for mode in ["require", "verify-full", "verify-ca"] {
            let url = format!("postgres://h@db:5432/d?sslmode={mode}");
            assert_eq!(parse_url(&url).unwrap().get_ssl_mode(), SslMode::Require, "{url}");
            assert!(check_url(&url, true).is_ok(), "{url}");
        }
        // prefer, however it is spelt, is refused.
        for url in ["postgres://h@db/d?sslmode=prefer", "postgres://h@db/d?connect_timeout=5&SSLMODE=Prefer"]
        {
            assert!(matches!(check_url(url, false), Err(DatabaseConfigError::Prefer)), "{url}");
        }
        // A CA file needs TLS to use it.
        assert!(matches!(check_url("postgres://h@db/d", true), Err(DatabaseConfigError::CaWithoutTls)));
        // Unknown modes are the driver's error, not a silent default.
        assert!(matches!(
            check_url("postgres://h@db/d?sslmode=allow", false),
            Err(DatabaseConfigError::Url(_))
        ));
    }

    #[test]
    fn a_ca_file_must_hold_a_certificate_and_the_settings_say_tls() {
        let dir = std::env::temp_dir().join(format!("harmonia-ca-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let empty = dir.join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let refused = DatabaseSettings::new(
            "postgres://h@db/d?sslmode=require",
            None,
            Some(&empty),
            1,
            Duration::from_secs(1),
        );
        assert!(
            matches!(&refused, Err(DatabaseConfigError::CaFile(path, why)) if path == &empty && why.contains("no certificate")),
            "{refused:?}"
        );
        let missing = DatabaseSettings::new(
            "postgres://h@db/d?sslmode=require",
            None,
            Some(&dir.join("missing.pem")),
            1,
            Duration::from_secs(1),
        );
        assert!(matches!(missing, Err(DatabaseConfigError::CaFile(..))), "{missing:?}");
        // The Mozilla roots when no CA file is named; said in the description.
        let settings =
            DatabaseSettings::new("postgres://h@db/d?sslmode=require", None, None, 1, Duration::from_secs(1))
                .unwrap();
        assert!(settings.described.ends_with("over TLS"), "{}", settings.described);
        let plain =
            DatabaseSettings::new("postgres://h@db/d", None, None, 1, Duration::from_secs(1)).unwrap();
        assert!(!plain.described.contains("TLS"), "{}", plain.described);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
