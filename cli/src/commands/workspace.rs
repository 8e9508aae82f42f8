//! `harmonia workspace import FILE`: load a workspace document into the
//! SQLite store in one transaction.

use crate::args::WorkspaceCommand;
use crate::setup::{UsageError, load_config, read_text};
use anyhow::{Context, Result};
use harmonia_host::capability::workspace::document::WorkspaceDocument;
use harmonia_host::capability::workspace::sqlite;
use std::process::ExitCode;

pub fn run(command: WorkspaceCommand) -> Result<ExitCode> {
    match command {
        WorkspaceCommand::Import { file, db, config } => {
            let config = load_config(config.as_deref())?;
            let text = read_text(&file, "workspace file")?;
            let document = WorkspaceDocument::parse(&text)
                .map_err(|error| UsageError(format!("{} refused: {error}", file.display())))?;
            let db = db.unwrap_or(config.workspace.path);
            let summary = sqlite::import(&db, &document)
                .with_context(|| format!("cannot import into {}", db.display()))?;
            println!(
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
