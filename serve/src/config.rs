//! The serve config: a TOML file of its own (`--serve-config`), apart
//! from `harmonia.toml`, which configures the host.
//!
//! ```toml
//! tokens_file = "tokens.toml"          # static bearer tokens (hashes)
//! allowed_hosts = ["localhost", "127.0.0.1"]   # Host headers accepted (DNS rebinding), every route
//! allowed_origins = ["https://app.example"]    # Origin headers accepted; loopback origins when empty
//! replica_id = "a"                     # optional: session ids say which replica holds them
//! stateless_fast_path = true           # a stateless tools/call without rmcp's per-request service
//! [jwt]                                # optional: JWT access tokens
//! jwks_file = "jwks.json"
//! issuer = "https://id.example"
//! audience = "harmonia"
//! workspace_claim = "harmonia_workspace"
//! [oauth]                              # optional: OAuth 2.1 protected-resource metadata (RFC 9728)
//! resource = "https://mcp.example/mcp" # the canonical resource URI; JWTs must name it in `aud`
//! authorization_servers = ["https://id.example"]
//! tool_scope = "harmonia:tools:{tool}" # a JWT calls a tool only with its scope
//! skill_scope = "harmonia:skills:{skill}"   # and uses a skill's route only with its
//! [sessions]                           # optional: stateless guarded sessions shared by replicas
//! key_file = "session.key"             # >= 32 bytes of secret, mode 600: seals the handles
//! ledger = "sessions.db"               # SQLite file, or postgres://user@host:5432/db (several machines)
//! password_file = "ledger.password"    # PostgreSQL's password (else $HARMONIA_LEDGER_PASSWORD)
//! ca_file = "postgres-ca.pem"          # with ?sslmode=require: the CAs the database's certificate chains to
//! pool_size = 16                       # connections to PostgreSQL
//! timeout_ms = 2000                    # the longest wait on PostgreSQL
//! [telemetry]                          # optional: OpenTelemetry spans over OTLP/HTTP
//! otlp_endpoint = "http://127.0.0.1:4318/v1/traces"
//! [metrics]                            # GET /metrics (Prometheus text)
//! enabled = true                       # false: no route, nothing counted
//! require_token = false                # true: behind the bearer check
//! [reload]                             # hot reload of the lock file and plugin directory
//! enabled = true
//! poll_interval_ms = 2000              # 100 to 600000; SIGHUP reloads at once
//! [rate_limits]                        # token buckets per credential (and per tool)
//! enabled = true
//! calls_per_second = 50                # every tool together, per credential
//! burst = 100
//! [rate_limits.tools.get_job_status]   # optional: one tool, per credential
//! calls_per_second = 5
//! burst = 10
//! [limits]                             # every bound, with its default
//! max_body_kib = 1024
//! max_request_bodies_kib = 262144
//! max_request_bodies_kib_per_credential = 65536
//! max_sessions = 64
//! max_sessions_per_credential = 16
//! max_connections = 2048
//! max_connections_per_credential = 512
//! max_in_flight_calls = 1024
//! max_in_flight_calls_per_credential = 256
//! max_validations = 2
//! max_validations_per_credential = 1
//! idle_session_s = 300
//! request_timeout_s = 150
//! header_timeout_s = 10
//! retry_after_s = 2
//! write_stall_s = 30
//! ```

use crate::auth::jwt::JwtConfig;
use crate::telemetry::TelemetryConfig;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The whole serve config.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct ServeConfig {
    /// The static token store.
    pub tokens_file: Option<PathBuf>,
    /// JWT access tokens.
    pub jwt: Option<JwtConfig>,
    /// `Host` header values accepted on every route; loopback names when
    /// empty.
    pub allowed_hosts: Vec<String>,
    /// `Origin` header values accepted (`scheme://host[:port]`); when
    /// empty, only origins on a loopback host. A request without `Origin`
    /// (not from a browser) is not affected.
    pub allowed_origins: Vec<String>,
    /// This process's name behind a load balancer: session ids become
    /// `<replica_id>.<random>` (letters, digits and `-`, at most 32).
    pub replica_id: Option<String>,
    /// Answer a stateless (2026-07-28) `tools/call` without rmcp's
    /// per-request service (`crate::http::fast_path`); false sends every
    /// request to rmcp.
    pub stateless_fast_path: bool,
    /// The OAuth protected-resource metadata, when published.
    pub oauth: Option<OAuthConfig>,
    /// OpenTelemetry spans (off without an endpoint).
    pub telemetry: TelemetryConfig,
    /// The metrics endpoint.
    pub metrics: MetricsConfig,
    /// Hot reload of the plugin set.
    pub reload: ReloadConfig,
    /// Rate limits on tool calls, per credential.
    pub rate_limits: RateLimits,
    /// Guarded sessions on the stateless revision: the key sealing their
    /// handles and the ledger holding them, shared by replicas.
    pub sessions: SessionsConfig,
    /// The bounds.
    pub limits: Limits,
}

