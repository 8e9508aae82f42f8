//! JWT access tokens for deployments behind an identity provider.
//!
//! The signature is checked against keys from a JWKS file and, when
//! configured, a JWKS URL: read at start, then again every
//! `jwks_refresh_s` and whenever a token names a key id the server does
//! not know (an identity provider rotating its keys), on a thread of its
//! own and never more often than every `jwks_refresh_min_s`, so tokens
//! with made-up key ids cannot make the server hammer the provider; a
//! failed fetch keeps the keys it had. `exp`, `nbf`, `aud` and
//! `iss` are required and checked; only asymmetric algorithms are accepted
//! (a token may not choose `none` or an HMAC keyed by a public key). The
//! workspace is the string in the configured claim; the allow-list is the
//! configured tools claim (an array of names, or one space-separated
//! string), else the configured default list; the scopes are the
//! configured scope claim (a space-separated string or an array).

use super::{AuthError, Principal, Scopes};
use crate::config::Rate;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::mpsc::{RecvTimeoutError, SyncSender};
use std::sync::{Arc, RwLock, Weak};
use std::time::{Duration, Instant};

/// `[jwt]` in the serve config.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct JwtConfig {
    /// A JWKS document on disk.
    pub jwks_file: Option<PathBuf>,
    /// A JWKS URL, fetched at start and refreshed.
    pub jwks_url: Option<String>,
    /// The JWKS URL is fetched again this often, seconds.
    #[serde(default = "default_jwks_refresh")]
    pub jwks_refresh_s: u64,
    /// The shortest time between two fetches of the JWKS URL, seconds
    /// (an unknown key id asks for a fetch sooner than `jwks_refresh_s`).
    #[serde(default = "default_jwks_refresh_min")]
    pub jwks_refresh_min_s: u64,
    /// The required `iss`.
    pub issuer: String,
    /// The required `aud`.
    pub audience: String,
    /// The claim naming the workspace.
    #[serde(default = "default_workspace_claim")]
    pub workspace_claim: String,
    /// The claim listing the allowed tools.
    #[serde(default = "default_tools_claim")]
    pub tools_claim: String,
    /// The claim granting OAuth scopes (a space-separated string, RFC
    /// 8693 §4.2, or an array); with `[oauth]`, a tool needs its scope.
    #[serde(default = "default_scope_claim")]
    pub scope_claim: String,
    /// Tools allowed when the token has no tools claim.
    #[serde(default)]
    pub default_tools: Vec<String>,
    /// The claim holding the credential's own rate limit
    /// (`{"calls_per_second": N, "burst": N}`); `[rate_limits]` when absent.
    #[serde(default = "default_rate_limit_claim")]
    pub rate_limit_claim: String,
    /// Clock skew tolerated on `exp` and `nbf`, seconds.
    #[serde(default = "default_leeway")]
    pub leeway_s: u64,
}

fn default_workspace_claim() -> String {
    "harmonia_workspace".into()
}
fn default_tools_claim() -> String {
    "harmonia_tools".into()
}
fn default_scope_claim() -> String {
    "scope".into()
}
fn default_rate_limit_claim() -> String {
    "harmonia_rate_limit".into()
}
fn default_leeway() -> u64 {
    30
}
fn default_jwks_refresh() -> u64 {
    300
}
fn default_jwks_refresh_min() -> u64 {
    30
}

/// Why the verifier could not start.
#[derive(Debug, thiserror::Error)]
pub enum JwtSetupError {
    /// The JWKS could not be read.
    #[error("JWKS {0}")]
    Jwks(String),
    /// No key is usable.
    #[error("the JWKS holds no usable key")]
    NoKeys,
}

/// Largest JWKS document fetched from a URL.
const MAX_JWKS_BYTES: u64 = 1024 * 1024;

