//! The serve config: a TOML file of its own (`--serve-config`), apart
//! from `harmonia.toml`, which configures the host.
//!
//! ```toml
//! tokens_file = "tokens.toml"          # static bearer tokens (hashes)
//! allowed_hosts = ["localhost", "127.0.0.1"]   # Host headers accepted (DNS rebinding)
//! replica_id = "a"                     # optional: session ids say which replica holds them
//! [jwt]                                # optional: JWT access tokens
//! jwks_file = "jwks.json"
//! issuer = "https://id.example"
//! audience = "harmonia"
//! workspace_claim = "harmonia_workspace"
//! [telemetry]                          # optional: OpenTelemetry spans over OTLP/HTTP
//! otlp_endpoint = "http://127.0.0.1:4318/v1/traces"
//! [metrics]                            # GET /metrics (Prometheus text)
//! enabled = true                       # false: no route, nothing counted
//! require_token = false                # true: behind the bearer check
//! [limits]                             # every bound, with its default
//! max_body_kib = 1024
//! max_sessions = 64
//! max_connections = 2048
//! max_in_flight_calls = 1024
//! idle_session_s = 300
//! request_timeout_s = 150
//! header_timeout_s = 10
//! retry_after_s = 2
//! write_stall_s = 30
//! ```

use crate::auth::jwt::JwtConfig;
use crate::telemetry::TelemetryConfig;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The whole serve config.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct ServeConfig {
    /// The static token store.
    pub tokens_file: Option<PathBuf>,
    /// JWT access tokens.
    pub jwt: Option<JwtConfig>,
    /// `Host` header values accepted; loopback names when empty.
    pub allowed_hosts: Vec<String>,
    /// This process's name behind a load balancer: session ids become
    /// `<replica_id>.<random>` (letters, digits and `-`, at most 32).
    pub replica_id: Option<String>,
    /// OpenTelemetry spans (off without an endpoint).
    pub telemetry: TelemetryConfig,
    /// The metrics endpoint.
    pub metrics: MetricsConfig,
    /// The bounds.
    pub limits: Limits,
}

/// `GET /metrics`: served without a credential by default, like most
/// exporters (it carries no tokens, arguments or workspaces, only counts
/// by bounded labels); an operator may put it behind the bearer check or
/// turn it off.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct MetricsConfig {
    /// Serve `GET /metrics` and count (off: nothing is counted).
    pub enabled: bool,
    /// Ask for a valid bearer token, as on `/mcp`.
    pub require_token: bool,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        Self { enabled: true, require_token: false }
    }
}

/// Every bound the server keeps.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Largest request body, KiB (413 past it).
    pub max_body_kib: u32,
    /// Most MCP sessions open at once (503 + Retry-After past it).
    pub max_sessions: u32,
    /// Most client connections open at once; one past it is answered 503
    /// with Retry-After and closed.
    pub max_connections: u32,
    /// Most tool calls running at once; past it a call waits up to its
    /// deadline, then gets a retryable `dependency_unavailable` envelope.
    pub max_in_flight_calls: u32,
    /// A session idle this long is closed, seconds.
    pub idle_session_s: u64,
    /// A request (headers, body and answer) taking longer is cut, seconds.
    pub request_timeout_s: u64,
    /// A client that has not sent its request headers in this time is
    /// disconnected, seconds.
    pub header_timeout_s: u64,
    /// The `Retry-After` given with a 503, seconds.
    pub retry_after_s: u64,
    /// A connection whose client has not read for this long while the
    /// server waits to write is closed, seconds.
    pub write_stall_s: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_body_kib: 1024,
            max_sessions: 64,
            max_connections: 2048,
            max_in_flight_calls: 1024,
            idle_session_s: 300,
            request_timeout_s: 150,
            header_timeout_s: 10,
            retry_after_s: 2,
            write_stall_s: 30,
        }
    }
}

impl Limits {
    /// `max_body_kib` in bytes.
    pub fn max_body_bytes(&self) -> usize {
        self.max_body_kib as usize * 1024
    }

    /// `request_timeout_s`.
    pub fn request_timeout(&self) -> Duration {
        Duration::from_secs(self.request_timeout_s)
    }
}