impl Default for ServeConfig {
    fn default() -> Self {
        Self {
            tokens_file: None,
            jwt: None,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            replica_id: None,
            stateless_fast_path: true,
            oauth: None,
            telemetry: TelemetryConfig::default(),
            metrics: MetricsConfig::default(),
            reload: ReloadConfig::default(),
            rate_limits: RateLimits::default(),
            sessions: SessionsConfig::default(),
            limits: Limits::default(),
        }
    }
}

/// `[sessions]`: where stateless guarded sessions (MCP 2026-07-28, no
/// MCP session) live between calls, and where every replica counts the
/// sessions of both kinds. Replicas behind one load balancer name the same
/// key and the same ledger, so any of them serves any call; a single
/// process needs neither (a key made at start, a ledger in memory).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct SessionsConfig {
    /// A file of at least 32 bytes of secret (mode 600) sealing the
    /// handles clients carry.
    pub key_file: Option<PathBuf>,
    /// The ledger: a SQLite file (replicas on one machine), or a
    /// PostgreSQL URL, `postgres://user@host:port/database` (replicas on
    /// several machines; no password in it).
    pub ledger: Option<String>,
    /// The PostgreSQL password (mode 600; else `$HARMONIA_LEDGER_PASSWORD`).
    pub password_file: Option<PathBuf>,
    /// With `sslmode=require`: the certificate authorities (PEM) the
    /// database's certificate must chain to (else the Mozilla roots).
    pub ca_file: Option<PathBuf>,
    /// Most connections to PostgreSQL this process holds.
    pub pool_size: u32,
    /// The longest any wait on PostgreSQL lasts (a connection, a
    /// statement), ms: past it the operation is refused as unavailable.
    pub timeout_ms: u64,
}

impl Default for SessionsConfig {
    fn default() -> Self {
        Self {
            key_file: None,
            ledger: None,
            password_file: None,
            ca_file: None,
            pool_size: 16,
            timeout_ms: 2000,
        }
    }
}

/// `[oauth]`: this server as an OAuth 2.1 resource server. Published at
/// `/.well-known/oauth-protected-resource` (and the form suffixed with
/// the resource's path, RFC 9728 §3.1), named in every 401's
/// `WWW-Authenticate` as `resource_metadata`, so a client discovers
/// where to get a token; JWTs must name `resource` as their audience
/// (RFC 8707).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct OAuthConfig {
    /// The canonical URI of the MCP endpoint (`https://host/mcp`).
    pub resource: String,
    /// The authorization servers that issue tokens for it.
    pub authorization_servers: Vec<String>,
    /// Scopes published in `scopes_supported` beside every tool's and
    /// skill's (e.g. `offline_access`).
    #[serde(default)]
    pub scopes_supported: Vec<String>,
    /// The scope a JWT needs to call a tool: `{tool}` stands for its name
    /// (without it, one scope for every tool).
    #[serde(default = "default_tool_scope")]
    pub tool_scope: String,
    /// The scope a JWT needs on a skill's route (`/mcp/skills/<name>`) and
    /// to get its prompt: `{skill}` stands for its name.
    #[serde(default = "default_skill_scope")]
    pub skill_scope: String,
}

fn default_tool_scope() -> String {
    "harmonia:tools:{tool}".into()
}

fn default_skill_scope() -> String {
    "harmonia:skills:{skill}".into()
}

/// Whether `text` is one scope token (RFC 6749 §3.3: printable ASCII
/// but space, `"` and `\`).
pub fn is_scope_token(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|byte| matches!(byte, 0x21 | 0x23..=0x5B | 0x5D..=0x7E))
}

impl OAuthConfig {
    /// The resource's origin and path, when `resource` is an absolute
    /// http(s) URI without query or fragment.
    pub fn origin_and_path(&self) -> Option<(String, String)> {
        let uri: axum::http::Uri = self.resource.parse().ok()?;
        let scheme = uri.scheme_str().filter(|scheme| matches!(*scheme, "https" | "http"))?;
        let authority = uri.authority()?;
        if uri.query().is_some() || self.resource.contains('#') {
            return None;
        }
        let path = uri.path().trim_end_matches('/').to_owned();
        Some((format!("{scheme}://{authority}"), path))
    }

