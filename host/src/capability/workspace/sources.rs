//! The workspace source the config names (fixtures in mock mode).

use super::config::{WorkspaceConfig, WorkspaceSourceKind};
use super::source::WorkspaceSource;
use super::{http, mock, sqlite};
use crate::config::ConfigError;
use std::sync::Arc;

/// The source the config names.
pub fn from_config(config: &WorkspaceConfig, mock: bool) -> Result<Arc<dyn WorkspaceSource>, ConfigError> {
    if mock {
        return Ok(Arc::new(mock::source()));
    }
    Ok(match config.source {
        WorkspaceSourceKind::Sqlite => Arc::new(sqlite::SqliteSource::new(config.path.clone())),
        WorkspaceSourceKind::Http => Arc::new(http::HttpSource::new(config)?),
        WorkspaceSourceKind::Mock => Arc::new(mock::source()),
    })
}
