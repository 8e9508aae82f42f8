//! Hot reload (`harmonia_serve::reload`) with real parts: a server on
//! 127.0.0.1, real components in a plugin directory or locked and signed
//! in a content-addressed store, a reloader watching them. Each reload is
//! asked for with the reloader's trigger (what `SIGHUP` does), so the
//! order of events is the test's, not a clock's; one test leaves it to
//! the poll.

use crate::support::{Server, job_status_skill, stateless_request};
use harmonia_host::config::HostConfig;
use harmonia_host::liaison::session::Liaison;
use harmonia_host::metrics::Metrics;
use harmonia_host::{CallSlots, Host};
use harmonia_registry::keys::{Algorithm, PrivateKey};
use harmonia_registry::manifest::{Manifest, wasm_config};
use harmonia_registry::{LockEntry, LockFile, Store, cosign};
use harmonia_serve::config::ServeConfig;
use harmonia_serve::reload::{Build, Reloader, Source, Status};
use harmonia_serve::state::ServeState;
use harmonia_testkit::hosts::guest_path;
use harmonia_testkit::metric_value;
use harmonia_testkit::server::{Gate, Loopback, Reply};
use harmonia_testkit::tempdir::TempDir;
use serde_json::{Value, json};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Long enough that no look comes unasked during a test.
const NEVER: Duration = Duration::from_secs(600);

/// Every tool the tests' token may call.
const TOOLS: [&str; 4] = ["get_job_status", "testing_fetch_url", "trivial_probe", "test_simple_text"];

struct Reloading {
    server: Server,
    state: Arc<ServeState>,
    reloader: Reloader,
}

impl Reloading {
    /// Serve what `build` builds, reloading from `watch`.
    fn start(build: Build, watch: Vec<PathBuf>, interval: Duration) -> Self {
        Self::start_with(build, watch, interval, ServeConfig::default())
    }

    /// [`Reloading::start`] under `config`'s bounds; the first host on
    /// `limits.max_in_flight_calls` slots, as `harmonia serve` builds it.
    fn start_with(build: Build, watch: Vec<PathBuf>, interval: Duration, config: ServeConfig) -> Self {
        let host = build(&CallSlots::new(config.limits.max_in_flight_calls)).unwrap();
        let dir = TempDir::new("serve-reload");
        let liaison = Liaison::new(host, job_status_skill(&dir)).unwrap();
        let state =
            ServeState::with_rate_limits(liaison, config.limits.clone(), config.rate_limits.clone(), None)
                .unwrap();
        let server = Server::serve(Arc::clone(&state), config, &TOOLS, dir);
        let reloader = {
            let _entered = server.runtime().enter();
            Reloader::spawn(Arc::clone(&state), Source { watch, build }, interval, true)
        };
        Self { server, state, reloader }
    }

    /// Whether no call runs on any set, at once (no waiting).
    fn idle_now(&self) -> bool {
        self.server.runtime().block_on(self.state.drained(Duration::ZERO))
    }

    /// Reload now (as on SIGHUP) and wait until it is done.
    fn reload(&self) -> Status {
        self.reloader.trigger();
        self.settled()
    }

    fn settled(&self) -> Status {
        self.wait_for(|_| true)
    }

    /// Wait (at most a minute, else panic) until settled and `done`.
    fn wait_for(&self, done: impl Fn(&Status) -> bool) -> Status {
        let settled = self.server.runtime().block_on(async {
            tokio::time::timeout(Duration::from_secs(60), async {
                loop {
                    let status = self.reloader.settled().await;
                    if done(&status) {
                        return status;
                    }
                    self.reloader.wait_for(|now| *now != status).await;
                }
            })
            .await
        });
        settled.expect("the reloader did not settle within a minute")
    }

