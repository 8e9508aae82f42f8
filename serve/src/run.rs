//! `harmonia_serve::run`: a whole server from its configs, as
//! `harmonia serve` runs it: the host built with the server's call bound,
//! log and metrics; the liaison with its skills and trace key; the hot
//! reload of its plugins ([`crate::reload`]); then stdio until the client
//! leaves, or HTTP until SIGTERM or SIGINT, drained.
//!
//! The rules that make a server safe to start live here, not in a
//! command line: no HTTP server without a credential source, the stdio
//! options refused over HTTP, the open-files limit raised to what the
//! bounds allow. The call bound is one: the host's call slots, sized by
//! the serve config's `limits.max_in_flight_calls`.

use crate::auth::jwt::JwtVerifier;
use crate::auth::tokens::TokenStore;
use crate::auth::{Authenticator, Principal};
use crate::config::ServeConfig;
use crate::http::HttpServer;
use crate::logging::TracingLog;
use crate::state::ServeState;
use crate::telemetry::CallSpans;
use anyhow::Context;
use harmonia_host::liaison::session::Liaison;
use harmonia_host::liaison::signing::TraceSigner;
use harmonia_host::liaison::skills::{Skill, SkillSet};
use harmonia_host::metrics::Metrics;
use harmonia_host::plugin::CompileProgress;
use harmonia_host::{CallSlots, Host, HostConfig};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

/// How agent hosts reach the server.
#[derive(Clone, Debug)]
pub enum Transport {
    /// MCP on stdin/stdout, for the one agent host that started us.
    Stdio {
        /// The workspace every call acts for.
        workspace: Option<String>,
        /// The tools offered (empty: every loaded tool).
        tools: Vec<String>,
        /// The skill the connection is bound to (its guard applies).
        skill: Option<String>,
    },
    /// MCP streamable HTTP on this address.
    Http(SocketAddr),
}

/// Everything a server is made from.
pub struct Serve {
    /// The serve config: credentials, bounds, sessions, telemetry.
    pub config: ServeConfig,
    /// The host config (`harmonia.toml`).
    pub host: HostConfig,
    /// The file `host` was read from, read again at each reload (none:
    /// `host` as given). A `mock` set in `host` stays set.
    pub host_file: Option<PathBuf>,
    /// Components to load besides the config's.
    pub plugins: Vec<PathBuf>,
    /// The skills offered as prompts and guarded routes.
    pub skills: SkillSet,
    /// stdio or HTTP.
    pub transport: Transport,
    /// Told of each component compiled at start (none: silent).
    pub compile_progress: Option<Arc<dyn CompileProgress>>,
}

/// Why a server did not run.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The options ask for something a server may not be (the command
    /// line's usage error).
    #[error("{0}")]
    Usage(String),
    /// Starting or running failed.
    #[error(transparent)]
    Failed(#[from] anyhow::Error),
}

/// Run a server until its transport ends: stdio when the client leaves,
/// HTTP on SIGTERM or SIGINT once drained. Installs the server's log.
pub fn run(serve: Serve) -> Result<(), ServeError> {
    crate::logging::init();
    let Serve { config, host, host_file, plugins, skills, transport, compile_progress } = serve;
    // Checked before anything is compiled: a refused start costs nothing.
    let auth = match transport {
        Transport::Http(_) => {
            raise_open_files(&config)?;
            Some(authenticator(&config)?)
        }
        Transport::Stdio { .. } => None,
    };
    // Counted only where `GET /metrics` can serve them.
    let metrics = (config.metrics.enabled && matches!(transport, Transport::Http(_))).then(Metrics::new);
    let signer = TraceSigner::host_key(&host.trace).context("cannot load the trace key")?;
    let reload = reload_source(&host, host_file, &config, &plugins, metrics.clone());
    let host = build_host(host, &config, &plugins, metrics, compile_progress, None)?;
    let liaison = Liaison::new(host, skills).context("skills and tools disagree")?.with_signer(signer);
    let skill = match &transport {
        Transport::Stdio { skill: Some(name), .. } => Some(
            liaison
                .skills()
                .get(name)
                .cloned()
                .ok_or_else(|| ServeError::Usage(format!("unknown skill `{name}`")))?,
        ),
        _ => None,
    };
    // Built outside the runtime: the exporter's blocking HTTP client may
    // not be made or dropped inside it.
    let spans = CallSpans::from_config(&config.telemetry).context("cannot start telemetry")?;
    let state =
        ServeState::from_config(liaison, &config, spans.clone()).context("cannot start the server")?;
    let served = serve_on(transport, auth, config, state, skill, reload);
    if let Some(spans) = spans {
        spans.shutdown();
    }
    served
}

/// The host as the server runs it: the serve config's call bound, the
/// server's log and metrics; on `slots` when given (a reload's: the
/// server's).
fn build_host(
    mut config: HostConfig,
    serve: &ServeConfig,
    plugins: &[PathBuf],
    metrics: Option<Metrics>,
    progress: Option<Arc<dyn CompileProgress>>,
    slots: Option<&CallSlots>,
) -> anyhow::Result<Host> {
    bound_calls(&mut config, serve);
    let mut builder = Host::builder(config).log(Arc::new(TracingLog));
    if let Some(slots) = slots {
        builder = builder.call_slots(slots.clone());
    }
    if let Some(progress) = progress {
        builder = builder.compile_progress(progress);
    }
    if let Some(metrics) = metrics {
        builder = builder.metrics(metrics);
    }
    for path in plugins {
        builder = builder.component_file(path)?;
    }
    builder.build().context("cannot start the host")
}

