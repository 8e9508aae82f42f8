//! `cargo bench -p harmonia-bench`: per-call cost with criterion.
//!
//! - a trivial guest, fresh instance per call, with and without pooling;
//! - `suggest_posting_windows` on 1,000 posts, sandboxed and natively.
//!
//! `harmonia bench` prints the same figures (and more) without criterion.

use criterion::{Criterion, criterion_group, criterion_main};
use harmonia_contract::workspace_document::WorkspaceDocument;
use harmonia_guest_sdk::{FeedRead, ReadError, Workspace};
use harmonia_host::capability::workspace::memory::MemorySource;
use harmonia_host::config::HostConfig;
use harmonia_host::{CallContext, Host};
use serde_json::{Value, json};
use std::hint::black_box;
use std::sync::Arc;

fn trivial_host(pooling: bool) -> Host {
    let mut config = HostConfig::default();
    config.plugins.builtin = false;
    config.limits.pooling = pooling;
    let bytes = harmonia_artifacts::bench_guest("testing-trivial").expect("bench guest").to_vec();
    Host::builder(config).component("trivial", bytes).build().expect("host")
}

fn workspace(posts: usize) -> WorkspaceDocument {
    let posts: Vec<Value> = (0..posts)
        .map(|i| {
            json!({"postId": format!("p{i}"), "text": "t", "likes": (i * 37) % 500,
            "publishedAt": format!("2026-11-{:02}T{:02}:00:00Z", 1 + i % 28, i % 24)})
        })
        .collect();
    WorkspaceDocument::from_value(&json!({"workspaceId": "ws", "posts": posts})).expect("document")
}

struct Engagement(String);

impl Workspace for Engagement {
    fn engagement(&self) -> Result<String, ReadError> {
        Ok(self.0.clone())
    }
    fn feed(&self) -> Result<FeedRead, ReadError> {
        Err(ReadError::Unavailable)
    }
    fn job(&self, _id: &str) -> Result<String, ReadError> {
        Err(ReadError::NotFound)
    }
}

fn calls(c: &mut Criterion) {
    let context = CallContext::default();
    for (name, pooling) in [("trivial_call_pooling", true), ("trivial_call_no_pooling", false)] {
        let host = trivial_host(pooling);
        c.bench_function(name, |b| b.iter(|| black_box(host.call("trivial_probe", "{}", &context))));
    }
    let document = workspace(1_000);
    let host = Host::builder(HostConfig::default())
        .workspace_source(Arc::new(MemorySource::new(document.clone(), false)))
        .build()
        .expect("host");
    let context = CallContext::for_workspace("ws");
    c.bench_function("posting_windows_sandboxed_1000_posts", |b| {
        b.iter(|| black_box(host.call("suggest_posting_windows", "{}", &context)))
    });
    let native = Engagement(document.engagement_json());
    c.bench_function("posting_windows_native_1000_posts", |b| {
        b.iter(|| {
            black_box(harmonia_guest_sdk::invoke("{}", |input| suggest_posting_windows::run(&native, input)))
        })
    });
}

criterion_group!(benches, calls);
criterion_main!(benches);