/// Why the serve config is unusable.
#[derive(Debug, thiserror::Error)]
pub enum ServeConfigError {
    /// Unreadable.
    #[error("cannot read serve config {0}: {1}")]
    Read(PathBuf, std::io::Error),
    /// Malformed.
    #[error("invalid serve config {0}: {1}")]
    Parse(PathBuf, String),
    /// A value breaks its rule.
    #[error("invalid serve config: {0}")]
    Invalid(String),
}

impl ServeConfig {
    /// Read and check `path`; relative paths inside are relative to its directory.
    pub fn from_file(path: &Path) -> Result<Self, ServeConfigError> {
        let text =
            std::fs::read_to_string(path).map_err(|error| ServeConfigError::Read(path.to_owned(), error))?;
        let mut config: Self = toml::from_str(&text)
            .map_err(|error| ServeConfigError::Parse(path.to_owned(), error.message().to_owned()))?;
        let base = path.parent().unwrap_or(Path::new("."));
        let resolve = |file: &mut PathBuf| {
            if file.is_relative() {
                *file = base.join(&*file);
            }
        };
        if let Some(file) = config.tokens_file.as_mut() {
            resolve(file);
        }
        if let Some(file) = config.jwt.as_mut().and_then(|jwt| jwt.jwks_file.as_mut()) {
            resolve(file);
        }
        config.check()?;
        Ok(config)
    }

    /// Check every value's rule.
    pub fn check(&self) -> Result<(), ServeConfigError> {
        let limits = &self.limits;
        let positive = [
            ("limits.max_body_kib", u64::from(limits.max_body_kib)),
            ("limits.max_sessions", u64::from(limits.max_sessions)),
            ("limits.max_connections", u64::from(limits.max_connections)),
            ("limits.max_in_flight_calls", u64::from(limits.max_in_flight_calls)),
            ("limits.idle_session_s", limits.idle_session_s),
            ("limits.request_timeout_s", limits.request_timeout_s),
            ("limits.header_timeout_s", limits.header_timeout_s),
            ("limits.write_stall_s", limits.write_stall_s),
        ];
        if let Some((key, _)) = positive.iter().find(|(_, value)| *value == 0) {
            return Err(ServeConfigError::Invalid(format!("{key} must be at least 1")));
        }
        // The host gives every call let in an async slot of its own.
        let most_calls = *harmonia_host::ASYNC_CALLS.end();
        if limits.max_in_flight_calls > most_calls {
            return Err(ServeConfigError::Invalid(format!(
                "limits.max_in_flight_calls must be at most {most_calls}"
            )));
        }
        if let Some(jwt) = &self.jwt
            && jwt.jwks_file.is_none()
            && jwt.jwks_url.is_none()
        {
            return Err(ServeConfigError::Invalid("[jwt] needs jwks_file or jwks_url".into()));
        }
        if let Some(id) = &self.replica_id
            && (id.is_empty()
                || id.len() > 32
                || !id.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'-'))
        {
            return Err(ServeConfigError::Invalid("replica_id is 1 to 32 letters, digits or `-`".into()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bound_must_be_positive_and_jwt_needs_keys() {
        let config: ServeConfig = toml::from_str("[limits]\nmax_in_flight_calls = 0\n").unwrap();
        assert!(config.check().unwrap_err().to_string().contains("limits.max_in_flight_calls"));
        let config: ServeConfig = toml::from_str("[limits]\nmax_in_flight_calls = 16385\n").unwrap();
        assert!(
            config
                .check()
                .unwrap_err()
                .to_string()
                .contains("limits.max_in_flight_calls must be at most 16384")
        );
        let config: ServeConfig = toml::from_str("[limits]\nmax_in_flight_calls = 16384\n").unwrap();
        assert!(config.check().is_ok());
        let config: ServeConfig = toml::from_str("[jwt]\nissuer = \"i\"\naudience = \"a\"\n").unwrap();
        assert!(config.check().unwrap_err().to_string().contains("jwks_file or jwks_url"));
        for bad in ["", "a.b", "a b", &"x".repeat(33)] {
            let config = ServeConfig { replica_id: Some(bad.to_owned()), ..ServeConfig::default() };
            assert!(config.check().unwrap_err().to_string().contains("replica_id"), "{bad:?}");
        }
        let config = ServeConfig { replica_id: Some("eu-1".to_owned()), ..ServeConfig::default() };
        config.check().unwrap();
        assert!(toml::from_str::<ServeConfig>("tokens = \"x\"\n").is_err(), "unknown keys are refused");
        assert!(ServeConfig::default().check().is_ok());
    }
}
