//! OpenTelemetry spans for tool calls, exported over OTLP when configured
//! (off by default).
//!
//! One span per call, `harmonia.call`, from the call's start to its end,
//! with the tool, the outcome (`success` or the error code), the category
//! and retryability of an error, and the guest's peak memory; one child
//! span per capability use, `harmonia.capability`, with its kind, status,
//! bytes read and the read's kind for the workspace. What spans never
//! carry (docs/contract.md §7): arguments, data, envelopes' messages,
//! URLs (a URL may hold an argument), tokens, workspaces' credentials or
//! bodies.
//!
//! The exporter is OTLP over HTTP with protobuf (`[telemetry]
//! otlp_endpoint` in the serve config, e.g. a collector on
//! `http://127.0.0.1:4318/v1/traces`), batched on its own thread, so a
//! slow or absent collector never holds a call. Embedders that call
//! `Host::call_recorded` themselves use [`CallSpans::record`] the same way.

use harmonia_host::CallRecord;
use harmonia_host::capability::{CapabilityKind, Receipt};
use opentelemetry::trace::{Span, SpanKind, Status, TraceContextExt, Tracer, TracerProvider};
use opentelemetry::{Context, KeyValue};
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider, SpanExporter};
use serde::Deserialize;
use std::time::Duration;

/// `[telemetry]` in the serve config.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct TelemetryConfig {
    /// Where spans go, OTLP/HTTP protobuf (`http://host:4318/v1/traces`);
    /// none: no spans.
    pub otlp_endpoint: Option<String>,
    /// The `service.name` of the spans (default `harmonia-serve`).
    pub service_name: Option<String>,
}

/// Why the exporter could not be set up.
#[derive(Debug, thiserror::Error)]
#[error("cannot export spans to {endpoint}: {source}")]
pub struct TelemetryError {
    endpoint: String,
    #[source]
    source: opentelemetry_otlp::ExporterBuildError,
}

/// A client's W3C trace context, as a request's `_meta` carries it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceParent {
    /// `traceparent`.
    pub traceparent: String,
    /// `tracestate`, when given.
    pub tracestate: Option<String>,
}

impl TraceParent {
    /// The context of the remote span it names (empty when malformed),
    /// read by OpenTelemetry's own W3C propagator.
    fn context(&self) -> Context {
        use opentelemetry::propagation::TextMapPropagator;
        let mut carrier = std::collections::HashMap::new();
        carrier.insert("traceparent".to_owned(), self.traceparent.clone());
        if let Some(state) = &self.tracestate {
            carrier.insert("tracestate".to_owned(), state.clone());
        }
        opentelemetry_sdk::propagation::TraceContextPropagator::new().extract(&carrier)
    }
}

/// How long an export may take before it is dropped.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(5);

/// Records calls as spans. Clones share one exporter.
#[derive(Clone)]
pub struct CallSpans {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
}