const ASYMMETRIC: &[Algorithm] = &[
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Keys by key id.
type Keys = Vec<(Option<String>, DecodingKey)>;

/// Checks JWTs against the configured keys and claims.
pub struct JwtVerifier {
    config: JwtConfig,
    keys: Arc<RwLock<Keys>>,
    /// Asks the refresh thread for a fetch of the JWKS URL.
    refresh: Option<SyncSender<()>>,
}

/// The principal id of a JWT: `jwt:` and the JSON array `[iss, sub,
/// workspace]`, which no choice of values can make ambiguous. A token
/// without `sub` names no subject two tokens could share: its own SHA-256
/// stands for it.
fn jwt_identity(issuer: &str, claims: &Map<String, Value>, token: &str, workspace: &str) -> String {
    let subject = match claims.get("sub").and_then(Value::as_str) {
        Some(subject) if !subject.is_empty() => format!("sub:{subject}"),
        _ => format!("token-sha256:{}", harmonia_contract::digest::sha256_hex(token.as_bytes())),
    };
    format!("jwt:{}", Value::from(vec![issuer, &subject, workspace]))
}

/// Whether `token` has a JWT's shape (three dot-separated parts).
pub fn looks_like_jwt(token: &str) -> bool {
    token.split('.').count() == 3
}

fn fetch_jwks(url: &str) -> Result<String, JwtSetupError> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(5)))
        .max_redirects(0)
        .build()
        .into();
    let mut response =
        agent.get(url).call().map_err(|error| JwtSetupError::Jwks(format!("{url}: {error}")))?;
    response
        .body_mut()
        .with_config()
        .limit(MAX_JWKS_BYTES)
        .read_to_string()
        .map_err(|error| JwtSetupError::Jwks(format!("{url}: {error}")))
}

/// The usable keys of a JWKS document.
fn parse_jwks(text: &str) -> Result<Keys, JwtSetupError> {
    let set: JwkSet =
        serde_json::from_str(text).map_err(|error| JwtSetupError::Jwks(format!("not a JWKS: {error}")))?;
    let mut keys = Vec::new();
    for jwk in &set.keys {
        match DecodingKey::from_jwk(jwk) {
            Ok(key) => keys.push((jwk.common.key_id.clone(), key)),
            Err(error) => tracing::warn!(kid = ?jwk.common.key_id, %error, "JWKS key skipped"),
        }
    }
    Ok(keys)
}

/// Fetch the JWKS URL again every `every`, or sooner when asked (at most
/// once per `gap`), keeping the file's keys; ends with the verifier.
fn refresh_keys(
    url: String,
    file_keys: Keys,
    keys: Weak<RwLock<Keys>>,
    every: Duration,
    gap: Duration,
) -> SyncSender<()> {
    let (ask, asked) = std::sync::mpsc::sync_channel::<()>(1);
    let spawned = std::thread::Builder::new().name("harmonia-jwks".into()).spawn(move || {
        loop {
            let started = Instant::now();
            match asked.recv_timeout(every) {
                Ok(()) | Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return,
            }
            std::thread::sleep(gap.saturating_sub(started.elapsed()));
            let Some(keys) = keys.upgrade() else { return };
            match fetch_jwks(&url).and_then(|text| parse_jwks(&text)) {
                Ok(fetched) if !fetched.is_empty() => {
                    let merged = file_keys.iter().cloned().chain(fetched).collect();
                    *keys.write().unwrap_or_else(std::sync::PoisonError::into_inner) = merged;
                    tracing::info!("JWKS refreshed");
                }
                Ok(_) => tracing::warn!("the JWKS URL holds no usable key; the keys in use are kept"),
                Err(error) => tracing::warn!(%error, "JWKS refresh failed; the keys in use are kept"),
            }
        }
    });
    if let Err(error) = spawned {
        tracing::warn!(%error, "no JWKS refresh thread; the keys read at start are kept");
    }
    ask
}

impl JwtVerifier {
    /// Load the keys named by `config`; a JWKS URL is refreshed from then on.
    pub fn new(config: JwtConfig) -> Result<Self, JwtSetupError> {
        let file_keys = match &config.jwks_file {
            Some(path) => parse_jwks(
                &std::fs::read_to_string(path)
                    .map_err(|error| JwtSetupError::Jwks(format!("{}: {error}", path.display())))?,
            )?,
            None => Vec::new(),
        };
        let url_keys = match &config.jwks_url {
            Some(url) => parse_jwks(&fetch_jwks(url)?)?,
            None => Vec::new(),
        };
        let all: Keys = file_keys.iter().cloned().chain(url_keys).collect();
        if all.is_empty() {
            return Err(JwtSetupError::NoKeys);
        }
        let keys = Arc::new(RwLock::new(all));
        let refresh = config.jwks_url.clone().map(|url| {
            let every = Duration::from_secs(config.jwks_refresh_s.max(1));
            let gap = Duration::from_secs(config.jwks_refresh_min_s);
            refresh_keys(url, file_keys, Arc::downgrade(&keys), every, gap)
        });
        Ok(Self { config, keys, refresh })
    }

    /// The principal for a JWT, or why it is refused.
    pub fn verify(&self, token: &str) -> Result<Principal, AuthError> {
        self.verify_scoped(token).map(|(principal, _)| principal)
    }

