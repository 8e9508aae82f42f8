//! The `public-web` import as guests see it: each `get` is counted against
//! the call's limits, answered by the bound source (or `denied` when the
//! call has none), recorded as a receipt, and its failure mapped to the
//! WIT `fetch-error`.

use super::WebFailure;
use crate::bindings::public_web;
use crate::call_state::CallState;
use crate::capability::{Receipt, remaining};
use std::time::Instant;
use wasmtime::component::{HasSelf, Linker};

/// The interface's name, as components import it (without `@version`).
pub const INTERFACE: &str = "harmonia:tools/public-web";

/// Link the import to [`CallState`].
pub(crate) fn add_to_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    public_web::add_to_linker::<_, HasSelf<_>>(linker, |state| state)
}

impl public_web::Host for CallState {
    fn get(&mut self, url: String) -> wasmtime::Result<Result<public_web::Response, public_web::FetchError>> {
        self.admit_use(url.len())?;
        let Some(web) = self.binding.public_web.clone() else {
            let receipt = Receipt::new("public-web", "unbound".into(), "denied", Instant::now());
            self.record(receipt, false, false);
            return Ok(Err(public_web::FetchError::Denied));
        };
        let answer = web.get(&url, self.deadline);
        let timed_out =
            matches!(answer.result, Err(WebFailure::TimedOut)) || remaining(self.deadline).is_none();
        self.record(answer.receipt, answer.mock, timed_out);
        self.successful_reads += usize::from(answer.result.is_ok());
        Ok(answer
            .result
            .map(|response| public_web::Response {
                status: response.status,
                content_type: response.content_type,
                body: response.body,
            })
            .map_err(|failure| match failure {
                WebFailure::Denied => public_web::FetchError::Denied,
                WebFailure::InvalidUrl => public_web::FetchError::InvalidUrl,
                WebFailure::TimedOut => public_web::FetchError::TimedOut,
                WebFailure::TooLarge => public_web::FetchError::TooLarge,
                WebFailure::Unavailable => public_web::FetchError::Unavailable,
            }))
    }
}
