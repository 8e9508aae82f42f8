//! The command line.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// Sandboxed runtime for Harmonia's read-only agent tools.
#[derive(Debug, Parser)]
#[command(name = "harmonia", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Options every host-building command shares.
#[derive(Debug, Args, Clone, Default)]
pub struct HostArgs {
    /// Config file (default: $HARMONIA_CONFIG, else built-in defaults).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Also load this component (repeatable).
    #[arg(long = "plugin", value_name = "PATH")]
    pub plugins: Vec<PathBuf>,
    /// Serve every capability from built-in fixtures.
    #[arg(long)]
    pub mock: bool,
    /// No progress on stderr while a component compiles.
    #[arg(long)]
    pub quiet: bool,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List loaded plugins and their contracts.
    Tools {
        #[command(flatten)]
        host: HostArgs,
        /// One JSON document instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Call one tool and print its envelope.
    Call {
        /// Tool name.
        tool: String,
        /// Input JSON object (`-` reads stdin).
        #[arg(long, default_value = "{}", value_name = "JSON")]
        input: String,
        /// Workspace to bind (default: $HARMONIA_WORKSPACE; none means
        /// workspace reads are unauthorized).
        #[arg(long, value_name = "ID")]
        workspace: Option<String>,
        #[command(flatten)]
        host: HostArgs,
        /// Indent the envelope.
        #[arg(long)]
        pretty: bool,
        /// Also print the call's receipts on stderr.
        #[arg(long)]
        receipts: bool,
    },
    /// Write a ready tool project from the templates (no network).
    New {
        /// Tool name: lowercase words joined by `_` (`count_posts`).
        tool: String,
        /// Language.
        #[arg(long, value_enum)]
        lang: crate::commands::new::Lang,
        /// World: the capability the tool reads.
        #[arg(long, value_enum, default_value = "public")]
        world: crate::commands::new::World,
        /// Directory to create (default: ./TOOL); must not hold files.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// Show a component's imports, exports, descriptor and SHA-256.
    Inspect {
        /// Component file.
        path: PathBuf,
        /// Config file for the policy and limits.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// JSON output.
        #[arg(long)]
        json: bool,
        /// No progress on stderr while the component compiles.
        #[arg(long)]
        quiet: bool,
    },
    /// Validate an agent's answer against a session trace.
    Validate {
        /// Trace file (a session's signed trace, or a JSON array of entries).
        #[arg(long, value_name = "FILE")]
        trace: PathBuf,
        /// Answer file (a JSON object).
        #[arg(long, value_name = "FILE")]
        answer: PathBuf,
        /// Submission mode: the trace must be signed by the trusted key,
        /// and no claim may cite mock evidence.
        #[arg(long)]
        submission: bool,
        /// With --submission: reject unless every tool_call was made by a
        /// component whose signature by this signer verified before it
        /// ran: a key (`key:sha256:…`, as `harmonia plugin keygen` prints
        /// it) or a keyless identity (`identity:<issuer>#<subject>`, as
        /// `plugin pull` prints it), compared exactly.
        #[arg(long, value_name = "SIGNER")]
        require_signer: Option<String>,
        /// Trust this ed25519 public key (64 hex digits) instead of the
        /// host's own trace key.
        #[arg(long, value_name = "HEX")]
        public_key: Option<String>,
        /// Config file (for `trace.key_file`).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Print `{"accepted", "rule", "reason"}` as JSON.
        #[arg(long)]
        json: bool,
        /// Skill files directory (default: the built-in skills).
        #[arg(long, value_name = "DIR")]
        skills: Option<PathBuf>,
    },
    /// Write a self-contained HTML page showing why an answer was accepted or refused.
    Review {
        /// Trace file (a session's signed trace, or a JSON array of entries).
        #[arg(long, value_name = "FILE")]
        trace: PathBuf,
        /// Answer file (a JSON object).
        #[arg(long, value_name = "FILE")]
        answer: PathBuf,
        /// Write the page here (default: stdout).
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Submission mode, as for `validate`.
        #[arg(long)]
        submission: bool,
        /// Trust this ed25519 public key (64 hex digits) instead of the
        /// host's own trace key.
        #[arg(long, visible_alias = "key", value_name = "HEX")]
        public_key: Option<String>,
        /// Config file (for `trace.key_file`).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Skill files directory (default: the built-in skills).
        #[arg(long, value_name = "DIR")]
        skills: Option<PathBuf>,
    },
    /// Print the host's trace public key (generating the key on first use).
    TraceKey {
        /// Config file (for `trace.key_file`).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// Drive a guarded session over JSON lines on stdin/stdout.
    Session {
        /// Workspace to bind (default: $HARMONIA_WORKSPACE).
        #[arg(long, value_name = "ID")]
        workspace: Option<String>,
        #[command(flatten)]
        host: HostArgs,
        /// Skill files directory (default: the built-in skills).
        #[arg(long, value_name = "DIR")]
        skills: Option<PathBuf>,
    },
    /// The whole story, offline: every skill, grounded and rejected answers.
    Demo {
        /// Also write each scenario's trace, answer and expected verdict
        /// under DIR (the evaluation catalogue's format).
        #[arg(long, value_name = "DIR")]
        export: Option<PathBuf>,
        /// Also write each scenario's review page and an `index.html`
        /// listing every verdict under DIR.
        #[arg(long, value_name = "DIR")]
        html: Option<PathBuf>,
    },
    /// Check components against the contract (exit 0 only if all pass).
    Conformance {
        /// Component files.
        #[arg(required = true, value_name = "PATH")]
        paths: Vec<PathBuf>,
        /// One JSON array with every plugin and check.
        #[arg(long)]
        json: bool,
        /// Config file for limits and policy.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Body the healthy public web answers (default: Hacker News stories).
        #[arg(long, value_name = "FILE")]
        web_fixture: Option<PathBuf>,
        /// Workspace document the healthy workspace serves (default: the demo workspace).
        #[arg(long, value_name = "FILE")]
        workspace_fixture: Option<PathBuf>,
        /// Deadline cap while checking, in ms.
        #[arg(long, default_value_t = 2000, value_name = "MS")]
        deadline_cap_ms: u32,
        /// No progress on stderr while a component compiles.
        #[arg(long)]
        quiet: bool,
    },
    /// Measure sandboxed call cost, loading, deadlines, scaling and memory.
    Bench {
        /// One JSON object on stdout (the table goes to stderr).
        #[arg(long)]
        json: bool,
        /// A short run (figures are rougher).
        #[arg(long)]
        quick: bool,
        /// Measure this component instead (load from the cache, a call, a
        /// whole `harmonia call --mock` process); repeatable.
        #[arg(long = "plugin", value_name = "PATH")]
        plugins: Vec<PathBuf>,
        /// Only this part of the table; repeatable (all parts by default).
        #[arg(long = "only", value_name = "PART")]
        only: Vec<harmonia_bench::Part>,
        /// Where `bench/peers/build.sh` left Wassette and hyper-mcp, for
        /// `--only peers`.
        #[arg(long, value_name = "DIR")]
        peers: Option<PathBuf>,
        /// A PostgreSQL database the bench may write to, for `--only
        /// cluster` (no password in the URL: $HARMONIA_LEDGER_PASSWORD).
        #[arg(long, value_name = "URL")]
        database: Option<String>,
    },
    /// Remove every precompiled component from the cache.
    Cache {
        /// What to do.
        #[command(subcommand)]
        command: CacheCommand,
    },
    /// Serve the tools over MCP (`--stdio`, `--http ADDR`; `token` manages tokens).
    Serve(crate::commands::serve::ServeArgs),
    /// Plugins through an OCI registry: push, pull by tag or digest into
    /// `plugins.lock`, sign and verify (cosign-compatible signatures).
    Plugin {
        #[command(subcommand)]
        command: PluginCommand,
    },
    /// Manage the embedded workspace store.
    Workspace {
        /// What to do.
        #[command(subcommand)]
        command: WorkspaceCommand,
    },
}

/// `harmonia workspace ...`.
#[derive(Debug, Subcommand)]
pub enum WorkspaceCommand {
    /// Load a workspace JSON document into the SQLite store.
    Import {
        /// Workspace JSON file.
        file: PathBuf,
        /// Database path (default: the config's workspace.path).
        #[arg(long, value_name = "PATH")]
        db: Option<PathBuf>,
        /// Config file.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
}

/// `harmonia cache ...`.
#[derive(Debug, Subcommand)]
pub enum CacheCommand {
    /// Delete every cached component.
    Clear {
        /// Config file (for `cache.dir`).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
}

/// `harmonia plugin …`.
#[derive(Debug, Subcommand)]
pub enum PluginCommand {
    /// Push a component file to a registry under a tag; prints its digest.
    Push {
        /// The component (`.wasm`).
        file: PathBuf,
        /// `oci://host[:port]/repository:tag`.
        #[arg(value_name = "REF")]
        reference: String,
    },
    /// Pull a plugin by tag (resolved once) or digest into a plugin
    /// directory and lock it in its `plugins.lock`; signatures are checked
    /// against the config's `[plugins.trust]` before the component is
    /// downloaded.
    Pull {
        /// `oci://host[:port]/repository:tag` or `…@sha256:…`.
        #[arg(value_name = "REF")]
        reference: String,
        /// The plugin directory (default: the directory of the config's
        /// `plugins.lock`, else `plugins`).
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// The plugin's name in the lock (default: the repository's last
        /// path segment); it must be the tool the component declares.
        #[arg(long)]
        name: Option<String>,
        /// The host config with the trust policy.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Accept a tag that moved since it was locked.
        #[arg(long)]
        update: bool,
    },
    /// Sign the manifest a reference names, as `cosign sign --key` does.
    Sign {
        /// `oci://host[:port]/repository:tag` or `…@sha256:…`.
        #[arg(value_name = "REF")]
        reference: String,
        /// A PKCS#8 PEM private key (`harmonia plugin keygen`).
        #[arg(long, value_name = "FILE")]
        key: PathBuf,
    },
    /// Make a signing key pair: `OUT.key` (private, mode 0600) and
    /// `OUT.pub` (public, for `[plugins.trust]` and `cosign verify --key`).
    Keygen {
        /// The path without extension.
        #[arg(long, value_name = "PATH")]
        out: PathBuf,
        /// Ed25519 instead of ECDSA P-256 (cosign's default).
        #[arg(long)]
        ed25519: bool,
    },
    /// Verify every locked plugin offline, as the host does on every load.
    Verify {
        /// The plugin directory.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// The host config with the trust policy.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
}
