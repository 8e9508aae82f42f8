//! The `harmonia` command: run, inspect and check sandboxed agent tools.
//!
//! Parts:
//! - [`args`]: the command line (clap), one subcommand per job.
//! - [`setup`]: config loading, logging and host construction shared by
//!   the subcommands.
//! - `commands/*`: one module per subcommand.
//! - [`demo`]: the offline story `harmonia demo` tells.
//! - `bench`: `harmonia bench` is the `harmonia-bench` crate's [`harmonia_bench::run`].
//! - [`output`]: stdout that may be closed (no panic on a closed pipe).
//! - [`progress`]: the spinner shown while a component compiles.
//! - the global allocator: jemalloc (see `ALLOCATOR`).
//!
//! Exit codes: 0 success (for `call`: an envelope was printed, success or
//! error); 1 a host failure (bad config, refused plugin, unknown tool) or a
//! negative verdict; 2 bad usage or unreadable input files. Failures print
//! one line on stderr. A closed stdout ends any command quietly with 0.

#[macro_use]
mod output;
mod args;
mod commands;
mod demo;
mod progress;
mod setup;

use clap::Parser;
use std::process::ExitCode;

// jemalloc, not glibc's malloc: under 1,000 MCP sessions glibc's
// allocator took about 15% of `harmonia serve`'s CPU, and a call's CPU
// doubled from 64 sessions to 1,000. jemalloc cut it by about a fifth and
// keeps the peak memory within the bounds mimalloc broke
// (docs/performance.md, "Server CPU per call against Wassette").
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    let cli = match args::Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            use clap::error::ErrorKind;
            if matches!(error.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let _ = error.print();
                return ExitCode::SUCCESS;
            }
            if error.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                let _ = error.print();
                return ExitCode::from(2);
            }
            // clap's message runs until a blank line or the usage block.
            let rendered = error.render().to_string();
            let message: Vec<&str> = rendered
                .lines()
                .map(str::trim)
                .take_while(|line| !line.is_empty() && !line.starts_with("Usage:"))
                .collect();
            let message = message.join(" ");
            eprintln!("harmonia: {} (see `harmonia --help`)", message.trim_start_matches("error: "));
            return ExitCode::from(2);
        }
    };
    match commands::run(cli) {
        Ok(code) => code,
        Err(error) if output::is_closed_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("harmonia: {}", one_line(&error));
            ExitCode::from(error.downcast_ref::<setup::UsageError>().map_or(1, |_| 2))
        }
    }
}

/// The error and its causes on one line, skipping causes whose text the
/// message already carries.
fn one_line(error: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in error.chain() {
        let cause = cause.to_string();
        if text.contains(&cause) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&cause);
    }
    text.lines().map(str::trim).filter(|line| !line.is_empty()).collect::<Vec<_>>().join(" ")
}
