//! `harmonia serve`: the tools over MCP (`--stdio` or `--http ADDR`), and
//! `harmonia serve token add|list|revoke` for the static token store.
//! Everything but the flags lives in the `harmonia-serve` crate.

use crate::args::HostArgs;
use crate::setup::{UsageError, build_host_with, load_config, load_skills, workspace};
use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use harmonia_host::liaison::session::Liaison;
use harmonia_host::liaison::signing::TraceSigner;
use harmonia_serve::auth::tokens::{TokenFile, TokenStore};
use harmonia_serve::auth::{Authenticator, Principal, jwt::JwtVerifier};
use harmonia_serve::config::{Rate, ServeConfig};
use harmonia_serve::http::HttpServer;
use harmonia_serve::state::ServeState;
use harmonia_serve::telemetry::CallSpans;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

/// `harmonia serve ...`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ServeArgs {
    /// Manage static tokens.
    #[command(subcommand)]
    pub command: Option<ServeCommand>,
    /// Serve MCP on stdin/stdout (for an agent host that starts this process).
    #[arg(long, conflicts_with = "http")]
    pub stdio: bool,
    /// Serve MCP streamable HTTP on ADDR (e.g. 127.0.0.1:8080).
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,
    /// The serve config: tokens, JWT, limits (required for --http).
    #[arg(long, value_name = "FILE")]
    pub serve_config: Option<PathBuf>,
    /// stdio: the workspace to bind (default: $HARMONIA_WORKSPACE).
    #[arg(long, value_name = "ID")]
    pub workspace: Option<String>,
    /// stdio: the tools to offer, comma-separated (default: every loaded tool).
    #[arg(long, value_name = "TOOLS", value_delimiter = ',')]
    pub tools: Vec<String>,
    /// stdio: bind the connection to one skill (the session guard applies).
    #[arg(long, value_name = "NAME")]
    pub skill: Option<String>,
    #[command(flatten)]
    pub host: HostArgs,
    /// Skill files directory (default: the built-in skills).
    #[arg(long, value_name = "DIR")]
    pub skills: Option<PathBuf>,
}

/// `harmonia serve token ...`.
#[derive(Debug, Subcommand)]
pub enum ServeCommand {
    /// Manage the static bearer tokens (stored as SHA-256 hashes).
    Token {
        /// What to do.
        #[command(subcommand)]
        command: TokenCommand,
    },
}

/// `harmonia serve token add|list|revoke`.
#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Make a token bound to one workspace and allow-list; prints it once.
    Add {
        /// The token file.
        #[arg(long, value_name = "FILE")]
        file: PathBuf,
        /// The workspace the token acts for.
        #[arg(long, value_name = "ID")]
        workspace: String,
        /// The tools it may call, comma-separated.
        #[arg(long, value_name = "TOOLS", value_delimiter = ',', required = true)]
        tools: Vec<String>,
        /// This token's own rate limit, calls per second (with --burst;
        /// default: the serve config's `[rate_limits]`).
        #[arg(long, value_name = "N", requires = "burst")]
        calls_per_second: Option<f64>,
        /// The calls this token may make at once before its rate applies.
        #[arg(long, value_name = "N", requires = "calls_per_second")]
        burst: Option<u32>,
    },
    /// List the tokens (ids, workspaces, tools; never the tokens).
    List {
        /// The token file.
        #[arg(long, value_name = "FILE")]
        file: PathBuf,
    },
    /// Remove a token; a running server refuses it from the next request.
    Revoke {
        /// The token's id (`tok_...`).
        id: String,
        /// The token file.
        #[arg(long, value_name = "FILE")]
        file: PathBuf,
    },
}

fn init_logging() {
    // The SDK and HTTP crates log whole requests (headers, arguments) at
    // debug and trace; they stay at warn whatever the level, so no token,
    // argument or body reaches the log.
    let level = std::env::var("HARMONIA_LOG").unwrap_or_else(|_| "warn".into());
    let filter = format!("{level},rmcp=warn,hyper=warn,hyper_util=warn,axum=warn,tower=warn,h2=warn");
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}