impl CallSpans {
    /// Spans exported over OTLP as `config` says; `None` when it names no
    /// endpoint.
    pub fn from_config(config: &TelemetryConfig) -> Result<Option<Self>, TelemetryError> {
        let Some(endpoint) = &config.otlp_endpoint else { return Ok(None) };
        // The exporter's reqwest client shares its build with the host's
        // async HTTP client, rustls without a crypto provider of its own:
        // it takes the process's default, which this makes ring unless the
        // embedder installed another.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(endpoint)
            .with_timeout(EXPORT_TIMEOUT)
            .build()
            .map_err(|source| TelemetryError { endpoint: endpoint.clone(), source })?;
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource(config.service_name.as_deref()))
            .build();
        Ok(Some(Self::with_provider(provider)))
    }

    /// Spans handed to `exporter` as each call ends (tests, embedders with
    /// an exporter of their own).
    pub fn with_exporter(exporter: impl SpanExporter + 'static) -> Self {
        let provider =
            SdkTracerProvider::builder().with_simple_exporter(exporter).with_resource(resource(None)).build();
        Self::with_provider(provider)
    }

    fn with_provider(provider: SdkTracerProvider) -> Self {
        let tracer = provider.tracer("harmonia");
        Self { provider, tracer }
    }

    /// The spans of one call of `tool`, placed in time by the record's own
    /// clock (`started_at`, `duration`), not by when they are recorded: a
    /// recording delayed by the scheduler must not move the call's span
    /// past its capability uses'.
    pub fn record(&self, tool: &str, record: &CallRecord) {
        self.record_within(tool, record, None);
    }

    /// [`CallSpans::record`], the call's span a child of the client's
    /// span when `parent` carries a valid W3C trace context (the request's
    /// `_meta` `traceparent` and `tracestate`, SEP-414); a malformed one
    /// is ignored and the span starts its own trace.
    pub fn record_within(&self, tool: &str, record: &CallRecord, parent: Option<&TraceParent>) {
        let started = record.started_at;
        let ended = started.checked_add(record.duration).unwrap_or(started);
        let envelope = &record.envelope;
        let mut attributes = vec![
            KeyValue::new("harmonia.tool", tool.to_owned()),
            KeyValue::new("harmonia.peak_memory_bytes", record.peak_memory_bytes as i64),
        ];
        match &envelope.error {
            None => attributes.push(KeyValue::new("harmonia.outcome", "success")),
            Some(error) => {
                attributes.push(KeyValue::new("harmonia.outcome", error.code.clone()));
                attributes.push(KeyValue::new("harmonia.error.category", error.category.as_str()));
                attributes.push(KeyValue::new("harmonia.error.retryable", error.retryable));
            }
        }
        let remote = parent.map(TraceParent::context).unwrap_or_default();
        let mut call = self
            .tracer
            .span_builder("harmonia.call")
            .with_kind(SpanKind::Internal)
            .with_start_time(started)
            .with_attributes(attributes)
            .start_with_context(&self.tracer, &remote);
        if let Some(error) = &envelope.error {
            call.set_status(Status::error(error.code.clone()));
        }
        let parent = Context::current_with_span(call);
        for receipt in &record.receipts {
            self.capability(receipt, &parent);
        }
        parent.span().end_with_timestamp(ended);
    }

    fn capability(&self, receipt: &Receipt, parent: &Context) {
        let mut attributes = vec![
            KeyValue::new("harmonia.capability", receipt.capability.as_str()),
            KeyValue::new("harmonia.capability.status", receipt.status.clone()),
            KeyValue::new("harmonia.capability.bytes", receipt.bytes as i64),
        ];
        // A workspace read's target is its kind and source (`sqlite:job`);
        // a public-web target is a URL, which may hold an argument.
        if receipt.capability == CapabilityKind::Workspace {
            attributes.push(KeyValue::new("harmonia.capability.read", receipt.target.clone()));
        }
        let mut span = self
            .tracer
            .span_builder("harmonia.capability")
            .with_kind(SpanKind::Client)
            .with_start_time(receipt.started_at)
            .with_attributes(attributes)
            .start_with_context(&self.tracer, parent);
        span.end_with_timestamp(receipt.started_at + Duration::from_micros(receipt.duration_us));
    }

    /// Export what is buffered now.
    pub fn flush(&self) {
        if let Err(error) = self.provider.force_flush() {
            tracing::warn!(%error, "spans not all exported");
        }
    }

    /// Export what is buffered and stop; spans recorded later are dropped.
    pub fn shutdown(&self) {
        if let Err(error) = self.provider.shutdown() {
            tracing::warn!(%error, "spans not all exported at shutdown");
        }
    }
}

fn resource(service_name: Option<&str>) -> Resource {
    Resource::builder_empty()
        .with_service_name(service_name.unwrap_or("harmonia-serve").to_owned())
        .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
        .build()
}
