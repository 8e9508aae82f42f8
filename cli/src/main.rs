//! The `harmonia` command: run, inspect and check sandboxed agent tools.
//!
//! Parts:
//! - [`args`]: the command line (clap), one subcommand per job.
//! - [`setup`]: config loading, logging and host construction shared by
//!   the subcommands.
//! - `commands/*`: one module per subcommand.
//! - [`demo`]: the offline story `harmonia demo` tells.
//!
//! Exit codes: 0 success (for `call`: an envelope was printed, success or
//! error); 1 a host failure (bad config, refused plugin, unknown tool) or a
//! negative verdict; 2 bad usage or unreadable input files. Failures print
//! one line on stderr.

mod args;
mod commands;
mod demo;
mod setup;

use clap::Parser;
use std::process::ExitCode;

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
            let rendered = error.render().to_string();
            let first = rendered.lines().find(|line| !line.trim().is_empty()).unwrap_or("invalid usage");
            eprintln!("harmonia: {} (see `harmonia --help`)", first.trim_start_matches("error: "));
            return ExitCode::from(2);
        }
    };
    match commands::run(cli) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("harmonia: {}", one_line(&error));
            ExitCode::from(error.downcast_ref::<setup::UsageError>().map_or(1, |_| 2))
        }
    }
}

fn one_line(error: &anyhow::Error) -> String {
    let text = format!("{error:#}");
    text.lines().map(str::trim).filter(|line| !line.is_empty()).collect::<Vec<_>>().join(" ")
}
