//! One module per subcommand.

mod call;
mod conformance;

mod inspect;
pub mod new;
mod plugin;
mod review;
pub mod serve;
mod session;
mod tools;
mod validate;
mod workspace;

use crate::args::{Cli, Command};
use anyhow::Result;
use std::process::ExitCode;

/// Run the parsed command.
pub fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Tools { host, json } => tools::run(&host, json),
        Command::Call { tool, input, workspace, host, pretty, receipts } => {
            call::run(&tool, &input, workspace, &host, pretty, receipts)
        }
        Command::New { tool, lang, world, dir } => new::run(&tool, lang, world, dir.as_deref()),
        Command::Inspect { path, config, json, quiet } => inspect::run(&path, config.as_deref(), json, quiet),
        Command::Workspace { command } => workspace::run(command),
        Command::Validate { trace, answer, submission, require_signer, public_key, config, json, skills } => {
            let trust = validate::Trust { public_key: public_key.as_deref(), config: config.as_deref() };
            let checks = validate::Checks { submission, require_signer: require_signer.as_deref() };
            validate::run(&trace, &answer, &checks, &trust, json, skills.as_deref())
        }
        Command::Review { trace, answer, out, submission, public_key, config, skills } => {
            let trust = validate::Trust { public_key: public_key.as_deref(), config: config.as_deref() };
            let request = review::Request {
                trace: &trace,
                answer: &answer,
                out: out.as_deref(),
                submission,
                skills: skills.as_deref(),
            };
            review::run(&request, &trust)
        }
        Command::TraceKey { config } => validate::print_trace_key(config.as_deref()),
        Command::Session { workspace, host, skills } => session::run(workspace, &host, skills.as_deref()),
        Command::Serve(args) => serve::run(args),
        Command::Plugin { command } => plugin::run(command),
        Command::Demo { export, html } => crate::demo::run(export.as_deref(), html.as_deref()),
        Command::Bench { json, quick, plugins, only, peers, database } => harmonia_bench::run(
            json,
            quick,
            &plugins,
            &only,
            peers.as_deref(),
            database.as_deref(),
            crate::output::write,
        ),
        Command::Cache { command: crate::args::CacheCommand::Clear { config } } => {
            cache_clear(config.as_deref())
        }
        Command::Conformance {
            paths,
            json,
            config,
            web_fixture,
            workspace_fixture,
            deadline_cap_ms,
            quiet,
        } => {
            let fixtures = conformance::Fixtures {
                web: web_fixture.as_deref(),
                workspace: workspace_fixture.as_deref(),
            };
            conformance::run(&paths, json, config.as_deref(), fixtures, deadline_cap_ms, quiet)
        }
    }
}

fn cache_clear(config: Option<&std::path::Path>) -> Result<ExitCode> {
    let config = crate::setup::load_config(config)?;
    let Some(dir) = config.cache.dir.or_else(harmonia_host::cache::default_dir) else {
        anyhow::bail!("no cache directory: set cache.dir or HOME");
    };
    let removed = harmonia_host::cache::ComponentCache::clear(&dir)?;
    outln!("removed {removed} cached components from {}", dir.display());
    Ok(ExitCode::SUCCESS)
}
