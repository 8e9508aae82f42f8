//! The `public-web` import as guests see it: each `get` is counted against
//! the call's limits, answered by the bound source (or `denied` when the
//! call has none), recorded as a receipt, and its failure mapped to the
//! WIT `fetch-error`. Blocking and async calls share all of it but the wait.

use super::{PublicWebSource, WebAnswer, WebFailure, WebResponse};
use crate::bindings::{asynchronous, public_web};
use crate::call_state::CallState;
use crate::capability::{Receipt, remaining};
use std::sync::Arc;
use std::time::Instant;
use wasmtime::component::{HasSelf, Linker};

/// The interface's name, as components import it (without `@version`).
pub const INTERFACE: &str = "harmonia:tools/public-web";

/// Link the blocking import to [`CallState`].
pub(crate) fn add_to_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    public_web::add_to_linker::<_, HasSelf<_>>(linker, |state| state)
}

/// Link the async import to [`CallState`].
pub(crate) fn add_to_async_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    asynchronous::public_web::add_to_linker::<_, HasSelf<_>>(linker, |state| state)
}

/// A source's answer as the `get` of the bindings module `$wit` returns it.
macro_rules! guest_answer {
    ($wit:path, $result:expr) => {{
        use $wit as wit;
        $result
            .map(|response| wit::Response {
                status: response.status,
                content_type: response.content_type,
                body: response.body,
            })
            .map_err(|failure| match failure {
                WebFailure::Denied => wit::FetchError::Denied,
                WebFailure::InvalidUrl => wit::FetchError::InvalidUrl,
                WebFailure::TimedOut => wit::FetchError::TimedOut,
                WebFailure::TooLarge => wit::FetchError::TooLarge,
                WebFailure::Unavailable => wit::FetchError::Unavailable,
            })
    }};
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
    fn get(&mut self, url: String) -> wasmtime::Result<Result<public_web::Response, public_web::FetchError>> {
        let result = self.web_use(&url)?.and_then(|web| {
            let answer = web.get(&url, self.deadline);
            self.web_answered(answer)
        });
        Ok(guest_answer!(public_web, result))
    }
}

impl asynchronous::public_web::Host for CallState {
    async fn get(
        &mut self,
        url: String,
    ) -> wasmtime::Result<Result<asynchronous::public_web::Response, asynchronous::public_web::FetchError>>
    {
        let result = match self.web_use(&url)? {
            Ok(web) => {
                let answer = web.get_async(url, self.deadline).await;
                self.web_answered(answer)
            }
            Err(failure) => Err(failure),
        };
        Ok(guest_answer!(asynchronous::public_web, result))
    }
}
