//! The public web capability: GET-only HTTP to allow-listed origins.
//!
//! - The origin (scheme, host, port) must be on the allow-list; anything
//!   else is `denied` before any network traffic.
//! - URLs with credentials, or not http(s), are refused.
//! - Redirects are followed (up to [`MAX_REDIRECTS`]) only while they stay
//!   on the allow-list; a redirect off it is `denied`.
//! - Routes send an allowed origin to another base URL (a mirror, a local
//!   test server) without the guest knowing; the allow-list is checked on
//!   the guest's URL, before routing.
//! - The body is capped; a larger body is `too-large`, not truncated.
//! - Requests go through one bounded client (`capability::http_client`).
//! - The wait is bounded by the call's remaining deadline; passing it is
//!   `timed-out` and ends the call as `tool_timeout`.
//! - In mock mode, requests to allowed origins are answered from fixtures
//!   ([`mock`]).
//!
//! Parts (this file only declares and re-exports them):
//! - [`config`]: [`PublicWebConfig`], the `[public_web]` table, its
//!   defaults and checks;
//! - [`source`]: [`PublicWebSource`] and [`PublicWeb`], the HTTP one;
//! - [`mock`]: its fixture;
//! - `guest`: the unit ([`PublicWebCapability`]): its per-call state,
//!   the WIT `public-web` import as guests see it (use counting, receipts,
//!   error mapping) and its linker wiring.

pub mod config;
pub(crate) mod guest;
pub mod mock;
pub mod source;

pub use config::PublicWebConfig;
pub use guest::PublicWebCapability;
pub use source::{
    MAX_REDIRECTS, PublicWeb, PublicWebSource, WebAnswer, WebAnswering, WebFailure, WebResponse, answered,
    failure_status,
};
