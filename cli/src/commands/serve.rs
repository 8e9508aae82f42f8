//! `harmonia serve`: the tools over MCP (`--stdio` or `--http ADDR`),
//! `harmonia serve token add|list|revoke` for the static token store, and
//! `harmonia serve migrate` for the shared PostgreSQL ledger's schema.
//! Everything but the flags lives in the `harmonia-serve` crate.

use crate::args::HostArgs;
use crate::progress::CompileSpinner;
use crate::setup::{UsageError, config_path, load_config, load_skills, workspace};
use anyhow::Result;
use clap::{Args, Subcommand};
use harmonia_serve::auth::tokens::TokenFile;
use harmonia_serve::config::{Rate, ServeConfig};
use harmonia_serve::{Serve, ServeError, Transport};
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

/// `harmonia serve token ...` and `harmonia serve migrate`.
#[derive(Debug, Subcommand)]
pub enum ServeCommand {
    /// Manage the static bearer tokens (stored as SHA-256 hashes).
    Token {
        /// What to do.
        #[command(subcommand)]
        command: TokenCommand,
    },
    /// Bring the shared PostgreSQL ledger's schema to this release (every
    /// replica also does it at start); prints what was applied.
    Migrate {
        /// The serve config naming the database (`[sessions] ledger`).
        #[arg(long, value_name = "FILE")]
        serve_config: PathBuf,
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

pub fn run(args: ServeArgs) -> Result<ExitCode> {
    match args.command {
        Some(ServeCommand::Token { command }) => return tokens(command),
        Some(ServeCommand::Migrate { serve_config }) => {
            let config = ServeConfig::from_file(&serve_config)?;
            let applied = harmonia_serve::database::migrate_now(&config.sessions)?;
            let latest = harmonia_serve::database::migrate::latest();
            match applied.as_slice() {
                [] => println!("the schema is current (version {latest})"),
                applied => println!("applied {applied:?}; the schema is at version {latest}"),
            }
            return Ok(ExitCode::SUCCESS);
        }
        None => {}
    }
    let transport = match (args.stdio, args.http) {
        (true, _) => {
            Transport::Stdio { workspace: workspace(args.workspace), tools: args.tools, skill: args.skill }
        }
        (false, Some(address)) => {
            if args.skill.is_some() || !args.tools.is_empty() || args.workspace.is_some() {
                return Err(UsageError(
                    "--workspace, --tools and --skill are for --stdio; over HTTP they come from the credential and the path"
                        .into(),
                )
                .into());
            }
            Transport::Http(address)
        }
        (false, None) => return Err(UsageError("serve needs --stdio or --http ADDR".into()).into()),
    };
    let config = match &args.serve_config {
        Some(path) => ServeConfig::from_file(path)?,
        None => ServeConfig::default(),
    };
    let mut host = load_config(args.host.config.as_deref())?;
    host.mock |= args.host.mock;
    let host_file = config_path(args.host.config.as_deref());
    let serve = Serve {
        config,
        host,
        host_file,
        plugins: args.host.plugins,
        skills: load_skills(args.skills.as_deref())?,
        transport,
        compile_progress: CompileSpinner::unless_quiet(args.host.quiet),
    };
    match harmonia_serve::run(serve) {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(ServeError::Usage(message)) => Err(UsageError(message).into()),
        Err(ServeError::Failed(error)) => Err(error),
    }
}