    /// The principal for a JWT and the scopes it grants (none without the
    /// scope claim), or why it is refused.
    pub fn verify_scoped(&self, token: &str) -> Result<(Principal, Scopes), AuthError> {
        let invalid = |reason: &str| AuthError::InvalidJwt(reason.to_owned());
        let header = jsonwebtoken::decode_header(token).map_err(|_| invalid("malformed header"))?;
        if !ASYMMETRIC.contains(&header.alg) {
            return Err(invalid("algorithm not accepted"));
        }
        let keys = self.keys.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        let key = match &header.kid {
            Some(kid) => keys.iter().find(|(id, _)| id.as_deref() == Some(kid)).map(|(_, key)| key),
            None if keys.len() == 1 => Some(&keys[0].1),
            None => return Err(invalid("no key id")),
        };
        let Some(key) = key else {
            // Perhaps the provider rotated its keys: ask for a fetch (one
            // at a time, coalesced) and refuse this token meanwhile.
            if let Some(refresh) = &self.refresh {
                let _ = refresh.try_send(());
            }
            return Err(invalid("unknown key id"));
        };
        let mut validation = Validation::new(header.alg);
        validation.set_audience(&[&self.config.audience]);
        validation.set_issuer(&[&self.config.issuer]);
        validation.set_required_spec_claims(&["exp", "nbf", "aud", "iss"]);
        validation.validate_nbf = true;
        validation.leeway = self.config.leeway_s;
        let data = jsonwebtoken::decode::<Map<String, Value>>(token, key, &validation).map_err(|error| {
            use jsonwebtoken::errors::ErrorKind;
            invalid(match error.kind() {
                ErrorKind::ExpiredSignature => "expired",
                ErrorKind::ImmatureSignature => "not yet valid",
                ErrorKind::InvalidAudience => "wrong audience",
                ErrorKind::InvalidIssuer => "wrong issuer",
                ErrorKind::InvalidSignature => "bad signature",
                ErrorKind::MissingRequiredClaim(_) => "a required claim is missing",
                _ => "rejected",
            })
        })?;
        let claims = data.claims;
        let workspace = claims
            .get(&self.config.workspace_claim)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|workspace| !workspace.is_empty() && workspace.chars().count() <= 200)
            .ok_or_else(|| invalid("no workspace claim"))?;
        let allow = match claims.get(&self.config.tools_claim) {
            None => self.config.default_tools.iter().cloned().collect(),
            Some(Value::String(list)) => list.split_whitespace().map(str::to_owned).collect(),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| item.as_str().map(str::to_owned))
                .collect::<Option<_>>()
                .ok_or_else(|| invalid("tools claim must hold strings"))?,
            Some(_) => return Err(invalid("tools claim must be a list")),
        };
        let rate = match claims.get(&self.config.rate_limit_claim) {
            None => None,
            Some(value) => Some(
                serde_json::from_value::<Rate>(value.clone())
                    .ok()
                    .filter(|rate| rate.problem().is_none())
                    .ok_or_else(|| invalid("rate limit claim must be {calls_per_second, burst}"))?,
            ),
        };
        let scopes = match claims.get(&self.config.scope_claim) {
            None => BTreeSet::new(),
            Some(Value::String(list)) => list.split_whitespace().map(str::to_owned).collect(),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| item.as_str().map(str::to_owned))
                .collect::<Option<_>>()
                .ok_or_else(|| invalid("scope claim must hold strings"))?,
            Some(_) => return Err(invalid("scope claim must be a string or a list")),
        };
        let principal = Principal {
            id: jwt_identity(&self.config.issuer, &claims, token, workspace),
            workspace: Some(workspace.to_owned()),
            allow,
            rate,
        };
        Ok((principal, Scopes(scopes)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => unreachable!(),
        }
    }

    #[test]
    fn a_jwts_identity_is_unambiguous_and_a_token_without_subject_is_its_own() {
        let with = |sub: &str| claims(serde_json::json!({"sub": sub}));
        // `:` in the parts cannot make two identities one.
        let a = jwt_identity("https://id", &with("a:b"), "t1", "c");
        let b = jwt_identity("https://id", &with("a"), "t1", "b:c");
        assert_ne!(a, b);
        assert_eq!(a, r#"jwt:["https://id","sub:a:b","c"]"#);
        // Same subject, another token: the same identity (rate and quota
        // are the subject's); the principal still differs by allow-list.
        assert_eq!(jwt_identity("i", &with("s"), "t1", "w"), jwt_identity("i", &with("s"), "t2", "w"));
        // No subject: each token is its own identity.
        let none = claims(serde_json::json!({}));
        assert_ne!(jwt_identity("i", &none, "t1", "w"), jwt_identity("i", &none, "t2", "w"));
        assert_ne!(jwt_identity("i", &with(""), "t1", "w"), jwt_identity("i", &with(""), "t2", "w"));
    }
}