    /// The tools a stateless `tools/list` shows.
    fn listed(&self) -> Vec<String> {
        let server = &self.server;
        let headers = [("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/list")];
        let answer =
            server.post("/mcp", &server.token, &headers, &stateless_request("tools/list", json!({})));
        assert_eq!(answer.status, 200, "{}", answer.body);
        let tools = answer.json()["result"]["tools"].as_array().cloned().unwrap_or_default();
        tools.iter().map(|tool| tool["name"].as_str().unwrap().to_owned()).collect()
    }
}

/// A mock host config loading `plugins` (a directory), its compiled
/// components cached in `cache`, the public web routed to `upstream`.
/// A call of the first set's fetch guest on its own thread, returned once
/// `upstream` holds its request (so the call is in flight on that set).
fn held_fetch(server: &Server, upstream: &Loopback) -> std::thread::JoinHandle<(u16, Value)> {
    let (agent, url, token) = (server.agent.clone(), server.url.clone(), server.token.clone());
    let slow = std::thread::spawn(move || {
        let arguments = json!({"url": "https://hn.algolia.com/slow"});
        crate::support::call_at(&agent, &url, &token, "testing_fetch_url", arguments)
    });
    upstream.await_request();
    slow
}

fn config(plugins: Option<&Path>, cache: &TempDir, upstream: Option<&Loopback>) -> HostConfig {
    let mut config = HostConfig { mock: true, ..HostConfig::default() };
    config.plugins.dir = plugins.map(Path::to_owned);
    config.cache.dir = Some(cache.path().to_owned());
    if let Some(upstream) = upstream {
        config.public_web.routes.insert("https://hn.algolia.com".into(), upstream.base_url());
    }
    config
}

/// Builds a host from `config`, counting into `metrics`, on the server's
/// call slots.
fn builder(config: HostConfig, metrics: Metrics) -> Build {
    Arc::new(move |slots| {
        let builder = Host::builder(config.clone()).public_web_mock(false).metrics(metrics.clone());
        Ok(builder.call_slots(slots.clone()).build()?)
    })
}

fn put(dir: &Path, guest: &str) {
    std::fs::copy(guest_path(guest), dir.join(format!("{guest}.wasm"))).unwrap();
}

fn status_of(envelope: &Value) -> &str {
    envelope["status"].as_str().unwrap_or_default()
}