fn tokens(command: TokenCommand) -> Result<ExitCode> {
    match command {
        TokenCommand::Add { file, workspace, tools, calls_per_second, burst } => {
            let rate =
                calls_per_second.zip(burst).map(|(calls_per_second, burst)| Rate { calls_per_second, burst });
            let mut store = TokenFile::load(&file)?;
            let (token, record) = store.add_with_rate(&workspace, tools, rate)?;
            store.save(&file)?;
            println!("{token}");
            eprintln!(
                "harmonia: token {} for workspace {} saved (hash only) in {}",
                record.id,
                record.workspace,
                file.display()
            );
        }
        TokenCommand::List { file } => {
            for record in TokenFile::load(&file)?.tokens {
                println!(
                    "{}\t{}\t{}\t{}",
                    record.id,
                    record.workspace,
                    record.tools.join(","),
                    record.created
                );
            }
        }
        TokenCommand::Revoke { id, file } => {
            let mut store = TokenFile::load(&file)?;
            if !store.revoke(&id) {
                return Err(UsageError(format!("no token `{id}` in {}", file.display())).into());
            }
            store.save(&file)?;
            eprintln!("harmonia: token {id} revoked");
        }
    }
    Ok(ExitCode::SUCCESS)
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

pub fn run(args: ServeArgs) -> Result<ExitCode> {
    if let Some(ServeCommand::Token { command }) = args.command {
        return tokens(command);
    }
    if !args.stdio && args.http.is_none() {
        return Err(UsageError("serve needs --stdio or --http ADDR".into()).into());
    }
    init_logging();
    let config = match &args.serve_config {
        Some(path) => ServeConfig::from_file(path)?,
        None => ServeConfig::default(),
    };
    // Counted only where `GET /metrics` can serve them.
    let metrics = (config.metrics.enabled && args.http.is_some()).then(harmonia_host::metrics::Metrics::new);
    // Every call the server lets in gets an async slot at once.
    let host = build_host_with(&args.host, metrics.clone(), config.limits.max_in_flight_calls)?;
    let reload = reload_source(&args.host, metrics, config.limits.max_in_flight_calls)?;
    let signer = TraceSigner::host_key(&load_config(args.host.config.as_deref())?.trace)?;
    let liaison = Liaison::new(host, load_skills(args.skills.as_deref())?)
        .context("skills and tools disagree")?
        .with_signer(signer);
    let skill = match &args.skill {
        Some(name) => Some(
            liaison
                .skills()
                .get(name)
                .cloned()
                .ok_or_else(|| UsageError(format!("unknown skill `{name}`")))?,
        ),
        None => None,
    };
    // Built outside the runtime: the exporter's blocking HTTP client may
    // not be made or dropped inside it.
    let spans = CallSpans::from_config(&config.telemetry)?;
    let state = ServeState::from_config(liaison, &config, spans.clone())?;
    let result = serve(args, config, state, skill, reload);
    if let Some(spans) = spans {
        spans.shutdown();
    }
    result
}

fn serve(
    args: ServeArgs,
    config: ServeConfig,
    state: std::sync::Arc<ServeState>,
    skill: Option<harmonia_host::liaison::skills::Skill>,
    reload: harmonia_serve::reload::Source,
) -> Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let _reloader = {
        let _entered = runtime.enter();
        harmonia_serve::reload::start(std::sync::Arc::clone(&state), reload, &config.reload)
    };
    if args.stdio {
        // Empty: every tool loaded, now and after a reload.
        let allow = args.tools.iter().cloned().collect();
        let principal =
            Principal { id: "stdio".into(), workspace: workspace(args.workspace), allow, rate: None };
        runtime.block_on(harmonia_serve::stdio::serve(state, principal, skill))?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.skill.is_some() || !args.tools.is_empty() || args.workspace.is_some() {
        return Err(UsageError(
            "--workspace, --tools and --skill are for --stdio; over HTTP they come from the credential and the path"
                .into(),
        )
        .into());
    }
    let tokens = config.tokens_file.as_deref().map(TokenStore::open).transpose()?;
    let jwt = config.jwt.clone().map(JwtVerifier::new).transpose()?;
    let auth = Authenticator::new(tokens, jwt);
    if !auth.is_configured() {
        return Err(UsageError(
            "--http needs a serve config with tokens_file or [jwt]: no unauthenticated server".into(),
        )
        .into());
    }
    let address = args.http.unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 0)));
    raise_open_files(&config);
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(address)
            .await
            .with_context(|| format!("cannot listen on {address}"))?;
        let bound = listener.local_addr()?;
        if !bound.ip().is_loopback() {
            tracing::warn!(%bound, "listening beyond loopback: put TLS in front and set allowed_hosts");
        }
        let server = HttpServer::new(state, auth, &config);
        println!("harmonia serve: listening on http://{bound}");
        use std::io::Write;
        let _ = std::io::stdout().flush();
        server.run(listener, terminated()).await?;
        eprintln!("harmonia serve: drained, exiting");
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

/// What a reload watches (the lock file, the plugin directory and files)
/// and how it builds the new host: as at start, the config read again.
fn reload_source(
    args: &HostArgs,
    metrics: Option<harmonia_host::metrics::Metrics>,
    calls_at_least: u32,
) -> Result<harmonia_serve::reload::Source> {
    let plugins = load_config(args.config.as_deref())?.plugins;
    let watch = plugins.lock.into_iter().chain(plugins.dir).chain(plugins.files).chain(args.plugins.clone());
    let args = HostArgs { quiet: true, ..args.clone() };
    Ok(harmonia_serve::reload::Source {
        watch: watch.collect(),
        build: std::sync::Arc::new(move || build_host_with(&args, metrics.clone(), calls_at_least)),
    })
}

/// Raise the soft open-files limit to the hard one, as servers do: each
/// connection holds a descriptor, and each call in flight an upstream one.
/// Warns when even the hard limit is below what the bounds allow.
fn raise_open_files(config: &ServeConfig) {
    let open_files = harmonia_serve::open_files::raise();
    let wanted = u64::from(config.limits.max_connections) + u64::from(config.limits.max_in_flight_calls) + 64;
    if open_files < wanted {
        tracing::warn!(
            open_files,
            wanted,
            "the open-files limit is below max_connections + max_in_flight_calls: raise it (ulimit -n) or lower them"
        );
    }
}
