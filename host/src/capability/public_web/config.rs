//! `[public_web]`: the public web's config section, its defaults and the
//! checks serde cannot express.

use harmonia_contract::url::{Origin, parse_http_url};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The public web capability.
#[derive(Clone, Debug, Deserialize, PartialEq, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct PublicWebConfig {
    /// Allowed origins, `scheme://host[:port]`.
    pub allow: Vec<String>,
    /// Origin to base URL: where requests for an allowed origin really go.
    pub routes: BTreeMap<String, String>,
    /// Largest response body, KiB; larger is `too-large`.
    pub max_body_kib: u32,
}

impl Default for PublicWebConfig {
    fn default() -> Self {
        Self { allow: vec!["https://hn.algolia.com".into()], routes: BTreeMap::new(), max_body_kib: 2048 }
    }
}

impl PublicWebConfig {
    /// The rules serde cannot express; the message names the key.
    pub fn check(&self) -> Result<(), String> {
        if self.max_body_kib == 0 {
            return Err("public_web.max_body_kib must be positive".into());
        }
        for origin in &self.allow {
            if Origin::parse_origin(origin).is_none() {
                return Err(format!(
                    "public_web.allow entry `{origin}` is not an origin (scheme://host[:port])"
                ));
            }
        }
        for (origin, base) in &self.routes {
            let allowed = Origin::parse_origin(origin).is_some_and(|origin| {
                self.allow.iter().any(|entry| Origin::parse_origin(entry) == Some(origin.clone()))
            });
            if !allowed {
                return Err(format!("public_web.routes key `{origin}` is not in public_web.allow"));
            }
            if parse_http_url(base).is_none() {
                return Err(format!("public_web.routes value for `{origin}` is not an http(s) URL"));
            }
        }
        Ok(())
    }
}
