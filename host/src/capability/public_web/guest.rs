//! The `public-web` import as guests see it: each `get` is counted against
//! the call's limits, answered by the bound source (or `denied` when the
//! call has none), recorded as a receipt, and its failure mapped to the
//! WIT `fetch-error`.

use super::{PublicWebSource, WebAnswer, WebFailure, WebResponse};
use crate::bindings::public_web;
use crate::call_state::CallState;
use crate::capability::{Receipt, remaining};
use std::sync::Arc;
use std::time::Instant;
use wasmtime::component::{HasSelf, Linker};

/// The interface's name, as components import it (without `@version`).
pub const INTERFACE: &str = "harmonia:tools/public-web";

/// Link the import to [`CallState`].
pub(crate) fn add_to_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    public_web::add_to_linker::<_, HasSelf<_>>(linker, |state| state)
}

/// A source's answer as the guest's `get` returns it.
fn guest_answer(
    result: Result<WebResponse, WebFailure>,
) -> Result<public_web::Response, public_web::FetchError> {
    result
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
        })
}

impl CallState {
    /// Admit one use: the bound source, or `denied` when the call has none.
    fn web_use(&mut self, url: &str) -> wasmtime::Result<Result<Arc<dyn PublicWebSource>, WebFailure>> {
        self.admit_use(url.len())?;
        Ok(match self.binding.public_web.clone() {
            Some(web) => Ok(web),
            None => {
                let receipt = Receipt::new("public-web", "unbound".into(), "denied", Instant::now());
                self.record(receipt, false, false);
                Err(WebFailure::Denied)
            }
        })
    }

    /// Record the source's answer; what the guest gets of it.
    fn web_answered(&mut self, answer: WebAnswer) -> Result<WebResponse, WebFailure> {
        let timed_out =
            matches!(answer.result, Err(WebFailure::TimedOut)) || remaining(self.deadline).is_none();
        self.record(answer.receipt, answer.mock, timed_out);
        self.successful_reads += usize::from(answer.result.is_ok());
        answer.result
    }
}

impl public_web::Host for CallState {
    async fn get(
        &mut self,
        url: String,
    ) -> wasmtime::Result<Result<public_web::Response, public_web::FetchError>> {
        let result = match self.web_use(&url)? {
            Ok(web) => {
                let answer = web.get(url, self.deadline).await;
                self.web_answered(answer)
            }
            Err(failure) => Err(failure),
        };
        Ok(guest_answer(result))
    }
}