    /// The metadata document's URL, as `WWW-Authenticate` names it.
    pub fn metadata_url(&self) -> Option<String> {
        let (origin, path) = self.origin_and_path()?;
        Some(format!("{origin}/.well-known/oauth-protected-resource{path}"))
    }

    /// The scope that lets a JWT call `tool`.
    pub fn tool_scope(&self, tool: &str) -> String {
        self.tool_scope.replace("{tool}", tool)
    }

    /// The scope that lets a JWT use the skill `skill`.
    pub fn skill_scope(&self, skill: &str) -> String {
        self.skill_scope.replace("{skill}", skill)
    }
}

/// A token bucket's refill rate and size.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Rate {
    /// Calls the bucket refills per second (fractions allowed).
    pub calls_per_second: f64,
    /// Calls it holds when full: a burst let through at once.
    pub burst: u32,
}

impl Rate {
    /// Why the rate is unusable, if it is.
    pub fn problem(&self) -> Option<&'static str> {
        if !(self.calls_per_second.is_finite() && self.calls_per_second > 0.0) {
            Some("calls_per_second must be a positive number")
        } else if self.burst == 0 {
            Some("burst must be at least 1")
        } else {
            None
        }
    }
}

/// `[rate_limits]`: tool calls per credential (the MCP specification
/// asks servers to rate-limit tool invocations). A credential's own rate
/// (a token entry's `rate_limit`, a JWT's rate claim) replaces
/// `calls_per_second` and `burst`; a tool's table adds a second bucket
/// per credential for that tool.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RateLimits {
    /// Off: no call is rate-limited.
    pub enabled: bool,
    /// Every tool together, per credential.
    pub calls_per_second: f64,
    /// The burst of that bucket.
    pub burst: u32,
    /// One tool, per credential.
    pub tools: BTreeMap<String, Rate>,
}

impl Default for RateLimits {
    fn default() -> Self {
        Self { enabled: true, calls_per_second: 50.0, burst: 100, tools: BTreeMap::new() }
    }
}

impl RateLimits {
    /// The bucket every call of a credential draws from.
    pub fn credential(&self) -> Rate {
        Rate { calls_per_second: self.calls_per_second, burst: self.burst }
    }
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

/// `[reload]`: the lock file, the plugin directory and the plugin files
/// are looked at this often; a change that stays for one whole interval
/// is verified, loaded and swapped in (crate::reload). `SIGHUP` reloads
/// at once.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct ReloadConfig {
    /// Watch at all (off: the set loaded at start serves until exit;
    /// `SIGHUP` still reloads).
    pub enabled: bool,
    /// Between two looks, ms.
    pub poll_interval_ms: u64,
}

/// The bounds of `reload.poll_interval_ms`.
pub const POLL_INTERVAL_MS: std::ops::RangeInclusive<u64> = 100..=600_000;

impl Default for ReloadConfig {
    fn default() -> Self {
        Self { enabled: true, poll_interval_ms: 2000 }
    }
}

impl ReloadConfig {
    /// Between two looks.
    pub fn interval(&self) -> Duration {
        Duration::from_millis(self.poll_interval_ms)
    }
}