/// Size a host's call slots to the server's `limits.max_in_flight_calls`:
/// the server's one admission gate is the host's (the pool's instances
/// follow the slots). An embedder building its own host for a
/// [`ServeState`] applies this to the host config first.
pub fn bound_calls(host: &mut HostConfig, serve: &ServeConfig) {
    let bound = serve.limits.max_in_flight_calls;
    if host.limits.max_calls != bound {
        tracing::info!(
            from = host.limits.max_calls,
            to = bound,
            "limits.max_calls set to the server's max_in_flight_calls"
        );
        host.limits.max_calls = bound;
    }
}

/// What a reload watches (the lock file, the plugin directory and files)
/// and how it builds the new host: as at start, the config read again,
/// quietly (a reload compiles in the background).
fn reload_source(
    host: &HostConfig,
    host_file: Option<PathBuf>,
    serve: &ServeConfig,
    plugins: &[PathBuf],
    metrics: Option<Metrics>,
) -> crate::reload::Source {
    let configured = &host.plugins;
    let watch = configured.lock.iter().chain(&configured.dir).chain(&configured.files).chain(plugins);
    let (initial, serve, plugins) = (host.clone(), serve.clone(), plugins.to_vec());
    crate::reload::Source {
        watch: watch.cloned().collect(),
        build: Arc::new(move |slots| {
            let mut config = match &host_file {
                Some(path) => HostConfig::from_file(path)?,
                None => initial.clone(),
            };
            // `--mock` was the caller's, not the file's: it stays.
            config.mock |= initial.mock;
            build_host(config, &serve, &plugins, metrics.clone(), None, Some(slots))
        }),
    }
}

/// The credential sources of an HTTP server; refused when there are
/// none: no unauthenticated server.
fn authenticator(config: &ServeConfig) -> Result<Authenticator, ServeError> {
    let tokens = config
        .tokens_file
        .as_deref()
        .map(TokenStore::open)
        .transpose()
        .context("cannot open the tokens file")?;
    let jwt =
        config.jwt.clone().map(JwtVerifier::new).transpose().context("cannot set up JWT verification")?;
    let auth = Authenticator::new(tokens, jwt);
    if !auth.is_configured() {
        return Err(ServeError::Usage(
            "--http needs a serve config with tokens_file or [jwt]: no unauthenticated server".into(),
        ));
    }
    Ok(auth)
}

fn serve_on(
    transport: Transport,
    auth: Option<Authenticator>,
    config: ServeConfig,
    state: Arc<ServeState>,
    skill: Option<Skill>,
    reload: crate::reload::Source,
) -> Result<(), ServeError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the runtime")?;
    // Watches until dropped, when the server returns.
    let _reloader = {
        let _entered = runtime.enter();
        crate::reload::start(Arc::clone(&state), reload, &config.reload)
    };
    let address = match transport {
        Transport::Stdio { workspace, tools, .. } => {
            // Empty: every tool loaded, now and after a reload.
            let allow = tools.into_iter().collect();
            let principal = Principal { id: "stdio".into(), workspace, allow, rate: None };
            runtime.block_on(crate::stdio::serve(state, principal, skill))?;
            return Ok(());
        }
        Transport::Http(address) => address,
    };
    let auth = match auth {
        Some(auth) => auth,
        None => authenticator(&config)?,
    };
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(address)
            .await
            .with_context(|| format!("cannot listen on {address}"))?;
        let bound = listener.local_addr()?;
        if !bound.ip().is_loopback() {
            tracing::warn!(%bound, "listening beyond loopback: put TLS in front and set allowed_hosts");
        }
        let server = HttpServer::new(state, auth, &config);
        // The one line a supervisor (or a test) waits for, on stdout.
        println!("harmonia serve: listening on http://{bound}");
        use std::io::Write;
        let _ = std::io::stdout().flush();
        server.run(listener, terminated()).await?;
        eprintln!("harmonia serve: drained, exiting");
        anyhow::Ok(())
    })?;
    Ok(())
}

async fn terminated() {
    use tokio::signal::unix::{SignalKind, signal};
    match (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) {
        (Ok(mut term), Ok(mut int)) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
        }
        _ => std::future::pending().await,
    }
}

/// Raise the soft open-files limit to the hard one, as servers do: each
/// connection holds a descriptor, and each call in flight an upstream one.
/// A config whose bounds the limit cannot hold is refused before anything
/// is built, naming the bound: past the limit, calls would fail with
/// `dependency_unavailable` (no socket for their upstream) and clients
/// would be refused, instead of waiting for a place.
fn raise_open_files(config: &ServeConfig) -> Result<(), ServeError> {
    let open_files = crate::open_files::raise();
    let limits = &config.limits;
    let wanted =
        u64::from(limits.max_connections) + u64::from(limits.max_in_flight_calls) + OPEN_FILES_RESERVE;
    if open_files < wanted {
        return Err(ServeError::Usage(format!(
            "limits.max_connections ({}) + limits.max_in_flight_calls ({}) need {wanted} open files (one a connection, one a call's upstream, {OPEN_FILES_RESERVE} spare), and this process may open {open_files}: raise its limit (ulimit -n) or lower those bounds",
            limits.max_connections, limits.max_in_flight_calls
        )));
    }
    Ok(())
}

/// Open files a server keeps for itself beside its connections and calls
/// (listeners, the ledger, logs, the component cache).
const OPEN_FILES_RESERVE: u64 = 64;
