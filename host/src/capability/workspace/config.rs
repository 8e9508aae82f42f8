//! `[workspace]`: the workspace's config section, its defaults and the
//! checks serde cannot express.

use harmonia_contract::url::parse_http_url;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Where workspace data comes from.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkspaceSourceKind {
    /// The embedded SQLite store (opened read-only).
    #[default]
    Sqlite,
    /// The Harmonia web internal API.
    Http,
    /// Built-in fixtures.
    Mock,
}

/// The workspace capability.
#[derive(Clone, Debug, Deserialize, PartialEq, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorkspaceConfig {
    /// The source.
    pub source: WorkspaceSourceKind,
    /// SQLite database path.
    pub path: PathBuf,
    /// Base URL of the internal API.
    pub base_url: Option<String>,
    /// Environment variable holding the API's bearer token.
    pub token_env: String,
    /// Largest response body from the API, KiB.
    pub max_body_kib: u32,
}

impl Default for WorkspaceConfig {
    fn default() -> Self {
        Self {
            source: WorkspaceSourceKind::Sqlite,
            path: PathBuf::from("harmonia.db"),
            base_url: None,
            token_env: "HARMONIA_API_TOKEN".into(),
            max_body_kib: 4096,
        }
    }
}

impl WorkspaceConfig {
    /// The rules serde cannot express; the message names the key.
    pub fn check(&self) -> Result<(), String> {
        if self.max_body_kib == 0 {
            return Err("workspace.max_body_kib must be positive".into());
        }
        if self.source == WorkspaceSourceKind::Http
            && self.base_url.as_deref().and_then(parse_http_url).is_none()
        {
            return Err("workspace.base_url must be an http(s) URL when source = \"http\"".into());
        }
        Ok(())
    }

    /// Take a relative `path` from `base` (the config file's directory).
    pub fn resolve_paths(&mut self, base: &Path) {
        if self.path.is_relative() {
            self.path = base.join(&self.path);
        }
    }
}
