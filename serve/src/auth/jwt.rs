//! JWT access tokens for deployments behind an identity provider.
//!
//! The signature is checked against keys from a JWKS file (and, when
//! configured, a JWKS URL fetched once at start); `exp`, `nbf`, `aud` and
//! `iss` are required and checked; only asymmetric algorithms are accepted
//! (a token may not choose `none` or an HMAC keyed by a public key). The
//! workspace is the string in the configured claim; the allow-list is the
//! configured tools claim (an array of names, or one space-separated
//! string), else the configured default list.

use super::{AuthError, Principal};
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::path::PathBuf;
use std::time::Duration;

/// `[jwt]` in the serve config.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct JwtConfig {
    /// A JWKS document on disk.
    pub jwks_file: Option<PathBuf>,
    /// A JWKS URL, fetched once when the server starts.
    pub jwks_url: Option<String>,
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
    /// Tools allowed when the token has no tools claim.
    #[serde(default)]
    pub default_tools: Vec<String>,
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
fn default_leeway() -> u64 {
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

/// Checks JWTs against the configured keys and claims.
pub struct JwtVerifier {
    config: JwtConfig,
    keys: Vec<(Option<String>, DecodingKey)>,
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

impl JwtVerifier {
    /// Load the keys named by `config`.
    pub fn new(config: JwtConfig) -> Result<Self, JwtSetupError> {
        let mut documents = Vec::new();
        if let Some(path) = &config.jwks_file {
            let text = std::fs::read_to_string(path)
                .map_err(|error| JwtSetupError::Jwks(format!("{}: {error}", path.display())))?;
            documents.push(text);
        }
        if let Some(url) = &config.jwks_url {
            documents.push(fetch_jwks(url)?);
        }
        let mut keys = Vec::new();
        for text in documents {
            let set: JwkSet = serde_json::from_str(&text)
                .map_err(|error| JwtSetupError::Jwks(format!("not a JWKS: {error}")))?;
            for jwk in &set.keys {
                match DecodingKey::from_jwk(jwk) {
                    Ok(key) => keys.push((jwk.common.key_id.clone(), key)),
                    Err(error) => tracing::warn!(kid = ?jwk.common.key_id, %error, "JWKS key skipped"),
                }
            }
        }
        if keys.is_empty() {
            return Err(JwtSetupError::NoKeys);
        }
        Ok(Self { config, keys })
    }

    /// The principal for a JWT, or why it is refused.
    pub fn verify(&self, token: &str) -> Result<Principal, AuthError> {
        let invalid = |reason: &str| AuthError::InvalidJwt(reason.to_owned());
        let header = jsonwebtoken::decode_header(token).map_err(|_| invalid("malformed header"))?;
        if !ASYMMETRIC.contains(&header.alg) {
            return Err(invalid("algorithm not accepted"));
        }
        let candidates: Vec<&DecodingKey> = match &header.kid {
            Some(kid) => {
                self.keys.iter().filter(|(id, _)| id.as_deref() == Some(kid)).map(|(_, key)| key).collect()
            }
            None if self.keys.len() == 1 => vec![&self.keys[0].1],
            None => return Err(invalid("no key id")),
        };
        let key = candidates.first().ok_or_else(|| invalid("unknown key id"))?;
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
        let subject = claims.get("sub").and_then(Value::as_str).unwrap_or("");
        Ok(Principal {
            id: format!("jwt:{}:{subject}:{workspace}", self.config.issuer),
            workspace: Some(workspace.to_owned()),
            allow,
        })
    }
}
