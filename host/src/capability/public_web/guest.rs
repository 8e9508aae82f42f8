//! The public web as a unit ([`PublicWebCapability`]): its per-call state
//! ([`PublicWebCtx`]), the `public-web` import as guests see it (each `get`
//! counted against the call's limits, answered by the bound source or
//! `denied` when the call has none, recorded as a receipt, its failure
//! mapped to the WIT `fetch-error`), and its linker wiring.

use super::source::{PublicWeb, PublicWebSource, WebAnswer, WebFailure, WebResponse};
use crate::bindings::public_web;
use crate::capability::kind::CapabilityKind;
use crate::capability::receipt::Receipt;
use crate::capability::unit::{Caller, Capability, Project};
use crate::capability::uses::CallUses;
use crate::config::{ConfigError, HostConfig};
use std::sync::Arc;
use std::time::Instant;
use wasmtime::component::{HasData, Linker};

/// The public web capability.
#[derive(Debug)]
pub struct PublicWebCapability;

/// The public web's state in one call.
#[derive(Debug, Default)]
pub struct PublicWebCtx {
    /// The source, when the call is granted the public web.
    pub source: Option<Arc<dyn PublicWebSource>>,
}

/// What the `public-web` import runs on.
pub struct PublicWebView<'a> {
    ctx: &'a mut PublicWebCtx,
    uses: &'a mut CallUses,
}

/// The view as wasmtime's bindings name it.
struct HasPublicWeb;

impl HasData for HasPublicWeb {
    type Data<'a> = PublicWebView<'a>;
}

impl Capability for PublicWebCapability {
    const KIND: CapabilityKind = CapabilityKind::PublicWeb;
    type Source = Arc<dyn PublicWebSource>;
    type Ctx = PublicWebCtx;
    type View<'a> = PublicWebView<'a>;

    fn from_config(config: &HostConfig) -> Result<Self::Source, ConfigError> {
        Ok(Arc::new(PublicWeb::new(&config.public_web, config.mock)))
    }

    fn bind(source: &Self::Source, _caller: Caller<'_>) -> PublicWebCtx {
        PublicWebCtx { source: Some(Arc::clone(source)) }
    }

    fn view<'a>(ctx: &'a mut PublicWebCtx, uses: &'a mut CallUses) -> PublicWebView<'a> {
        PublicWebView { ctx, uses }
    }

    fn add_to_linker<T: Project<Self>>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
        public_web::add_to_linker::<T, HasPublicWeb>(linker, |state| {
            let (ctx, uses) = state.project();
            Self::view(ctx, uses)
        })
    }
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

impl PublicWebView<'_> {
    /// Admit one use: the bound source, or `denied` when the call has none.
    fn admit(&mut self, url: &str) -> wasmtime::Result<Result<Arc<dyn PublicWebSource>, WebFailure>> {
        self.uses.admit(url.len())?;
        Ok(match self.ctx.source.clone() {
            Some(web) => Ok(web),
            None => {
                let receipt =
                    Receipt::new(CapabilityKind::PublicWeb, "unbound".into(), "denied", Instant::now());
                self.uses.record(receipt, false, false);
                Err(WebFailure::Denied)
            }
        })
    }

    /// Record the source's answer; what the guest gets of it.
    fn answered(&mut self, answer: WebAnswer) -> Result<WebResponse, WebFailure> {
        let timed_out = matches!(answer.result, Err(WebFailure::TimedOut));
        self.uses.answered(answer.receipt, answer.mock, answer.result.is_ok(), timed_out);
        answer.result
    }
}

impl public_web::Host for PublicWebView<'_> {
    async fn get(
        &mut self,
        url: String,
    ) -> wasmtime::Result<Result<public_web::Response, public_web::FetchError>> {
        let result = match self.admit(&url)? {
            Ok(web) => {
                let answer = web.get(url, self.uses.deadline).await;
                self.answered(answer)
            }
            Err(failure) => Err(failure),
        };
        Ok(guest_answer(result))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bindings::public_web::Host as _;
    use crate::capability::public_web::{PublicWeb, PublicWebConfig};
    use crate::capability::testing::{Bench, run};
    use crate::limits::MAX_CAPABILITY_USES;
    use std::time::Duration;

    const SEARCH: &str = "https://hn.algolia.com/api/v1/search?query=rust";

    /// The public web serving fixtures (no network), bound to a call.
    fn bench() -> Bench<PublicWebCapability> {
        let source: Arc<dyn PublicWebSource> = Arc::new(PublicWeb::new(&PublicWebConfig::default(), true));
        Bench::bound(&source, Caller::default(), Duration::from_secs(5))
    }

    #[test]
    fn links_alone() {
        Bench::<PublicWebCapability>::link().expect("the import links on a bare engine");
    }

    #[test]
    fn each_get_leaves_a_receipt_of_its_kind_target_and_status() {
        let mut bench = bench();
        let (found, refused) = run(async {
            let mut view = bench.view();
            (view.get(SEARCH.into()).await.unwrap(), view.get("https://example.com/".into()).await.unwrap())
        });
        assert_eq!(found.expect("the fixture answers").status, 200);
        assert!(matches!(refused, Err(public_web::FetchError::Denied)));
        let seen: Vec<_> =
            bench.receipts().iter().map(|r| (r.capability, r.target.as_str(), r.status.as_str())).collect();
        assert_eq!(
            seen,
            [
                (CapabilityKind::PublicWeb, SEARCH, "200"),
                (CapabilityKind::PublicWeb, "https://example.com/", "denied")
            ]
        );
        assert_eq!(bench.uses().successful_reads, 1);
        assert!(bench.uses().mock_provenance(), "a fixture was served");
    }

    #[test]
    fn an_unbound_call_is_denied_with_a_receipt() {
        let mut bench = Bench::<PublicWebCapability>::unbound(Duration::from_secs(5));
        let answer = run(async { bench.view().get(SEARCH.into()).await.unwrap() });
        assert!(matches!(answer, Err(public_web::FetchError::Denied)));
        let receipt = &bench.receipts()[0];
        assert_eq!(
            (receipt.capability, receipt.target.as_str(), receipt.status.as_str()),
            (CapabilityKind::PublicWeb, "unbound", "denied")
        );
    }

    #[test]
    fn the_use_past_the_limit_traps() {
        let mut bench = bench();
        run(async {
            let mut view = bench.view();
            for _ in 0..MAX_CAPABILITY_USES {
                let denied = view.get("https://example.com/".into()).await.expect("within the limit");
                assert!(matches!(denied, Err(public_web::FetchError::Denied)));
            }
            let trap = view.get("https://example.com/".into()).await.expect_err("past the limit");
            assert_eq!(trap.to_string(), "capability use limit reached");
        });
        assert!(bench.uses().capability_limit);
        assert_eq!(bench.receipts().len(), MAX_CAPABILITY_USES, "the refused use keeps no receipt");
    }
}
