//! `harmonia workspace import FILE`: load a workspace document into the
//! SQLite store in one transaction, reading the file as a stream (memory
//! does not grow with the number of posts or jobs).

use crate::args::WorkspaceCommand;
use crate::setup::{UsageError, load_config};
use anyhow::{Context, Result};
use harmonia_host::capability::workspace::sqlite::{self, ImportError};
use std::io::BufReader;
use std::process::ExitCode;

pub fn run(command: WorkspaceCommand) -> Result<ExitCode> {
    match command {
        WorkspaceCommand::Import { file, db, config } => {
            let config = load_config(config.as_deref())?;
            let reader = std::fs::File::open(&file).map_err(|error| {
                UsageError(format!("cannot read workspace file {}: {error}", file.display()))
            })?;
            let db = db.unwrap_or(config.workspace.path);
            let summary = match sqlite::import_reader(&db, BufReader::with_capacity(1 << 16, reader)) {
                Ok(summary) => summary,
                Err(ImportError::Document(error)) => {
                    return Err(UsageError(format!("{} refused: {error}", file.display())).into());
                }
                Err(error) => {
                    return Err(error).with_context(|| format!("cannot import into {}", db.display()));
                }
            };
            outln!(
                "imported workspace {} into {}: {} posts ({} measured), {} jobs",
                summary.workspace_id,
                db.display(),
                summary.posts,
                summary.measured_posts,
                summary.jobs
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}