#[test]
fn a_call_in_flight_finishes_on_the_old_set_while_new_calls_see_the_new_one() {
    let upstream = Loopback::start();
    let gate = Gate::default();
    upstream
        .route("/slow", Reply::Gated(gate.clone(), Box::new(Reply::Json(200, r#"{"old": true}"#.into()))));
    let (plugins, cache) = (TempDir::new("reload-plugins"), TempDir::new("reload-cache"));
    put(plugins.path(), "testing-fetch-url");
    // The new set's component compiled ahead, so the swap is a cache hit
    // well inside the held call's deadline.
    Host::builder(config(None, &cache, None))
        .component_file(guest_path("testing-trivial"))
        .unwrap()
        .build()
        .unwrap();
    let build = builder(config(Some(plugins.path()), &cache, Some(&upstream)), Metrics::new());
    let reloading = Reloading::start(build, vec![plugins.path().to_owned()], NEVER);
    let server = &reloading.server;

    let slow = held_fetch(server, &upstream);

    // The new set: the fetch guest gone, the trivial one in.
    std::fs::remove_file(plugins.path().join("testing-fetch-url.wasm")).unwrap();
    put(plugins.path(), "testing-trivial");
    let status = reloading.reload();
    assert_eq!((status.swapped, status.refused), (1, 0), "{status:?}");
    let listed = reloading.listed();
    assert!(listed.contains(&"trivial_probe".to_owned()), "{listed:?}");
    assert!(!listed.contains(&"testing_fetch_url".to_owned()), "{listed:?}");
    assert_eq!(status_of(&server.envelope("trivial_probe", json!({}))), "success");
    let gone = server.call_error("testing_fetch_url", json!({"url": "https://hn.algolia.com/slow"}));
    assert_eq!(gone["message"], "Unknown tool: testing_fetch_url", "{gone}");

    // The call started on the old set finishes on it, with its result.
    gate.open();
    let (code, answer) = slow.join().unwrap();
    assert_eq!(code, 200, "{answer}");
    let envelope = &answer["result"]["structuredContent"];
    assert_eq!(status_of(envelope), "success", "{answer}");
    assert_eq!(envelope["data"]["status"], 200, "{answer}");
}

#[test]
fn a_call_still_running_on_a_replaced_set_counts_against_the_bound_and_the_drain() {
    let upstream = Loopback::start();
    let gate = Gate::default();
    upstream.route("/slow", Reply::Gated(gate.clone(), Box::new(Reply::Json(200, r#"{}"#.into()))));
    let (plugins, cache) = (TempDir::new("reload-bound"), TempDir::new("reload-bound-cache"));
    put(plugins.path(), "testing-fetch-url");
    Host::builder(config(None, &cache, None))
        .component_file(guest_path("testing-trivial"))
        .unwrap()
        .build()
        .unwrap();
    // The new set caps every deadline at 100 ms: a call of it that finds
    // no slot is answered at once, while the old set's held call (5 s)
    // still runs.
    let capped = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let metrics = Metrics::new();
    let build: Build = {
        let (uncapped, capped_config) =
            (builder(config(Some(plugins.path()), &cache, Some(&upstream)), metrics.clone()), {
                let mut capped_config = config(Some(plugins.path()), &cache, Some(&upstream));
                capped_config.limits.max_deadline_ms = Some(100);
                builder(capped_config, metrics.clone())
            });
        let capped = Arc::clone(&capped);
        Arc::new(move |slots| {
            if capped.load(std::sync::atomic::Ordering::SeqCst) {
                capped_config(slots)
            } else {
                uncapped(slots)
            }
        })
    };
    let mut serve = ServeConfig::default();
    serve.limits.max_in_flight_calls = 1;
    let reloading = Reloading::start_with(build, vec![plugins.path().to_owned()], NEVER, serve);
    let server = &reloading.server;

    // The server's one slot, taken by a call on the first set.
    let slow = held_fetch(server, &upstream);
    std::fs::remove_file(plugins.path().join("testing-fetch-url.wasm")).unwrap();
    put(plugins.path(), "testing-trivial");
    capped.store(true, std::sync::atomic::Ordering::SeqCst);
    let status = reloading.reload();
    assert_eq!((status.swapped, status.refused), (1, 0), "{status:?}");

    // The replaced set's call still holds the one slot: a call of the new
    // set waits for it to its deadline and never runs; the server is not
    // idle.
    assert_eq!(server.envelope("trivial_probe", json!({})), harmonia_testkit::dependency_unavailable());
    let text = server.metrics();
    assert_eq!(
        metric_value(&text, r#"harmonia_slot_wait_timeouts_total{bound="host_slots"}"#),
        1.0,
        "{text}"
    );
    assert!(!reloading.idle_now(), "a drain now would leave the replaced set's call running");

    gate.open();
    let (code, answer) = slow.join().unwrap();
    assert_eq!(code, 200, "{answer}");
    assert_eq!(status_of(&answer["result"]["structuredContent"]), "success", "{answer}");
    assert!(server.runtime().block_on(reloading.state.drained(Duration::from_secs(60))));
    assert_eq!(status_of(&server.envelope("trivial_probe", json!({}))), "success");
}

#[test]
fn a_reloads_new_tools_are_published_as_oauth_scopes() {
    let (plugins, cache) = (TempDir::new("reload-scopes"), TempDir::new("reload-scopes-cache"));
    put(plugins.path(), "testing-trivial");
    let build = builder(config(Some(plugins.path()), &cache, None), Metrics::new());
    let oauth = harmonia_serve::config::OAuthConfig {
        resource: "http://127.0.0.1/mcp".into(),
        authorization_servers: vec!["https://id.example".into()],
        scopes_supported: Vec::new(),
        tool_scope: "harmonia:tools:{tool}".into(),
        skill_scope: "harmonia:skills:{skill}".into(),
    };
    let serve = ServeConfig { oauth: Some(oauth), ..ServeConfig::default() };
    let reloading = Reloading::start_with(build, vec![plugins.path().to_owned()], NEVER, serve);
    let server = &reloading.server;
    let published = || {
        let url = format!("{}/.well-known/oauth-protected-resource", server.url);
        let mut response = server.agent.get(url).call().unwrap();
        let metadata: Value = serde_json::from_str(&response.body_mut().read_to_string().unwrap()).unwrap();
        metadata["scopes_supported"].as_array().cloned().unwrap_or_default()
    };
    // What a 401 on `/mcp` asks for: every tool's scope.
    let challenged = || {
        let mut response = server
            .agent
            .post(format!("{}/mcp", server.url))
            .header("Content-Type", "application/json")
            .send(crate::support::initialize().to_string())
            .unwrap();
        assert_eq!(response.status().as_u16(), 401);
        let _ = response.body_mut().read_to_string();
        response.headers().get("www-authenticate").unwrap().to_str().unwrap().to_owned()
    };
    let before = published();
    assert!(before.contains(&json!("harmonia:tools:trivial_probe")), "{before:?}");
    assert!(!before.contains(&json!("harmonia:tools:test_simple_text")), "{before:?}");

    std::fs::remove_file(plugins.path().join("testing-trivial.wasm")).unwrap();
    put(plugins.path(), "testing-simple-text");
    let status = reloading.reload();
    assert_eq!((status.swapped, status.refused), (1, 0), "{status:?}");
    let after = published();
    assert!(after.contains(&json!("harmonia:tools:test_simple_text")), "{after:?}");
    assert!(
        !after.contains(&json!("harmonia:tools:trivial_probe")),
        "a removed tool's scope is withdrawn: {after:?}"
    );
    let challenge = challenged();
    assert!(
        challenge.contains("harmonia:tools:test_simple_text") && !challenge.contains("trivial_probe"),
        "{challenge}"
    );
}

/// Lock `guests` into `store` as a pull leaves them, each signed by its
/// key.
/// The tool a test guest declares: its lock entry's name.
fn declared(guest: &str) -> &'static str {
    match guest {
        "testing-trivial" => "trivial_probe",
        "testing-simple-text" => "test_simple_text",
        other => panic!("which tool does {other} declare?"),
    }
}

fn lock(store: &Store, guests: &[(&str, &PrivateKey)]) {
    use base64::Engine as _;
    let mut lock = LockFile::default();
    for (guest, key) in guests {
        let bytes = std::fs::read(guest_path(guest)).unwrap();
        let manifest = Manifest::for_component(&wasm_config(&bytes), &bytes).to_bytes();
        let manifest_digest = store.write(&manifest).unwrap();
        let layer_digest = store.write(&bytes).unwrap();
        let repository = format!("127.0.0.1:1/tests/{guest}");
        let payload = cosign::payload(&repository, &manifest_digest);
        let signature = base64::engine::general_purpose::STANDARD.encode(key.sign(&payload));
        store
            .write_signatures(&manifest_digest, &[cosign::StoredSignature::new(&payload, &signature)])
            .unwrap();
        lock.upsert(LockEntry {
            name: declared(guest).to_owned(),
            reference: format!("oci://{repository}@{manifest_digest}"),
            manifest_digest,
            layer_digest,
            signer: Some(key.public().fingerprint().to_owned()),
        });
    }
    lock.write(&store.lock_path()).unwrap();
}

#[test]
fn a_lock_naming_a_bad_signature_or_digest_leaves_the_old_set_serving_and_is_counted() {
    let (plugins, cache) = (TempDir::new("reload-lock"), TempDir::new("reload-lock-cache"));
    let store = Store::new(plugins.path());
    let (trusted, stranger) = (
        PrivateKey::generate(Algorithm::EcdsaP256).unwrap(),
        PrivateKey::generate(Algorithm::EcdsaP256).unwrap(),
    );
    let key_file = plugins.path().join("ci.pub");
    std::fs::write(&key_file, trusted.public().to_pem()).unwrap();
    lock(&store, &[("testing-trivial", &trusted)]);
    let mut host_config = config(None, &cache, None);
    host_config.plugins.lock = Some(store.lock_path());
    host_config.plugins.trust.require_signatures = true;
    host_config.plugins.trust.keys = vec![key_file];
    let metrics = Metrics::new();
    let reloading = Reloading::start(builder(host_config, metrics.clone()), vec![store.lock_path()], NEVER);
    let server = &reloading.server;
    let serving_the_old_set = || {
        let listed = reloading.listed();
        assert!(listed.contains(&"trivial_probe".to_owned()), "{listed:?}");
        assert!(!listed.contains(&"test_simple_text".to_owned()), "{listed:?}");
        assert_eq!(status_of(&server.envelope("trivial_probe", json!({}))), "success");
    };
    serving_the_old_set();

    // A plugin signed by a key the policy does not trust.
    lock(&store, &[("testing-trivial", &trusted), ("testing-simple-text", &stranger)]);
    let status = reloading.reload();
    assert_eq!((status.swapped, status.refused), (0, 1), "{status:?}");
    let reason = status.last_refusal.unwrap();
    assert!(reason.contains("testing-simple-text"), "{reason}");
    // What is logged names the plugin, never a secret.
    let secret = stranger.to_pem().unwrap();
    let secret_body: String = secret.lines().filter(|line| !line.starts_with("-----")).collect();
    assert!(!reason.contains(&secret_body), "{reason}");
    serving_the_old_set();

    // Trusted, but the stored component is not the bytes the lock pins.
    lock(&store, &[("testing-trivial", &trusted), ("testing-simple-text", &trusted)]);
    let entry =
        LockFile::read(&store.lock_path()).unwrap().get(declared("testing-simple-text")).unwrap().clone();
    let blob = plugins.path().join("oci/sha256").join(entry.layer_digest.hex());
    std::fs::write(&blob, std::fs::read(guest_path("testing-trivial")).unwrap()).unwrap();
    let status = reloading.reload();
    assert_eq!((status.swapped, status.refused), (0, 2), "{status:?}");
    serving_the_old_set();

    // A lock file cut off mid-write.
    let whole = std::fs::read_to_string(store.lock_path()).unwrap();
    let cut = whole.rfind("sha256:").unwrap() + 10;
    std::fs::write(store.lock_path(), &whole[..cut]).unwrap();
    let status = reloading.reload();
    assert_eq!((status.swapped, status.refused), (0, 3), "{status:?}");
    serving_the_old_set();

    let text = server.metrics();
    assert_eq!(metric_value(&text, r#"harmonia_plugin_reloads_total{outcome="refused"}"#), 3.0, "{text}");
    assert_eq!(metric_value(&text, "harmonia_component_load_failures_total"), 3.0, "{text}");

    // Made whole and trusted, the same lock is swapped in.
    lock(&store, &[("testing-trivial", &trusted), ("testing-simple-text", &trusted)]);
    let status = reloading.reload();
    assert_eq!((status.swapped, status.refused), (1, 3), "{status:?}");
    assert!(reloading.listed().contains(&"test_simple_text".to_owned()));
    let text = server.metrics();
    assert_eq!(metric_value(&text, r#"harmonia_plugin_reloads_total{outcome="swapped"}"#), 1.0, "{text}");
}

#[test]
fn a_half_written_component_is_refused_and_the_whole_one_loaded() {
    let (plugins, cache) = (TempDir::new("reload-half"), TempDir::new("reload-half-cache"));
    put(plugins.path(), "testing-trivial");
    let build = builder(config(Some(plugins.path()), &cache, None), Metrics::new());
    let reloading = Reloading::start(build, vec![plugins.path().to_owned()], NEVER);
    let whole = std::fs::read(guest_path("testing-simple-text")).unwrap();
    let target = plugins.path().join("testing-simple-text.wasm");
    std::fs::write(&target, &whole[..whole.len() / 2]).unwrap();
    let status = reloading.reload();
    assert_eq!((status.swapped, status.refused), (0, 1), "{status:?}");
    let listed = reloading.listed();
    assert!(listed.contains(&"trivial_probe".to_owned()) && !listed.contains(&"test_simple_text".to_owned()));

    std::fs::write(&target, &whole).unwrap();
    let status = reloading.reload();
    assert_eq!((status.swapped, status.refused), (1, 1), "{status:?}");
    assert!(reloading.listed().contains(&"test_simple_text".to_owned()));
}

#[test]
fn a_build_the_files_changed_under_is_not_swapped_in() {
    let (plugins, cache) = (TempDir::new("reload-mid"), TempDir::new("reload-mid-cache"));
    put(plugins.path(), "testing-trivial");
    let real = builder(config(Some(plugins.path()), &cache, None), Metrics::new());
    // A writer adds a component just after the loader read the directory,
    // during the first reload's build.
    let builds = Arc::new(Mutex::new(0));
    let build: Build = {
        let (dir, builds) = (plugins.path().to_owned(), Arc::clone(&builds));
        Arc::new(move |slots| {
            let host = real(slots);
            let mut count = builds.lock().unwrap();
            *count += 1;
            if *count == 2 {
                put(&dir, "testing-simple-text");
            }
            host
        })
    };
    let reloading = Reloading::start(build, vec![plugins.path().to_owned()], NEVER);
    std::fs::remove_file(plugins.path().join("testing-trivial.wasm")).unwrap();
    let status = reloading.reload();
    assert_eq!((status.swapped, status.discarded), (0, 1), "{status:?}");
    let listed = reloading.listed();
    assert!(listed.contains(&"trivial_probe".to_owned()), "the old set still serves: {listed:?}");

    let status = reloading.reload();
    assert_eq!((status.swapped, status.discarded), (1, 1), "{status:?}");
    let listed = reloading.listed();
    assert!(listed.contains(&"test_simple_text".to_owned()) && !listed.contains(&"trivial_probe".to_owned()));
}

#[test]
fn a_storm_of_reloads_costs_at_most_one_more_build() {
    let (plugins, cache) = (TempDir::new("reload-storm"), TempDir::new("reload-storm-cache"));
    put(plugins.path(), "testing-trivial");
    let real = builder(config(Some(plugins.path()), &cache, None), Metrics::new());
    // The test holds the first reload's build until the storm is over.
    let hold = Arc::new(Mutex::new(()));
    let (started, builds_started) = std::sync::mpsc::channel::<()>();
    let build: Build = {
        let (hold, started) = (Arc::clone(&hold), Mutex::new(started));
        Arc::new(move |slots| {
            let _ = started.lock().unwrap().send(());
            let _held = hold.lock().unwrap();
            real(slots)
        })
    };
    let reloading = Reloading::start(build, vec![plugins.path().to_owned()], NEVER);
    builds_started.recv().unwrap(); // the start's own build
    let held = hold.lock().unwrap();
    reloading.reloader.trigger();
    builds_started.recv_timeout(Duration::from_secs(60)).expect("a reload started");

    let whole = std::fs::read(guest_path("testing-simple-text")).unwrap();
    for round in 0..1000 {
        reloading.reloader.trigger();
        let cut = whole.len() * (round % 10 + 1) / 10;
        std::fs::write(plugins.path().join("testing-simple-text.wasm"), &whole[..cut]).unwrap();
    }
    drop(held);
    let status = reloading.settled();
    assert_eq!(status.builds, 2, "{status:?}");
    // The first build saw the files change under it; the second loaded
    // the state the storm left.
    assert_eq!((status.discarded, status.swapped), (1, 1), "{status:?}");
    assert!(reloading.listed().contains(&"test_simple_text".to_owned()));
}

#[test]
fn a_change_to_the_plugin_directory_is_noticed_without_a_signal() {
    let (plugins, cache) = (TempDir::new("reload-poll"), TempDir::new("reload-poll-cache"));
    put(plugins.path(), "testing-trivial");
    let build = builder(config(Some(plugins.path()), &cache, None), Metrics::new());
    let reloading = Reloading::start(build, vec![plugins.path().to_owned()], Duration::from_millis(100));
    put(plugins.path(), "testing-simple-text");
    let status = reloading.wait_for(|status| status.swapped == 1);
    assert_eq!(status.refused, 0, "{status:?}");
    assert!(reloading.listed().contains(&"test_simple_text".to_owned()));
}

/// Read `response`'s SSE lines on a thread; each JSON-RPC method seen is
/// sent on the returned channel.
fn methods_of(mut response: ureq::http::Response<ureq::Body>) -> std::sync::mpsc::Receiver<String> {
    let (seen, methods) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let reader = std::io::BufReader::new(response.body_mut().as_reader());
        for line in reader.lines() {
            let Ok(line) = line else { return };
            let Some(data) = line.strip_prefix("data:") else { continue };
            let message: Value = serde_json::from_str(data.trim()).unwrap_or(Value::Null);
            if let Some(method) = message["method"].as_str()
                && seen.send(method.to_owned()).is_err()
            {
                return;
            }
        }
    });
    methods
}

fn await_method(methods: &std::sync::mpsc::Receiver<String>, wanted: &str) {
    loop {
        let method = methods.recv_timeout(Duration::from_secs(60)).unwrap_or_else(|_| panic!("no {wanted}"));
        if method == wanted {
            return;
        }
    }
}

#[test]
fn clients_are_told_when_a_reload_changes_the_tools() {
    let (plugins, cache) = (TempDir::new("reload-notify"), TempDir::new("reload-notify-cache"));
    put(plugins.path(), "testing-trivial");
    let build = builder(config(Some(plugins.path()), &cache, None), Metrics::new());
    let reloading = Reloading::start(build, vec![plugins.path().to_owned()], NEVER);
    let server = &reloading.server;
    let sse = |request: ureq::RequestBuilder<ureq::typestate::WithoutBody>| {
        request
            .header("Authorization", &format!("Bearer {}", server.token))
            .header("Accept", "text/event-stream")
    };

    // An MCP session (2025-06-18) is told that the server may change its
    // tools, and then is told on its stream.
    let opened = server.post("/mcp", &server.token, &[], &crate::support::initialize());
    let result = opened
        .body
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line.strip_prefix("data:")?.trim()).ok())
        .find(|message| message["id"] == 0)
        .unwrap_or_default();
    assert_eq!(result["result"]["capabilities"]["tools"]["listChanged"], true, "{}", opened.body);
    let session = opened.session.unwrap();
    let headers = [("mcp-session-id", session.as_str()), ("mcp-protocol-version", "2025-06-18")];
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(server.post("/mcp", &server.token, &headers, &initialized).status, 202);
    let stream = sse(server.agent.get(format!("{}/mcp", server.url)))
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-06-18")
        .call()
        .unwrap();
    assert_eq!(stream.status(), 200);
    let in_session = methods_of(stream);

    // A stateless client (2026-07-28) listens for the change.
    let listen =
        stateless_request("subscriptions/listen", json!({"notifications": {"toolsListChanged": true}}));
    let stream = server
        .agent
        .post(format!("{}/mcp", server.url))
        .header("Authorization", &format!("Bearer {}", server.token))
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "subscriptions/listen")
        .send(listen.to_string())
        .unwrap();
    assert_eq!(stream.status(), 200);
    let stateless = methods_of(stream);
    await_method(&stateless, "notifications/subscriptions/acknowledged");

    put(plugins.path(), "testing-simple-text");
    let status = reloading.reload();
    assert_eq!(status.swapped, 1, "{status:?}");
    await_method(&in_session, "notifications/tools/list_changed");
    await_method(&stateless, "notifications/tools/list_changed");
}
