//! The host's two call APIs, so a test can hold a promise through both:
//! [`Api::Blocking`] is `Host::call` on the test's thread, [`Api::Async`]
//! is `Host::call_async` driven by a shared tokio runtime (the future runs
//! on the test's thread; blocking sources and I/O on the runtime's).

use harmonia_host::envelope::Envelope;
use harmonia_host::{CallContext, CallError, CallRecord, Host};
use std::sync::OnceLock;

/// One of the host's call APIs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    /// `Host::call`.
    Blocking,
    /// `Host::call_async`.
    Async,
}

/// Both APIs, blocking first.
pub const BOTH: [Api; 2] = [Api::Blocking, Api::Async];

/// The runtime async calls run on: two workers (the machine's cores) and
/// every driver, as an embedder's would have.
pub fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a tokio runtime starts")
    })
}

impl Api {
    /// Call `tool` through this API, keeping the receipts.
    pub fn call_recorded(
        self,
        host: &Host,
        tool: &str,
        input: &str,
        context: &CallContext,
    ) -> Result<CallRecord, CallError> {
        match self {
            Self::Blocking => host.call_recorded(tool, input, context),
            Self::Async => runtime().block_on(host.call_recorded_async(tool, input, context)),
        }
    }

    /// Call `tool` through this API.
    pub fn call(
        self,
        host: &Host,
        tool: &str,
        input: &str,
        context: &CallContext,
    ) -> Result<Envelope, CallError> {
        self.call_recorded(host, tool, input, context).map(|record| record.envelope)
    }
}

/// Call `tool` through both APIs; the envelopes must agree, and this is
/// the envelope.
pub fn call_both(host: &Host, tool: &str, input: &str, context: &CallContext) -> serde_json::Value {
    let [blocking, asynchronous] = BOTH.map(|api| {
        api.call(host, tool, input, context).unwrap_or_else(|error| panic!("{api:?}: {error}")).to_value()
    });
    assert_eq!(blocking, asynchronous, "`{tool}`: Host::call and Host::call_async disagree");
    blocking
}
