//! The PostgreSQL database that replicas on several machines share: its
//! address and password, a pool of connections, every wait on it bounded,
//! its schema migrated, and whether it can serve now.
//!
//! - The address is one URL in the serve config (`[sessions] ledger =
//!   "postgres://user@host:port/db"`); the password never is: it comes
//!   from `[sessions] password_file` or `$HARMONIA_LEDGER_PASSWORD`, and a
//!   URL carrying one is refused at start (without repeating it). No log
//!   line or message names the password or the URL's query.
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
use tokio_postgres::error::SqlState;

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
    /// TLS was asked for.
    #[error(
        "sessions.ledger asks for TLS (sslmode=require), which this server does not speak to PostgreSQL: use sslmode=disable on a private network, or a TLS proxy beside each replica"
    )]
    Tls,
    /// The password file is unusable.
    #[error("sessions.password_file {0}: {1}")]
    PasswordFile(PathBuf, String),
}

/// Why `url` cannot be used (the password is not read here).
pub fn check_url(url: &str) -> Result<(), DatabaseConfigError> {
    let config =
        tokio_postgres::Config::from_str(url).map_err(|error| DatabaseConfigError::Url(error.to_string()))?;
    if config.get_password().is_some() {
        return Err(DatabaseConfigError::PasswordInUrl);
    }
    if config.get_ssl_mode() == tokio_postgres::config::SslMode::Require {
        return Err(DatabaseConfigError::Tls);
    }
    Ok(())
}

/// What the server connects with, checked.
#[derive(Clone)]
pub struct DatabaseSettings {
    config: tokio_postgres::Config,
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
    /// environment (none: the server's own authentication, e.g. `trust`).
    pub fn new(
        url: &str,
        password_file: Option<&Path>,
        pool_size: u32,
        timeout: Duration,
    ) -> Result<Self, DatabaseConfigError> {
        check_url(url)?;
        let mut config = tokio_postgres::Config::from_str(url)
            .map_err(|error| DatabaseConfigError::Url(error.to_string()))?;
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
            "postgres {}:{} database {}",
            hosts.join(","),
            config.get_ports().first().copied().unwrap_or(5432),
            config.get_dbname().unwrap_or("(default)")
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
        Ok(Self { config, pool_size: pool_size.max(1), timeout: budget, described })
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
/// (neither carries the password).
fn describe(error: &tokio_postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => format!("{}: {}", db.code().code(), db.message()),
        None => error.to_string(),
    }
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
        let manager = Manager::from_config(
            settings.config.clone(),
            NoTls,
            ManagerConfig { recycling_method: RecyclingMethod::Fast },
        );
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
        config.pool_size,
        Duration::from_millis(config.timeout_ms),
    )?;
    let described = settings.described.clone();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let database = Database::new(settings, "migrate".into())?;
    runtime.block_on(database.migrate()).with_context(|| format!("cannot migrate {described}"))
}
