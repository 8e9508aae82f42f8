//! Authentication: who is calling, which workspace they act for and which
//! tools they may see (docs/contract.md §6: tenant-scoped credentials and
//! an explicit allow-list).
//!
//! A credential is either a static bearer token ([`tokens`], stored only
//! as its SHA-256) or a JWT access token checked against a JWKS ([`jwt`]).
//! Either one yields a [`Principal`]; the workspace comes only from it,
//! never from a tool argument or a header the client chooses. A JWT also
//! grants [`Scopes`].

pub mod jwt;
pub mod tokens;

use crate::config::Rate;
use std::collections::BTreeSet;

/// The caller, as established by its credential.
///
/// An MCP session belongs to the whole principal: a request on it with
/// any other (another id, workspace, allow-list or rate) is refused.
#[derive(Clone, Debug, PartialEq)]
pub struct Principal {
    /// Stable identity of the credential, unambiguous: `token:ID`,
    /// `jwt:` and the JSON array `[iss, sub, workspace]` (the token's
    /// SHA-256 standing for a missing `sub`), or `stdio`. Quotas and rate
    /// limits are kept per id.
    pub id: String,
    /// The workspace every call is bound to; `None` only for a stdio
    /// server started without one.
    pub workspace: Option<String>,
    /// The tools this credential may list and call.
    pub allow: BTreeSet<String>,
    /// The credential's own rate limit, replacing `[rate_limits]`'s
    /// per-credential bucket.
    pub rate: Option<Rate>,
}

impl Principal {
    /// Whether the credential allows `tool`.
    pub fn allows(&self, tool: &str) -> bool {
        self.allow.contains(tool)
    }
}

/// The OAuth scopes a JWT grants (RFC 6749 §3.3). Only a JWT has them: a
/// static token is governed by its allow-list alone. With `[oauth]`, a
/// tool or a skill needs its scope ([`crate::http::scopes`]). They are
/// checked on every request and are no part of the [`Principal`], so a
/// client that steps up to more scopes keeps its MCP session.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scopes(pub BTreeSet<String>);

impl Scopes {
    /// Whether `scope` is granted.
    pub fn grants(&self, scope: &str) -> bool {
        self.0.contains(scope)
    }
}

/// Why a request was not authenticated. The texts never carry the token.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    /// No `Authorization: Bearer` header.
    #[error("no bearer token")]
    Missing,
    /// The header is not `Bearer <token>`.
    #[error("malformed authorization header")]
    Malformed,
    /// No stored token has this hash (unknown or revoked).
    #[error("unknown or revoked token")]
    UnknownToken,
    /// The JWT failed a check (signature, exp, nbf, aud, iss, claims).
    #[error("invalid access token: {0}")]
    InvalidJwt(String),
}

impl AuthError {
    /// A fixed label for the metrics: `missing`, `malformed`,
    /// `unknown_token` or `invalid_jwt` (never the token or the JWT's
    /// error text).
    pub fn reason(&self) -> &'static str {
        match self {
            Self::Missing => "missing",
            Self::Malformed => "malformed",
            Self::UnknownToken => "unknown_token",
            Self::InvalidJwt(_) => "invalid_jwt",
        }
    }

    /// The RFC 6750 error code for the `WWW-Authenticate` header.
    pub fn bearer_error(&self) -> Option<&'static str> {
        match self {
            Self::Missing => None,
            Self::Malformed => Some("invalid_request"),
            Self::UnknownToken | Self::InvalidJwt(_) => Some("invalid_token"),
        }
    }
}

/// Checks credentials: static tokens first, JWTs when configured.
pub struct Authenticator {
    tokens: Option<tokens::TokenStore>,
    jwt: Option<jwt::JwtVerifier>,
}

impl Authenticator {
    /// From a token store and a JWT verifier, either optional.
    pub fn new(tokens: Option<tokens::TokenStore>, jwt: Option<jwt::JwtVerifier>) -> Self {
        Self { tokens, jwt }
    }

    /// Whether any credential could ever be accepted.
    pub fn is_configured(&self) -> bool {
        self.tokens.is_some() || self.jwt.is_some()
    }

    /// The principal for an `Authorization` header value.
    pub fn authenticate(&self, header: Option<&str>) -> Result<Principal, AuthError> {
        self.credential(header).map(|(principal, _)| principal)
    }

    /// The principal for an `Authorization` header value and, for a JWT,
    /// the scopes it grants.
    pub fn credential(&self, header: Option<&str>) -> Result<(Principal, Option<Scopes>), AuthError> {
        let header = header.ok_or(AuthError::Missing)?;
        let (scheme, token) = header.split_once(' ').ok_or(AuthError::Malformed)?;
        let token = token.trim();
        if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() || token.contains(' ') {
            return Err(AuthError::Malformed);
        }
        if let Some(jwt) = &self.jwt
            && jwt::looks_like_jwt(token)
        {
            return jwt.verify_scoped(token).map(|(principal, scopes)| (principal, Some(scopes)));
        }
        match &self.tokens {
            Some(store) => store.verify(token).map(|principal| (principal, None)),
            None => Err(AuthError::UnknownToken),
        }
    }
}