/// Every bound the server keeps.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Largest request body, KiB (413 past it).
    pub max_body_kib: u32,
    /// Most KiB the bodies on their way may announce at once (each its
    /// `Content-Length`, or `max_body_kib` when chunked), over the server:
    /// a body is buffered whole before it is parsed, so this bounds that
    /// memory; the request that would pass it gets 503 with Retry-After.
    pub max_request_bodies_kib: u32,
    /// The same, for one credential's requests.
    pub max_request_bodies_kib_per_credential: u32,
    /// Most MCP sessions open at once (503 + Retry-After past it).
    pub max_sessions: u32,
    /// Most MCP sessions one credential holds at once (503 + Retry-After
    /// past it, while other credentials still open theirs).
    pub max_sessions_per_credential: u32,
    /// Most client connections open at once; one past it is answered 503
    /// with Retry-After at once and closed.
    pub max_connections: u32,
    /// Most connections one credential holds (a connection is held by
    /// the first credential that authenticates on it); the request that
    /// would pass it gets 503 with Retry-After and the connection closes.
    pub max_connections_per_credential: u32,
    /// Most tool calls running at once; past it a call waits up to its
    /// deadline, then gets a retryable `dependency_unavailable` envelope.
    pub max_in_flight_calls: u32,
    /// Most tool calls one credential runs at once; past it its calls
    /// wait in the same way, while other credentials' calls run.
    pub max_in_flight_calls_per_credential: u32,
    /// Most `/v1/validate` requests judged at once (each on a blocking
    /// thread, off the server's workers); others wait up to the request
    /// timeout.
    pub max_validations: u32,
    /// Most `/v1/validate` and `/v1/review` requests one credential has
    /// judged or waiting for a place at once; its others wait their turn
    /// behind its own (up to the request timeout), never in front of
    /// another credential's.
    pub max_validations_per_credential: u32,
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
            max_request_bodies_kib: 256 * 1024,
            max_request_bodies_kib_per_credential: 64 * 1024,
            max_sessions: 64,
            max_sessions_per_credential: 16,
            max_connections: 2048,
            max_connections_per_credential: 512,
            max_in_flight_calls: 1024,
            max_in_flight_calls_per_credential: 256,
            max_validations: 2,
            max_validations_per_credential: 1,
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
        for file in [
            config.sessions.key_file.as_mut(),
            config.sessions.password_file.as_mut(),
            config.sessions.ca_file.as_mut(),
        ]
        .into_iter()
        .flatten()
        {
            resolve(file);
        }
        if let Some(ledger) = config.sessions.ledger.as_mut()
            && !crate::database::is_url(ledger)
            && Path::new(ledger.as_str()).is_relative()
        {
            *ledger = base.join(ledger.as_str()).display().to_string();
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
            ("limits.max_sessions_per_credential", u64::from(limits.max_sessions_per_credential)),
            ("limits.max_connections", u64::from(limits.max_connections)),
            ("limits.max_connections_per_credential", u64::from(limits.max_connections_per_credential)),
            ("limits.max_in_flight_calls", u64::from(limits.max_in_flight_calls)),
            (
                "limits.max_in_flight_calls_per_credential",
                u64::from(limits.max_in_flight_calls_per_credential),
            ),
            ("limits.max_validations", u64::from(limits.max_validations)),
            ("limits.max_validations_per_credential", u64::from(limits.max_validations_per_credential)),
            ("limits.idle_session_s", limits.idle_session_s),
            ("limits.request_timeout_s", limits.request_timeout_s),
            ("limits.header_timeout_s", limits.header_timeout_s),
            ("limits.write_stall_s", limits.write_stall_s),
        ];
        if let Some((key, _)) = positive.iter().find(|(_, value)| *value == 0) {
            return Err(ServeConfigError::Invalid(format!("{key} must be at least 1")));
        }
        for (key, value) in [
            ("limits.max_request_bodies_kib", limits.max_request_bodies_kib),
            ("limits.max_request_bodies_kib_per_credential", limits.max_request_bodies_kib_per_credential),
        ] {
            if value < limits.max_body_kib {
                return Err(ServeConfigError::Invalid(format!(
                    "{key} must be at least limits.max_body_kib ({}), or a body of the largest size never passes",
                    limits.max_body_kib
                )));
            }
        }
        // The host gives every call let in an async slot of its own.
        let most_calls = *harmonia_host::CALLS.end();
        if limits.max_in_flight_calls > most_calls {
            return Err(ServeConfigError::Invalid(format!(
                "limits.max_in_flight_calls must be at most {most_calls}"
            )));
        }
        if !POLL_INTERVAL_MS.contains(&self.reload.poll_interval_ms) {
            return Err(ServeConfigError::Invalid(format!(
                "reload.poll_interval_ms must be from {} to {}",
                POLL_INTERVAL_MS.start(),
                POLL_INTERVAL_MS.end()
            )));
        }
        if let Some(problem) = self.rate_limits.credential().problem() {
            return Err(ServeConfigError::Invalid(format!("rate_limits: {problem}")));
        }
        if let Some((tool, problem)) = self
            .rate_limits
            .tools
            .iter()
            .find_map(|(tool, rate)| rate.problem().map(|problem| (tool, problem)))
        {
            return Err(ServeConfigError::Invalid(format!("rate_limits.tools.{tool}: {problem}")));
        }
        if let Some(oauth) = &self.oauth {
            if oauth.origin_and_path().is_none() {
                return Err(ServeConfigError::Invalid(
                    "oauth.resource must be an absolute http(s) URI without query or fragment".into(),
                ));
            }
            if oauth.authorization_servers.is_empty() {
                return Err(ServeConfigError::Invalid(
                    "oauth.authorization_servers needs at least one".into(),
                ));
            }
            for (key, template, name) in
                [("tool_scope", &oauth.tool_scope, "{tool}"), ("skill_scope", &oauth.skill_scope, "{skill}")]
            {
                if !is_scope_token(&template.replace(name, "x")) {
                    return Err(ServeConfigError::Invalid(format!(
                        "oauth.{key} must be one scope token (printable ASCII, no space, `\"` or `\\`)"
                    )));
                }
            }
            if let Some(scope) = oauth.scopes_supported.iter().find(|scope| !is_scope_token(scope)) {
                return Err(ServeConfigError::Invalid(format!(
                    "oauth.scopes_supported: `{scope}` is not one scope token"
                )));
            }
            if let Some(jwt) = &self.jwt
                && jwt.audience != oauth.resource
            {
                return Err(ServeConfigError::Invalid(
                    "jwt.audience must be oauth.resource: tokens are issued for this resource (RFC 8707)"
                        .into(),
                ));
            }
        }
        for origin in &self.allowed_origins {
            if crate::http::origin::parse(origin).is_none() {
                return Err(ServeConfigError::Invalid(format!(
                    "allowed_origins: `{origin}` is not scheme://host[:port]"
                )));
            }
        }
        if let Some(jwt) = &self.jwt
            && jwt.jwks_file.is_none()
            && jwt.jwks_url.is_none()
        {
            return Err(ServeConfigError::Invalid("[jwt] needs jwks_file or jwks_url".into()));
        }
        let sessions = &self.sessions;
        if let Some(ledger) = sessions.ledger.as_deref().filter(|ledger| crate::database::is_url(ledger)) {
            crate::database::check_url(ledger, sessions.ca_file.is_some())
                .map_err(|error| ServeConfigError::Invalid(error.to_string()))?;
        } else if sessions.password_file.is_some() || sessions.ca_file.is_some() {
            return Err(ServeConfigError::Invalid(
                "sessions.password_file and sessions.ca_file are for a PostgreSQL ledger (sessions.ledger = \"postgres://…\")"
                    .into(),
            ));
        }
        if !(1..=1024).contains(&sessions.pool_size) {
            return Err(ServeConfigError::Invalid("sessions.pool_size must be from 1 to 1024".into()));
        }
        if !(100..=60_000).contains(&sessions.timeout_ms) {
            return Err(ServeConfigError::Invalid("sessions.timeout_ms must be from 100 to 60000".into()));
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
        for key in ["max_request_bodies_kib", "max_request_bodies_kib_per_credential"] {
            let config: ServeConfig =
                toml::from_str(&format!("[limits]\nmax_body_kib = 2048\n{key} = 2047\n")).unwrap();
            let problem = config.check().unwrap_err().to_string();
            assert!(
                problem.contains(&format!("limits.{key} must be at least limits.max_body_kib")),
                "{problem}"
            );
        }
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

    #[test]
    fn oauth_needs_a_canonical_resource_its_servers_and_the_jwt_audience_to_match() {
        let parse = |text: &str| toml::from_str::<ServeConfig>(text).unwrap().check();
        let oauth = "[oauth]\nresource = \"https://mcp.example/mcp\"\nauthorization_servers = [\"https://id.example\"]\n";
        assert!(parse(oauth).is_ok());
        let config: ServeConfig = toml::from_str(oauth).unwrap();
        assert_eq!(
            config.oauth.unwrap().metadata_url().as_deref(),
            Some("https://mcp.example/.well-known/oauth-protected-resource/mcp")
        );
        let jwt = |audience: &str| {
            format!(
                "{oauth}[jwt]\njwks_file = \"j\"\nissuer = \"https://id.example\"\naudience = \"{audience}\"\n"
            )
        };
        assert!(parse(&jwt("https://mcp.example/mcp")).is_ok());
        assert!(parse(&jwt("harmonia")).unwrap_err().to_string().contains("RFC 8707"));
        for resource in
            ["mcp.example/mcp", "https://mcp.example/mcp?x=1", "https://mcp.example/mcp#f", "ftp://x/mcp"]
        {
            let text =
                format!("[oauth]\nresource = \"{resource}\"\nauthorization_servers = [\"https://id\"]\n");
            assert!(parse(&text).is_err(), "{resource}");
        }
        let none = "[oauth]\nresource = \"https://mcp.example/mcp\"\nauthorization_servers = []\n";
        assert!(parse(none).is_err());
        let config: ServeConfig = toml::from_str(oauth).unwrap();
        let oauth_config = config.oauth.unwrap();
        assert_eq!(oauth_config.tool_scope("get_job_status"), "harmonia:tools:get_job_status");
        assert_eq!(oauth_config.skill_scope("job-status"), "harmonia:skills:job-status");
        for bad in ["tool_scope = \"a b\"", "skill_scope = \"\"", "scopes_supported = [\"x\\\"y\"]"] {
            assert!(parse(&format!("{oauth}{bad}\n")).unwrap_err().to_string().contains("scope"), "{bad}");
        }
    }
}
