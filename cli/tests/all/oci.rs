//! Plugins from an OCI registry: a real CNCF distribution registry
//! (Debian's `docker-registry`) on 127.0.0.1 for the round trip, and a
//! scripted loopback server for the registries that misbehave.
//!
//! Each hostile case names the check that holds it; each was watched
//! failing with that check removed.

use base64::Engine as _;
use harmonia_host::config::HostConfig;
use harmonia_host::host::HostError;
use harmonia_host::plugin::LoadError;
use harmonia_host::{CallContext, Host};
use harmonia_registry::cosign::{Refusal, StoredSignature};
use harmonia_registry::keys::{Algorithm, PrivateKey};
use harmonia_registry::manifest::{Descriptor, Manifest};
use harmonia_registry::oci::{Client, Options};
use harmonia_registry::{Digest, LockFile, OciReference, RegistryError, Store, TrustPolicy};
use harmonia_testkit::server::{Loopback, Reply};
use harmonia_testkit::sigstore;
use harmonia_testkit::tempdir::TempDir;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const REGISTRY: &str = "/usr/bin/docker-registry";

/// A CNCF distribution registry on 127.0.0.1 with a temporary storage
/// directory, stopped when dropped.
struct Registry {
    child: Child,
    port: u16,
    _dir: TempDir,
}

impl Registry {
    fn start() -> Self {
        assert!(
            Path::new(REGISTRY).exists(),
            "{REGISTRY} is missing: run scripts/install-test-deps.sh (Debian's docker-registry)"
        );
        let dir = TempDir::new("oci-registry");
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let config = dir.path().join("config.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:{port}\n",
                dir.path().join("data").display()
            ),
        )
        .unwrap();
        let log = std::fs::File::create(dir.path().join("registry.log")).unwrap();
        let child = Command::new(REGISTRY)
            .arg("serve")
            .arg(&config)
            .stdout(Stdio::from(log.try_clone().unwrap()))
            .stderr(Stdio::from(log))
            .spawn()
            .expect("start docker-registry");
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(started.elapsed() < Duration::from_secs(15), "docker-registry did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        Self { child, port, _dir: dir }
    }

    fn reference(&self, path: &str) -> String {
        format!("oci://127.0.0.1:{}/{path}", self.port)
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(future)
}

fn parse(text: &str) -> OciReference {
    OciReference::parse(text).unwrap()
}

fn client(reference: &OciReference) -> Client {
    Client::new(reference, Options::default()).unwrap()
}

/// A built-in tool's component bytes.
fn component(name: &str) -> Vec<u8> {
    let (_, bytes) =
        harmonia_artifacts::BUILTIN_TOOLS.iter().find(|(tool, _)| *tool == name).expect("a built-in tool");
    bytes.to_vec()
}

/// A built-in tool written to `dir` as `NAME.wasm`.
fn component_file(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(format!("{name}.wasm"));
    std::fs::write(&path, component(name)).unwrap();
    path
}

/// The tool a component declares, as `harmonia plugin pull` reads it
/// (what a pull compares the lock name with).
fn describe(bytes: &[u8]) -> Result<String, String> {
    let mut config = HostConfig::default();
    config.cache.dir = Some(std::env::temp_dir().join("harmonia-oci-tests-cache"));
    harmonia_host::inspect::declared_tool(
        &config,
        bytes,
        harmonia_host::plugin::PluginOrigin::Oci("test".into()),
    )
}

fn harmonia(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_harmonia"));
    command.args(args).env_remove("HARMONIA_CONFIG").env_remove("HARMONIA_LOG").env_remove("RUST_LOG");
    command
}

fn succeed(command: &mut Command) -> String {
    let output = command.output().expect("run harmonia");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    String::from_utf8(output.stdout).unwrap()
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

/// A host config loading only the lock in `dir` under `policy`'s keys.
fn config_for(dir: &Path, require: bool, keys: &[PathBuf]) -> HostConfig {
    let mut config = HostConfig::default();
    config.plugins.builtin = false;
    config.plugins.lock = Some(dir.join("plugins.lock"));
    config.plugins.trust.require_signatures = require;
    config.plugins.trust.keys = keys.to_vec();
    config.cache.dir = Some(dir.join("cache"));
    config
}

fn write_key(dir: &Path, name: &str, key: &PrivateKey) -> PathBuf {
    let path = dir.join(format!("{name}.pub"));
    std::fs::write(&path, key.public().to_pem()).unwrap();
    path
}

fn refusal(result: Result<impl std::fmt::Debug, RegistryError>) -> Refusal {
    match result {
        Err(RegistryError::Refused { reason, .. }) => reason,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

fn unverified(result: Result<Host, HostError>) -> String {
    match result {
        Err(HostError::Load(LoadError::Unverified { reason, .. })) => reason,
        Err(other) => panic!("expected an unverified component, got {other}"),
        Ok(_) => panic!("expected an unverified component, the host started"),
    }
}

/// The user's path, through the command: keygen, push, sign, pull by tag
/// into a lock, then the host loads the locked component with
/// `require_signatures = true` and calls it.
#[test]
fn push_sign_pull_and_call_through_the_command() {
    let registry = Registry::start();
    let dir = TempDir::new("oci-flow");
    let reference = registry.reference("tools/get_job_status:v1");
    let key = dir.path().join("ci");
    let fingerprint =
        succeed(harmonia(&["plugin", "keygen", "--out"]).arg(&key)).lines().next().unwrap().to_owned();
    assert!(fingerprint.starts_with("key:sha256:"), "{fingerprint}");
    let pushed = succeed(
        harmonia(&["plugin", "push"]).arg(component_file(dir.path(), "get_job_status")).arg(&reference),
    );
    assert!(pushed.contains("@sha256:"), "{pushed}");
    succeed(harmonia(&["plugin", "sign", &reference, "--key"]).arg(key.with_extension("key")));
    let config = dir.path().join("harmonia.toml");
    std::fs::write(
        &config,
        "[plugins]\nbuiltin = false\nlock = \"plugins/plugins.lock\"\n[plugins.trust]\nrequire_signatures = true\nkeys = [\"ci.pub\"]\n",
    )
    .unwrap();
    let pulled = succeed(harmonia(&["plugin", "pull", &reference, "--config"]).arg(&config));
    assert!(pulled.contains(&fingerprint), "{pulled}");
    let lock = LockFile::read(&dir.path().join("plugins/plugins.lock")).unwrap();
    let entry = lock.get("get_job_status").expect("locked");
    assert_eq!(entry.reference, reference);
    assert_eq!(entry.signer.as_deref(), Some(fingerprint.as_str()));
    assert_eq!(entry.layer_digest, Digest::of(&component("get_job_status")));
    succeed(harmonia(&["plugin", "verify", "--config"]).arg(&config));
    let called = succeed(
        harmonia(&["call", "get_job_status", "--input", r#"{"job_id": " "}"#, "--config"]).arg(&config),
    );
    assert!(called.contains("invalid_job_id"), "{called}");
    let tools = succeed(harmonia(&["tools", "--json", "--config"]).arg(&config));
    assert!(tools.contains(&fingerprint) && tools.contains(entry.manifest_digest.as_str()), "{tools}");
}

/// Hostile: the tag moves to another digest after locking. Loading reads
/// the lock and the store only, so the host keeps the locked component;
/// a new pull of the same reference is refused unless `--update`. Held by
/// the `TagMoved` check in `Client::pull` (and by loading never touching
/// the network).
#[test]
fn a_tag_moved_after_locking_is_never_followed() {
    let registry = Registry::start();
    let dir = TempDir::new("oci-moved");
    let store = Store::new(dir.path());
    let reference = parse(&registry.reference("tools/get_job_status:v1"));
    let client = client(&reference);
    let first = component("get_job_status");
    let locked = block_on(async {
        client.push(&reference, &first).await.unwrap();
        client
            .pull(&reference, "get_job_status", &store, &TrustPolicy::default(), false, &describe)
            .await
            .unwrap()
    });
    // The next version: the same tool, other bytes (a custom section added).
    let mut next = first.clone();
    next.extend_from_slice(&[0, 5, 4, b'n', b'e', b'x', b't']);
    let moved = block_on(client.push(&reference, &next)).unwrap();
    assert_ne!(moved, locked.manifest_digest);

    let host = Host::new(config_for(dir.path(), false, &[])).unwrap();
    let info = host.tools().next().unwrap();
    assert_eq!(info.descriptor.name, "get_job_status");
    assert_eq!(format!("sha256:{}", info.sha256), locked.layer_digest.to_string());

    let again = block_on(client.pull(
        &reference,
        "get_job_status",
        &store,
        &TrustPolicy::default(),
        false,
        &describe,
    ));
    match again {
        Err(RegistryError::TagMoved { locked: was, now, .. }) => {
            assert_eq!(was, locked.manifest_digest);
            assert_eq!(now, moved);
        }
        other => panic!("expected TagMoved, got {other:?}"),
    }
    assert_eq!(LockFile::read(&store.lock_path()).unwrap().get("get_job_status").unwrap(), &locked);
    let updated =
        block_on(client.pull(&reference, "get_job_status", &store, &TrustPolicy::default(), true, &describe))
            .unwrap();
    assert_eq!(updated.manifest_digest, moved);

    // A tag moved to another tool: even --update keeps the lock as it is.
    let other = block_on(client.push(&reference, &component("suggest_posting_windows"))).unwrap();
    let refused =
        block_on(client.pull(&reference, "get_job_status", &store, &TrustPolicy::default(), true, &describe));
    assert!(matches!(refused, Err(RegistryError::NotTheDeclaredTool { .. })), "{refused:?}");
    let kept = LockFile::read(&store.lock_path()).unwrap().get("get_job_status").unwrap().clone();
    assert_eq!((kept.manifest_digest, other == moved), (moved, false));
}

/// Hostile: a signature by a key the policy does not trust is refused on
/// pull, before the component is downloaded, and on load, before it is
/// compiled. Held by `cosign::verify` trying only the policy's keys.
#[test]
fn a_signature_by_an_untrusted_key_is_refused() {
    let registry = Registry::start();
    let dir = TempDir::new("oci-untrusted");
    let store = Store::new(dir.path());
    let reference = parse(&registry.reference("tools/get_job_status:v1"));
    let client = client(&reference);
    let stranger = PrivateKey::generate(Algorithm::EcdsaP256).unwrap();
    let trusted = PrivateKey::generate(Algorithm::Ed25519).unwrap();
    block_on(async {
        client.push(&reference, &component("get_job_status")).await.unwrap();
        client.sign(&reference, &stranger).await.unwrap();
    });
    let policy = TrustPolicy::with_keys(true, vec![trusted.public().clone()]);
    let pulled = block_on(client.pull(&reference, "get_job_status", &store, &policy, false, &describe));
    assert_eq!(refusal(pulled), Refusal::UntrustedKey { count: 1 });
    assert!(!store.lock_path().exists(), "nothing is locked");

    // Signed by the trusted key too: the pull succeeds, and the trusted
    // signer is recorded.
    block_on(client.sign(&reference, &trusted)).unwrap();
    let entry =
        block_on(client.pull(&reference, "get_job_status", &store, &policy, false, &describe)).unwrap();
    assert_eq!(entry.signer.as_deref(), Some(trusted.public().fingerprint()));
    let key_file = write_key(dir.path(), "trusted", &trusted);
    Host::new(config_for(dir.path(), true, &[key_file])).unwrap();

    // The same store under a policy trusting only the stranger... whose
    // signature is there too: it verifies, and names the stranger.
    let stranger_file = write_key(dir.path(), "stranger", &stranger);
    let host = Host::new(config_for(dir.path(), true, &[stranger_file])).unwrap();
    let signer = host.tools().next().unwrap().provenance.as_ref().unwrap().signer.clone();
    assert_eq!(signer.as_deref(), Some(stranger.public().fingerprint()));

    // A third key trusts neither: refused at load, naming the reason.
    let third = PrivateKey::generate(Algorithm::EcdsaP256).unwrap();
    let third_file = write_key(dir.path(), "third", &third);
    let reason = unverified(Host::new(config_for(dir.path(), true, &[third_file])));
    assert!(reason.contains("verify with no key trusted"), "{reason}");
}

/// The trust config of the two tests below: `tools/*` of `registry`
/// trusts `tools.pub`, the plugin `get_job_status` only `jobs.pub`.
fn trust_by_tool(dir: &Path, registry: &str) -> PathBuf {
    let config = dir.join("harmonia.toml");
    std::fs::write(
        &config,
        format!(
            "[plugins]\nbuiltin = false\nlock = \"plugins/plugins.lock\"\n[plugins.trust]\nrequire_signatures = true\n\
             [plugins.trust.repositories.\"{registry}/tools/*\"]\nkeys = [\"tools.pub\"]\n\
             [plugins.trust.plugins.get_job_status]\nkeys = [\"jobs.pub\"]\n"
        ),
    )
    .unwrap();
    config
}

/// Hostile: `[plugins.trust.plugins.get_job_status]` lets only `jobs.pub`
/// sign `get_job_status`. A component whose descriptor says
/// `get_job_status`, signed only by the key trusted for `tools/*`, is
/// pushed as `tools/weekly_digest`: pulled without `--name` it would be
/// locked as `weekly_digest`, judged by the `tools/*` rule, and serve
/// `get_job_status`. Refused at pull, naming both names and the fix,
/// nothing locked; pulled as `--name get_job_status`, its own rule
/// decides and refuses the signature; once `jobs.pub` signed it too, it
/// is pulled, verified and loaded. Held by `store::check_declared` in
/// `Client::pull`.
#[test]
fn a_component_declaring_another_tool_than_its_lock_name_is_refused_at_pull() {
    let registry = Registry::start();
    let dir = TempDir::new("oci-declared-pull");
    for key in ["tools", "jobs"] {
        succeed(harmonia(&["plugin", "keygen", "--out"]).arg(dir.path().join(key)));
    }
    let reference = registry.reference("tools/weekly_digest:v1");
    succeed(harmonia(&["plugin", "push"]).arg(component_file(dir.path(), "get_job_status")).arg(&reference));
    succeed(harmonia(&["plugin", "sign", &reference, "--key"]).arg(dir.path().join("tools.key")));
    let config = trust_by_tool(dir.path(), &format!("127.0.0.1:{}", registry.port));
    let pull = |extra: &[&str]| {
        harmonia(&["plugin", "pull", &reference, "--config"]).arg(&config).args(extra).output().unwrap()
    };

    let output = pull(&[]);
    let shown = text(&output);
    assert_eq!(output.status.code(), Some(1), "{shown}");
    for named in ["`weekly_digest`", "`get_job_status`", "--name get_job_status"] {
        assert!(shown.contains(named), "the refusal does not name {named}: {shown}");
    }
    assert!(!dir.path().join("plugins/plugins.lock").exists(), "nothing locked: {shown}");

    let output = pull(&["--name", "get_job_status"]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    assert!(text(&output).contains("verify with no key trusted"), "{}", text(&output));
    assert!(!dir.path().join("plugins/plugins.lock").exists(), "nothing locked");

    succeed(harmonia(&["plugin", "sign", &reference, "--key"]).arg(dir.path().join("jobs.key")));
    let pulled = succeed(
        harmonia(&["plugin", "pull", &reference, "--name", "get_job_status", "--config"]).arg(&config),
    );
    assert!(pulled.contains("locked get_job_status"), "{pulled}");
    succeed(harmonia(&["plugin", "verify", "--config"]).arg(&config));
    let host = Host::new(HostConfig::from_file(&config).unwrap()).unwrap();
    assert!(host.descriptor("get_job_status").is_some());
}

/// Hostile: a lock an earlier harmonia wrote after such a pull:
/// `weekly_digest`, signed by the key trusted for `tools/*`, whose
/// component declares `get_job_status`, which only `jobs.pub` may sign.
/// `plugin verify` refuses it and the host refuses to load it, each
/// naming both names and how to fix the lock. Held by
/// `store::check_declared` in `plugin verify` and in the host's load.
#[test]
fn a_lock_entry_named_for_another_tool_than_its_component_is_refused_at_verify_and_load() {
    use harmonia_registry::cosign::payload;
    let dir = TempDir::new("oci-declared-lock");
    let tools = PrivateKey::generate(Algorithm::EcdsaP256).unwrap();
    write_key(dir.path(), "tools", &tools);
    write_key(dir.path(), "jobs", &PrivateKey::generate(Algorithm::EcdsaP256).unwrap());
    let config = trust_by_tool(dir.path(), "127.0.0.1:5000");
    let store = Store::new(&dir.path().join("plugins"));
    let real = component("get_job_status");
    let manifest =
        Manifest::for_component(&harmonia_registry::manifest::wasm_config(&real), &real).to_bytes();
    let (manifest_digest, layer_digest) = (store.write(&manifest).unwrap(), store.write(&real).unwrap());
    let signed = payload("127.0.0.1:5000/tools/weekly_digest", &manifest_digest);
    let signature = base64::engine::general_purpose::STANDARD.encode(tools.sign(&signed));
    store.write_signatures(&manifest_digest, &[StoredSignature::new(&signed, &signature)]).unwrap();
    let mut lock = LockFile::default();
    lock.upsert(harmonia_registry::LockEntry {
        name: "weekly_digest".into(),
        reference: "oci://127.0.0.1:5000/tools/weekly_digest:v1".into(),
        manifest_digest,
        layer_digest,
        signer: Some(tools.public().fingerprint().to_owned()),
    });
    lock.write(&store.lock_path()).unwrap();
    let fix = ["`weekly_digest`", "`get_job_status`", "--name get_job_status", "plugins.lock"];

    let output = harmonia(&["plugin", "verify", "--config"]).arg(&config).output().unwrap();
    let shown = text(&output);
    assert_eq!(output.status.code(), Some(1), "{shown}");
    for named in fix {
        assert!(shown.contains(named), "verify does not name {named}: {shown}");
    }

    let reason = unverified(Host::new(HostConfig::from_file(&config).unwrap()));
    for named in fix {
        assert!(reason.contains(named), "the load does not name {named}: {reason}");
    }
}

/// Hostile: a valid signature by a trusted key, over another digest,
/// attached to this one. Held by the payload's digest check in
/// `cosign::verify`.
#[test]
fn a_valid_signature_over_another_digest_is_refused() {
    let registry = Registry::start();
    let dir = TempDir::new("oci-other-digest");
    let store = Store::new(dir.path());
    let signed = parse(&registry.reference("tools/a:v1"));
    let target = parse(&registry.reference("tools/a:v2"));
    let client = client(&signed);
    let key = PrivateKey::generate(Algorithm::EcdsaP256).unwrap();
    let (signed_digest, target_digest) = block_on(async {
        let signed_digest = client.push(&signed, &component("get_job_status")).await.unwrap();
        let target_digest = client.push(&target, &component("suggest_posting_windows")).await.unwrap();
        client.sign(&signed, &key).await.unwrap();
        // Copy the signature of v1 onto v2, as an attacker with push
        // rights (but not the key) can.
        let stolen = client.signatures(&signed, &signed_digest).await.unwrap().remove(0);
        let payload = base64::engine::general_purpose::STANDARD.decode(&stolen.payload).unwrap();
        client.attach(&target, &target_digest, &payload, &stolen.signature).await.unwrap();
        (signed_digest, target_digest)
    });
    let policy = TrustPolicy::with_keys(true, vec![key.public().clone()]);
    match refusal(block_on(client.pull(
        &target,
        "suggest_posting_windows",
        &store,
        &policy,
        false,
        &describe,
    ))) {
        Refusal::OtherDigest { signed, expected, .. } => {
            assert_eq!(signed, signed_digest.to_string());
            assert_eq!(expected, target_digest.to_string());
        }
        other => panic!("expected OtherDigest, got {other:?}"),
    }
}

/// Hostile: the stored component is swapped after it was pulled and
/// loaded once (so the precompiled cache holds it). The next load refuses
/// before the cache or the compiler sees the new bytes. Held by
/// `Store::read`'s digest check. And a plain file is refused when
/// signatures are required.
#[test]
fn a_swapped_component_never_runs_even_from_the_cache() {
    let registry = Registry::start();
    let dir = TempDir::new("oci-swapped");
    let store = Store::new(dir.path());
    let reference = parse(&registry.reference("tools/get_job_status:v1"));
    let client = client(&reference);
    let key = PrivateKey::generate(Algorithm::Ed25519).unwrap();
    let entry = block_on(async {
        client.push(&reference, &component("get_job_status")).await.unwrap();
        client.sign(&reference, &key).await.unwrap();
        client
            .pull(
                &reference,
                "get_job_status",
                &store,
                &TrustPolicy::with_keys(true, vec![key.public().clone()]),
                false,
                &describe,
            )
            .await
    })
    .unwrap();
    let key_file = write_key(dir.path(), "ci", &key);
    let config = config_for(dir.path(), true, std::slice::from_ref(&key_file));
    let host = Host::new(config.clone()).unwrap();
    let envelope = host.call("get_job_status", r#"{"job_id": " "}"#, &CallContext::default()).unwrap();
    assert_eq!(envelope.error.unwrap().code, "invalid_job_id");

    let blob = dir.path().join("oci/sha256").join(entry.layer_digest.hex());
    std::fs::write(&blob, component("suggest_posting_windows")).unwrap();
    let reason = unverified(Host::new(config.clone()));
    assert!(reason.contains("changed after it was pulled"), "{reason}");

    let mut plain = config_for(dir.path(), true, &[key_file]);
    plain.plugins.lock = None;
    plain.plugins.files = vec![component_file(dir.path(), "get_job_status")];
    let reason = unverified(Host::new(plain));
    assert!(reason.contains("require_signatures"), "{reason}");
}

// ---- a registry that misbehaves -------------------------------------------

/// A scripted registry serving one component manifest at `repo:v1`.
struct Fake {
    server: Loopback,
}

impl Fake {
    fn start() -> Self {
        let server = Loopback::start();
        server.route("/v2/", Reply::Json(200, "{}".into()));
        Self { server }
    }

    fn host(&self) -> String {
        self.server.base_url().trim_start_matches("http://").to_owned()
    }

    fn reference(&self) -> OciReference {
        parse(&format!("oci://{}/tools/t:v1", self.host()))
    }

    /// Serve `manifest` for the tag and `blob` under `digest`.
    fn serve(&self, manifest: &Manifest, digest: &Digest, blob: Reply) {
        self.server
            .route("/v2/tools/t/manifests/v1", Reply::Raw(200, manifest_headers(), manifest.to_bytes()));
        self.server.route(&format!("/v2/tools/t/blobs/{digest}"), blob);
    }

    fn blob_requests(&self) -> usize {
        self.server.requests().iter().filter(|request| request.target.contains("/blobs/")).count()
    }
}

fn manifest_headers() -> Vec<String> {
    vec![format!("content-type: {}", harmonia_registry::manifest::OCI_MANIFEST_MEDIA_TYPE)]
}

fn short_client(reference: &OciReference, deadline: Duration) -> Client {
    Client::new(reference, Options { deadline, ..Options::default() }).unwrap()
}

fn fake_pull(
    fake: &Fake,
    deadline: Duration,
) -> (Result<harmonia_registry::LockEntry, RegistryError>, TempDir) {
    let dir = TempDir::new("oci-fake");
    let reference = fake.reference();
    let result = block_on(short_client(&reference, deadline).pull(
        &reference,
        "get_job_status",
        &Store::new(dir.path()),
        &TrustPolicy::default(),
        false,
        &describe,
    ));
    (result, dir)
}

/// Hostile: the manifest names a layer digest, the registry serves other
/// bytes for it. Held by the digest check on every download (`blob`; the
/// client crate checks too).
#[test]
fn a_layer_that_does_not_match_its_digest_is_refused() {
    let fake = Fake::start();
    let real = component("get_job_status");
    let manifest = Manifest::for_component(b"{}", &real);
    let digest = Digest::of(&real);
    let mut other = real.clone();
    other[100] ^= 1;
    fake.serve(&manifest, &digest, Reply::Raw(200, Vec::new(), other));
    let (result, dir) = fake_pull(&fake, Duration::from_secs(10));
    assert!(matches!(result, Err(RegistryError::LayerMismatch { .. })), "{result:?}");
    assert!(!dir.path().join("oci/sha256").join(digest.hex()).exists(), "nothing stored");
}

/// Hostile: a huge layer, declared (refused before any byte is fetched)
/// or undeclared (the download is cut at the declared size); a huge
/// manifest. Held by the size checks in `pull`, the bounded sink in
/// `blob` and the manifest bound in `resolve`.
#[test]
fn huge_layers_and_manifests_are_refused_with_a_clear_error() {
    let fake = Fake::start();
    let real = component("get_job_status");
    let mut manifest = Manifest::for_component(b"{}", &real);
    let digest = Digest::of(&real);
    manifest.layers[0].size = 64 << 30;
    fake.serve(&manifest, &digest, Reply::Raw(200, Vec::new(), real.clone()));
    let (result, _dir) = fake_pull(&fake, Duration::from_secs(10));
    let error = result.unwrap_err();
    assert!(matches!(error, RegistryError::TooLarge { .. }), "{error}");
    assert!(error.to_string().contains("larger than the limit"), "{error}");
    assert_eq!(fake.blob_requests(), 0, "nothing was downloaded");

    // Declared small, served endless.
    let fake = Fake::start();
    let manifest = Manifest::for_component(b"{}", &real);
    fake.serve(&manifest, &digest, Reply::Oversized(512 << 20));
    let started = Instant::now();
    let (result, _dir) = fake_pull(&fake, Duration::from_secs(10));
    assert!(matches!(result, Err(RegistryError::TooLarge { .. })), "{result:?}");
    assert!(started.elapsed() < Duration::from_secs(5), "cut at the declared size, not read to the end");

    // A manifest past 4 MiB.
    let fake = Fake::start();
    fake.server.route("/v2/tools/t/manifests/v1", Reply::Oversized(5 << 20));
    let (result, _dir) = fake_pull(&fake, Duration::from_secs(10));
    let error = result.unwrap_err();
    assert!(matches!(error, RegistryError::TooLarge { .. }), "{error}");
    assert!(error.to_string().contains("manifest"), "{error}");
}

/// Hostile: a manifest or layer larger than its bound, whose registry then
/// stalls (or trickles it: the deadline would end the pull, having read
/// it all into memory). Refused as the bytes arrive: at a `Content-Length`
/// past the bound before any body is read, else at the first chunk past
/// it, never at the deadline. Held by the bounded reads in
/// `registry/src/download.rs`.
#[test]
fn a_huge_manifest_or_layer_is_refused_as_it_arrives_not_at_the_deadline() {
    const MANIFEST_BOUND: usize = harmonia_registry::manifest::MAX_MANIFEST_BYTES as usize;
    for (reply, shape) in [
        (Reply::Stalls(None, MANIFEST_BOUND + 1), "no length, one byte past the bound, then silence"),
        (Reply::Stalls(Some(1 << 30), 1), "a declared GiB, one byte, then silence"),
    ] {
        let fake = Fake::start();
        fake.server.route("/v2/tools/t/manifests/v1", reply);
        let (result, _dir) = fake_pull(&fake, Duration::from_secs(30));
        let error = result.unwrap_err();
        assert!(matches!(error, RegistryError::TooLarge { .. }), "{shape}: {error}");
        assert!(error.to_string().contains("manifest") && error.to_string().contains("limit"), "{error}");
    }
    // A layer declared small whose download says it is a GiB, then stalls.
    let fake = Fake::start();
    let real = component("get_job_status");
    fake.serve(&Manifest::for_component(b"{}", &real), &Digest::of(&real), Reply::Stalls(Some(1 << 30), 1));
    let (result, dir) = fake_pull(&fake, Duration::from_secs(30));
    let error = result.unwrap_err();
    assert!(matches!(error, RegistryError::TooLarge { .. }), "{error}");
    assert!(error.to_string().contains("more bytes than its declared"), "{error}");
    assert!(!dir.path().join("plugins.lock").exists(), "nothing locked");
}

/// Hostile: a registry that accepts the request and never answers. Held
/// by the deadline around every registry wait.
#[test]
fn a_stalled_registry_ends_at_the_deadline() {
    let fake = Fake::start();
    fake.server.route("/v2/tools/t/manifests/v1", Reply::NeverFinishes);
    let started = Instant::now();
    let (result, _dir) = fake_pull(&fake, Duration::from_secs(1));
    let error = result.unwrap_err();
    assert!(matches!(error, RegistryError::Deadline { .. }), "{error}");
    assert!(error.to_string().contains("did not answer within 1 s"), "{error}");
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());

    // A stalled blob, after a prompt manifest.
    let fake = Fake::start();
    let real = component("get_job_status");
    fake.serve(&Manifest::for_component(b"{}", &real), &Digest::of(&real), Reply::NeverFinishes);
    let (result, _dir) = fake_pull(&fake, Duration::from_secs(1));
    assert!(matches!(result, Err(RegistryError::Deadline { .. })), "{result:?}");
}

/// Writes a Docker config holding `user:password` for `registry`.
fn docker_config(dir: &Path, registry: &str, user: &str, password: &str) -> PathBuf {
    let auth = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    let docker = dir.join("docker");
    std::fs::create_dir_all(&docker).unwrap();
    std::fs::write(
        docker.join("config.json"),
        format!(r#"{{"auths": {{"{registry}": {{"auth": "{auth}"}}}}}}"#),
    )
    .unwrap();
    docker
}

/// Hostile: the registry redirects the component download to another
/// host. Refused by default, before any request reaches that host (held
/// by the redirect rule in `registry/src/download.rs`); with the host in
/// `[plugins] redirect_hosts`, followed, but the credentials for the
/// registry never reach it and what it serves is refused unless it is the
/// signed digest's bytes. The credentials never appear in the command's
/// output or its most verbose log. Held by the credentials going to the
/// registry alone (and reqwest dropping `Authorization` on a cross-host
/// redirect), the digest check, and no message ever formatting a
/// credential.
#[test]
fn a_redirect_to_another_host_is_refused_unless_allowed_and_never_gets_credentials() {
    const PASSWORD: &str = "s3cret-registry-password";
    let fake = Fake::start();
    fake.server.route(
        "/v2/",
        Reply::Raw(401, vec!["www-authenticate: Basic realm=\"fake\"".into()], b"{}".to_vec()),
    );
    let elsewhere = Loopback::start();
    let real = component("get_job_status");
    let digest = Digest::of(&real);
    let mut other = real.clone();
    other[7] ^= 1;
    elsewhere.route("/payload", Reply::Raw(200, Vec::new(), other));
    // Another host: `localhost`, not the registry's 127.0.0.1.
    let elsewhere_host = elsewhere.base_url().replace("http://127.0.0.1", "localhost");
    let location = format!("http://{elsewhere_host}/payload");
    fake.serve(&Manifest::for_component(b"{}", &real), &digest, Reply::Redirect(307, location));
    let dir = TempDir::new("oci-redirect");
    let docker = docker_config(dir.path(), &fake.host(), "ci", PASSWORD);
    let pull = |config: &Path| {
        let output = harmonia(&["plugin", "pull", &fake.reference().to_string(), "--dir"])
            .arg(dir.path().join("plugins"))
            .arg("--config")
            .arg(config)
            .env("DOCKER_CONFIG", &docker)
            .env("RUST_LOG", "trace")
            .output()
            .unwrap();
        let shown = text(&output);
        assert_eq!(output.status.code(), Some(1), "{shown}");
        let encoded = base64::engine::general_purpose::STANDARD.encode(format!("ci:{PASSWORD}"));
        assert!(!shown.contains(PASSWORD) && !shown.contains(&encoded), "a credential was shown:\n{shown}");
        shown
    };

    let refusing = dir.path().join("refusing.toml");
    std::fs::write(&refusing, "").unwrap();
    let shown = pull(&refusing);
    assert!(shown.contains("redirected") && shown.contains(&elsewhere_host), "{shown}");
    assert!(elsewhere.requests().is_empty(), "nothing reached the other host: {:?}", elsewhere.requests());
    assert!(!dir.path().join("plugins/plugins.lock").exists(), "nothing locked");

    let allowing = dir.path().join("allowing.toml");
    std::fs::write(&allowing, format!("[plugins]\nredirect_hosts = [\"{elsewhere_host}\"]\n")).unwrap();
    let shown = pull(&allowing);
    assert!(shown.contains("does not match its digest"), "{shown}");
    let sent: Vec<_> =
        fake.server.requests().into_iter().filter(|request| request.target.contains("/manifests/")).collect();
    assert!(
        !sent.is_empty()
            && sent.iter().all(|request| request
                .headers
                .get("authorization")
                .is_some_and(|value| value.starts_with("Basic "))),
        "the registry got the credentials: {sent:?}"
    );
    let redirected = elsewhere.requests();
    assert!(!redirected.is_empty(), "the allowed redirect was followed");
    assert!(
        redirected.iter().all(|request| !request.headers.contains_key("authorization")),
        "{redirected:?}"
    );
}

/// Hostile: a registry whose name only starts like a loopback address
/// (`127.evil.example`) is not loopback. It is reached over HTTPS only, so
/// neither a request nor the Docker config's credentials for it travel
/// over plain HTTP. The scripted server stands as the plain-HTTP proxy
/// (`HTTP_PROXY`) every plain-HTTP request would go through: it sees
/// none. Held by `OciReference::is_loopback` reading an IP address (or
/// `localhost`), and `Reader::new` refusing plain HTTP to anything else.
#[test]
fn a_name_that_only_looks_loopback_is_never_fetched_over_plain_http_nor_given_credentials() {
    const PASSWORD: &str = "s3cret-not-loopback";
    let proxy = Loopback::start();
    let dir = TempDir::new("oci-not-loopback");
    for registry in ["127.evil.example", "127.0.0.1.evil.example:5000", "localhost.evil.example"] {
        let docker = docker_config(dir.path(), registry, "ci", PASSWORD);
        let mut command = harmonia(&["plugin", "pull", &format!("oci://{registry}/tools/t:v1"), "--dir"]);
        command.arg(dir.path().join("plugins")).env("DOCKER_CONFIG", &docker);
        for name in ["HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"] {
            command.env_remove(name);
        }
        let output =
            command.env("HTTP_PROXY", proxy.base_url()).env("http_proxy", proxy.base_url()).output().unwrap();
        assert_eq!(output.status.code(), Some(1), "{registry}: {}", text(&output));
        assert!(!text(&output).contains(PASSWORD), "{}", text(&output));
        assert!(!dir.path().join("plugins/plugins.lock").exists(), "nothing locked");
    }
    let sent = proxy.requests();
    assert!(
        sent.is_empty(),
        "plain HTTP went out (with credentials: {}): {sent:?}",
        sent.iter().any(|request| request.headers.contains_key("authorization"))
    );
}

/// Hostile: a registry whose challenge sends the token exchange, and with
/// it the Docker config's credentials, to a plain-HTTP realm on another
/// host (`Bearer realm="http://token.evil.example/token"`). Refused
/// before the credentials go anywhere: the plain-HTTP proxy every request
/// to that realm would go through sees none. (The registry itself is on
/// loopback, so it is reached over plain HTTP and kept off the proxy.)
/// Held by `Client::authenticate`'s look at the challenge
/// (`challenge::plain_http_realm`) before the client's token exchange.
#[test]
fn credentials_are_never_sent_to_a_plain_http_token_realm() {
    const PASSWORD: &str = "s3cret-for-the-token-service";
    let fake = Fake::start();
    let challenge = r#"www-authenticate: Bearer realm="http://token.evil.example/token",service="fake""#;
    fake.server.route("/v2/", Reply::Raw(401, vec![challenge.into()], b"{}".to_vec()));
    let proxy = Loopback::start();
    let dir = TempDir::new("oci-plain-realm");
    let docker = docker_config(dir.path(), &fake.host(), "ci", PASSWORD);
    let mut command = harmonia(&["plugin", "pull", &fake.reference().to_string(), "--dir"]);
    command.arg(dir.path().join("plugins")).env("DOCKER_CONFIG", &docker);
    for name in ["HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"] {
        command.env_remove(name);
    }
    let output = command
        .env("HTTP_PROXY", proxy.base_url())
        .env("http_proxy", proxy.base_url())
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env("no_proxy", "127.0.0.1,localhost")
        .output()
        .unwrap();
    let shown = text(&output);
    assert_eq!(output.status.code(), Some(1), "{shown}");
    assert!(!shown.contains(PASSWORD), "{shown}");
    let sent = proxy.requests();
    assert!(
        sent.is_empty(),
        "the token exchange went out over plain HTTP (with credentials: {}): {sent:?}",
        sent.iter().any(|request| request.headers.contains_key("authorization"))
    );
    assert!(shown.contains("token.evil.example") && shown.contains("plain HTTP"), "{shown}");
}

/// Hostile: the manifest itself redirected to another host, or around in
/// a loop on the registry. Both refused with the typed error, nothing
/// read from the other host.
#[test]
fn a_manifest_redirected_off_the_registry_or_in_a_loop_is_refused() {
    let fake = Fake::start();
    let elsewhere = Loopback::start();
    let real = component("get_job_status");
    elsewhere.route(
        "/manifest",
        Reply::Raw(200, manifest_headers(), Manifest::for_component(b"{}", &real).to_bytes()),
    );
    let location = elsewhere.base_url().replace("127.0.0.1", "localhost") + "/manifest";
    fake.server.route("/v2/tools/t/manifests/v1", Reply::Redirect(302, location));
    let (result, _dir) = fake_pull(&fake, Duration::from_secs(30));
    let error = result.unwrap_err();
    assert!(matches!(error, RegistryError::Redirect { .. }), "{error}");
    assert!(elsewhere.requests().is_empty(), "{:?}", elsewhere.requests());

    let fake = Fake::start();
    let around = format!("{}/v2/tools/t/manifests/v1", fake.server.base_url());
    fake.server.route("/v2/tools/t/manifests/v1", Reply::Redirect(302, around));
    let (result, _dir) = fake_pull(&fake, Duration::from_secs(30));
    let error = result.unwrap_err();
    assert!(matches!(error, RegistryError::Redirect { .. }), "{error}");
    assert!(error.to_string().contains("redirects"), "{error}");
}

/// Hostile: anyone who can attach a signature puts, ahead of the one
/// trusted signature, a layer that is not a descriptor, a layer named
/// `sha256:zz`, one whose payload the registry does not have, one
/// declared past the payload bound, one whose payload is not its digest's
/// bytes, and 32 signatures by keys nobody trusts. The pull still finds
/// and accepts the trusted signature, and warns once per layer it
/// skipped, naming it. Held by `signature_layers::examined` (a malformed
/// layer is skipped, not fatal, within `MAX_SIGNATURE_LAYERS`) and by
/// `Client::signatures` skipping a payload it cannot read.
#[test]
fn malformed_and_untrusted_signatures_ahead_of_a_trusted_one_do_not_block_the_pull() {
    use harmonia_registry::cosign::{
        SIGNATURE_ANNOTATION, SIMPLE_SIGNING_MEDIA_TYPE, payload, signature_tag,
    };
    let fake = Fake::start();
    let real = component("get_job_status");
    let manifest = Manifest::for_component(b"{}", &real);
    let digest = Digest::of(&manifest.to_bytes());
    fake.serve(&manifest, &Digest::of(&real), Reply::Raw(200, Vec::new(), real.clone()));
    let reference = fake.reference();
    let signed = payload(&reference.repository_path(), &digest);
    fake.server.route(
        &format!("/v2/tools/t/blobs/{}", Digest::of(&signed)),
        Reply::Raw(200, Vec::new(), signed.clone()),
    );
    let layer = |key: &PrivateKey| {
        let signature = base64::engine::general_purpose::STANDARD.encode(key.sign(&signed));
        serde_json::json!({"mediaType": SIMPLE_SIGNING_MEDIA_TYPE, "digest": Digest::of(&signed).as_str(),
            "size": signed.len(), "annotations": {SIGNATURE_ANNOTATION: signature}})
    };
    let trusted = PrivateKey::generate(Algorithm::EcdsaP256).unwrap();
    let stranger = PrivateKey::generate(Algorithm::EcdsaP256).unwrap();
    let (missing, forged) = (Digest::of(b"no such payload"), Digest::of(b"forged payload"));
    fake.server.route(&format!("/v2/tools/t/blobs/{forged}"), Reply::Raw(200, Vec::new(), signed.clone()));
    let malformed = |digest: &str, size: u64| {
        let mut layer = layer(&trusted);
        layer["digest"] = serde_json::json!(digest);
        layer["size"] = serde_json::json!(size);
        layer
    };
    let mut layers = vec![
        serde_json::json!({"mediaType": 5, "digest": ["not", "a", "digest"]}),
        malformed("sha256:zz", 10),
        malformed(missing.as_str(), 10),
        malformed(Digest::of(&signed).as_str(), 1 << 40),
        malformed(forged.as_str(), signed.len() as u64),
    ];
    layers.extend((0..32).map(|_| layer(&stranger)));
    layers.push(layer(&trusted));
    let config = serde_json::to_vec(&serde_json::json!({})).unwrap();
    let signatures = serde_json::json!({"schemaVersion": 2,
        "mediaType": harmonia_registry::manifest::OCI_MANIFEST_MEDIA_TYPE,
        "config": {"mediaType": harmonia_registry::manifest::OCI_CONFIG_MEDIA_TYPE,
                   "digest": Digest::of(&config).as_str(), "size": config.len()},
        "layers": layers});
    fake.server.route(
        &format!("/v2/tools/t/manifests/{}", signature_tag(&digest)),
        Reply::Raw(200, manifest_headers(), serde_json::to_vec(&signatures).unwrap()),
    );

    let dir = TempDir::new("oci-poisoned");
    let key = write_key(dir.path(), "ci", &trusted);
    let config = dir.path().join("harmonia.toml");
    std::fs::write(
        &config,
        format!("[plugins.trust]\nrequire_signatures = true\nkeys = [\"{}\"]\n", key.display()),
    )
    .unwrap();
    let output = harmonia(&["plugin", "pull", &reference.to_string(), "--name", "get_job_status", "--dir"])
        .arg(dir.path().join("plugins"))
        .arg("--config")
        .arg(&config)
        .output()
        .unwrap();
    let shown = text(&output);
    assert_eq!(output.status.code(), Some(0), "{shown}");
    assert!(shown.contains(&format!("signer {}", trusted.public().fingerprint())), "{shown}");
    for named in ["sha256:zz", missing.as_str(), "1099511627776", forged.as_str(), "layer 1"] {
        assert!(shown.contains(named), "no warning names {named}: {shown}");
    }
    let lock = LockFile::read(&dir.path().join("plugins/plugins.lock")).unwrap();
    let entry = lock.get("get_job_status").expect("locked");
    assert_eq!(entry.signer.as_deref(), Some(trusted.public().fingerprint()));
    // The load reads the stored signatures: the trusted one verifies there too.
    let host = Host::new(config_for(&dir.path().join("plugins"), true, &[key])).unwrap();
    assert!(host.descriptor("get_job_status").is_some());
}

/// Bad input: every malformed reference is a one-line usage error.
#[test]
fn bad_references_are_usage_errors() {
    for reference in ["127.0.0.1:5000/t:v1", "oci://127.0.0.1:5000/t", "oci://h/T:v1", "oci://h/t@sha256:12"]
    {
        let output = harmonia(&["plugin", "pull", reference]).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{reference}: {}", text(&output));
        assert!(!text(&output).contains("panicked"));
    }
}

/// A descriptor with external URLs is never followed.
#[test]
fn a_layer_with_external_urls_is_refused() {
    let real = component("get_job_status");
    let mut manifest = Manifest::for_component(b"{}", &real);
    manifest.layers[0] =
        Descriptor { urls: Some(vec!["http://elsewhere/x".into()]), ..manifest.layers[0].clone() };
    let error = manifest.component_layer().unwrap_err();
    assert!(error.to_string().contains("external urls"), "{error}");
}

/// A session through `harmonia session` on a live store with `get_job_status`
/// pulled, signed and locked: each `tool_call` entry carries the component
/// digest, the manifest digest and the signer under the seal, and
/// `harmonia validate --submission --require-signer` accepts that signer
/// only.
#[test]
fn the_signer_is_in_every_sealed_tool_call_and_validate_can_require_it() {
    use std::io::Write;
    let registry = Registry::start();
    let dir = TempDir::new("oci-trace");
    let reference = parse(&registry.reference("tools/get_job_status:v1"));
    let client = client(&reference);
    let key = PrivateKey::generate(Algorithm::EcdsaP256).unwrap();
    let fingerprint = key.public().fingerprint().to_owned();
    let policy = TrustPolicy::with_keys(true, vec![key.public().clone()]);
    let entry = block_on(async {
        client.push(&reference, &component("get_job_status")).await.unwrap();
        client.sign(&reference, &key).await.unwrap();
        client
            .pull(
                &reference,
                "get_job_status",
                &Store::new(&dir.path().join("plugins")),
                &policy,
                false,
                &describe,
            )
            .await
    })
    .unwrap();
    write_key(dir.path(), "ci", &key);
    let document = dir.path().join("workspace.json");
    std::fs::write(&document, harmonia_host::capability::workspace::mock::DEMO_WORKSPACE_JSON).unwrap();
    succeed(
        harmonia(&["workspace", "import"]).arg(&document).arg("--db").arg(dir.path().join("harmonia.db")),
    );
    let config = dir.path().join("harmonia.toml");
    std::fs::write(
        &config,
        "[plugins]\nbuiltin = false\nlock = \"plugins/plugins.lock\"\n[plugins.trust]\nrequire_signatures = true\n\
         keys = [\"ci.pub\"]\n[workspace]\npath = \"harmonia.db\"\n[trace]\nkey_file = \"trace-key\"\n",
    )
    .unwrap();
    // Only the job-status skill: the other skills name tools not loaded here.
    let skills = dir.path().join("skills/job-status");
    std::fs::create_dir_all(&skills).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for file in std::fs::read_dir(root.join("skills/job-status")).unwrap() {
        let file = file.unwrap();
        std::fs::copy(file.path(), skills.join(file.file_name())).unwrap();
    }
    let mut child = harmonia(&["session", "--workspace", "ws_demo", "--config"])
        .arg(&config)
        .arg("--skills")
        .arg(dir.path().join("skills"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        let stdin = child.stdin.as_mut().unwrap();
        for request in [
            r#"{"op": "activate", "skill": "job-status"}"#,
            r#"{"op": "call", "tool": "get_job_status", "args": {"job_id": "job-42"}}"#,
            r#"{"op": "trace"}"#,
        ] {
            writeln!(stdin, "{request}").unwrap();
        }
    }
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let lines: Vec<serde_json::Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines[1]["status"], "success", "{}", lines[1]);
    let trace = lines[2]["trace"].clone();
    let call = &trace["entries"][1];
    assert_eq!(call["kind"], "tool_call");
    assert_eq!(call["componentDigest"], entry.layer_digest.as_str());
    assert_eq!(call["manifestDigest"], entry.manifest_digest.as_str());
    assert_eq!(call["signer"], fingerprint.as_str());

    let trace_file = dir.path().join("trace.json");
    std::fs::write(&trace_file, trace.to_string()).unwrap();
    let answer =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/catalogue/grounded-job-status/answer.json");
    let validate = |extra: &[&str]| {
        let output = harmonia(&["validate", "--json", "--config"])
            .arg(&config)
            .arg("--skills")
            .arg(dir.path().join("skills"))
            .arg("--trace")
            .arg(&trace_file)
            .arg("--answer")
            .arg(&answer)
            .args(extra)
            .output()
            .unwrap();
        let verdict: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap_or_default();
        (verdict, output.status.code().unwrap(), text(&output))
    };
    let (verdict, code, shown) = validate(&["--submission", "--require-signer", &fingerprint]);
    assert_eq!((verdict["accepted"].as_bool(), code), (Some(true), 0), "{shown}");
    let other = PrivateKey::generate(Algorithm::EcdsaP256).unwrap();
    let (verdict, code, shown) =
        validate(&["--submission", "--require-signer", other.public().fingerprint()]);
    assert_eq!(code, 1, "{shown}");
    assert_eq!(verdict["rule"], "component_signer", "{shown}");
    assert!(verdict["reason"].as_str().unwrap().contains("entry 2 (tool `get_job_status`)"), "{shown}");
    let (_, code, shown) = validate(&["--require-signer", &fingerprint]);
    assert_eq!(code, 2, "{shown}");
    assert!(shown.contains("needs --submission"), "{shown}");

    // The signer is sealed: changing it breaks the seal.
    let mut forged = trace.clone();
    forged["entries"][1]["signer"] = serde_json::json!(other.public().fingerprint());
    std::fs::write(&trace_file, forged.to_string()).unwrap();
    let (verdict, code, shown) =
        validate(&["--submission", "--require-signer", other.public().fingerprint()]);
    assert_eq!(code, 1, "{shown}");
    assert_eq!(verdict["rule"], "trace_unverified", "{shown}");
}

/// A foreign-language template built with its one command into `out`.
fn build_template(template: &str, world: &str, toolchain: &str, out: &Path) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    assert!(root.join(toolchain).exists(), "{toolchain} is missing: run scripts/install-test-deps.sh");
    let script = root.join("templates").join(template).join("build.sh");
    let output = Command::new(script).args(["--world", world]).arg(out).output().unwrap();
    assert!(output.status.success(), "{template}/build.sh: {}", text(&output));
    out.to_owned()
}

/// The README's walkthrough with a Python and a JavaScript plugin: each is
/// pushed, signed with a key made by `keygen`, pulled by tag into the
/// lock, and served by `harmonia serve --stdio` under
/// `require_signatures = true`, which calls both; the same server refuses
/// to start with a plain, unsigned component beside them.
#[test]
fn python_and_javascript_plugins_are_pushed_signed_pulled_and_served_under_required_signatures() {
    let registry = Registry::start();
    let dir = TempDir::new("oci-foreign");
    let python = build_template(
        "python-tool",
        "public",
        "target/test-deps/venv/bin/componentize-py",
        &dir.path().join("hn_top_story.wasm"),
    );
    let js = build_template(
        "js-tool",
        "workspace",
        "target/test-deps/node/node_modules/.bin/componentize-js",
        &dir.path().join("posts_by_weekday.wasm"),
    );
    let key = dir.path().join("ci");
    let fingerprint =
        succeed(harmonia(&["plugin", "keygen", "--out"]).arg(&key)).lines().next().unwrap().to_owned();
    let config = dir.path().join("harmonia.toml");
    std::fs::write(
        &config,
        "mock = true\n[plugins]\nlock = \"plugins/plugins.lock\"\n[plugins.trust]\nrequire_signatures = true\nkeys = [\"ci.pub\"]\n",
    )
    .unwrap();
    for (component, repository) in [(&python, "tools/hn_top_story:v1"), (&js, "tools/posts_by_weekday:v1")] {
        let reference = registry.reference(repository);
        succeed(harmonia(&["plugin", "push"]).arg(component).arg(&reference));
        succeed(harmonia(&["plugin", "sign", &reference, "--key"]).arg(key.with_extension("key")));
        succeed(harmonia(&["plugin", "pull", &reference, "--config"]).arg(&config));
    }
    let lock = LockFile::read(&dir.path().join("plugins/plugins.lock")).unwrap();
    for (name, component) in [("hn_top_story", &python), ("posts_by_weekday", &js)] {
        let entry = lock.get(name).unwrap_or_else(|| panic!("{name} is locked"));
        assert_eq!(entry.signer.as_deref(), Some(fingerprint.as_str()), "{name}");
        assert_eq!(entry.layer_digest, Digest::of(&std::fs::read(component).unwrap()), "{name}");
    }

    // The templates name skills of their own (`hn-digest`,
    // `posting-schedule`), which the built-in skill files do not allow:
    // served without skills.
    let skills = dir.path().join("skills");
    std::fs::create_dir_all(&skills).unwrap();
    let serve = |extra: &[&Path]| {
        let mut command = harmonia(&["serve", "--stdio", "--workspace", "ws_demo", "--quiet", "--config"]);
        command.arg(&config).arg("--skills").arg(&skills).env("XDG_DATA_HOME", dir.path());
        for path in extra {
            command.arg("--plugin").arg(path);
        }
        command
    };
    let (mut client, _) = crate::support::StdioClient::start(&mut serve(&[]));
    let tools = client.tools();
    assert!(tools.contains(&"hn_top_story".to_owned()) && tools.contains(&"posts_by_weekday".to_owned()));
    for (tool, arguments) in
        [("hn_top_story", serde_json::json!({})), ("posts_by_weekday", serde_json::json!({"min_likes": 0}))]
    {
        let envelope = client.call(tool, arguments);
        assert_eq!(envelope["status"], "success", "{tool}: {envelope}");
    }
    drop(client);

    // require_signatures holds: a plain file is refused at start.
    let plain = component_file(dir.path(), "get_job_status");
    let refused = serve(&[&plain]).stdin(Stdio::null()).output().unwrap();
    assert!(!refused.status.success());
    assert!(text(&refused).contains("require_signatures"), "{}", text(&refused));
}

/// Push, sign keyless as `cosign sign` does in CI (a fake Fulcio and
/// Rekor, the signature layer on the real registry), and attach it.
fn keyless_sign(
    client: &Client,
    reference: &OciReference,
    fulcio: &sigstore::Fulcio,
    rekor: &sigstore::Rekor,
    spec: &sigstore::LeafSpec,
) -> Digest {
    block_on(async {
        let (digest, _) = client.resolve(reference).await.unwrap();
        let payload = harmonia_registry::cosign::payload(&reference.repository_path(), &digest);
        let keyless = sigstore::Keyless::sign(fulcio, rekor, spec, &payload, sigstore::LOGGED_AT);
        let signature = StoredSignature {
            certificate: Some(keyless.certificate),
            chain: Some(keyless.chain),
            bundle: keyless.bundle,
            ..StoredSignature::new(&keyless.payload, &keyless.signature)
        };
        client.attach_signature(reference, &digest, &signature).await.unwrap();
        digest
    })
}

/// The keyless path end to end: a component pushed to the real registry
/// and signed keyless by a CI workflow is pulled under
/// `require_signatures = true` and an identity rule for its repository,
/// loaded (long after the ten-minute certificate expired: the log's time
/// is what counts), called in a session whose sealed trace names the
/// identity, and `validate --submission --require-signer` accepts that
/// identity and refuses another. Hostile, on the same registry: a
/// component signed keyless by another workflow is refused at pull
/// naming the certificate's subject; a stored signature whose Rekor
/// bundle was removed after the pull is refused at the next load.
#[test]
fn a_keyless_signature_by_a_trusted_identity_is_pulled_loaded_traced_and_required() {
    use std::io::Write;
    let registry = Registry::start();
    let dir = TempDir::new("oci-keyless");
    let (fulcio, rekor) = (sigstore::Fulcio::new(), sigstore::Rekor::new());
    let window = sigstore::default_window();
    std::fs::create_dir_all(dir.path().join("sigstore")).unwrap();
    std::fs::write(
        dir.path().join("sigstore/trusted_root.json"),
        sigstore::trusted_root(&fulcio, &rekor, window, window),
    )
    .unwrap();
    let reference = parse(&registry.reference("tools/get_job_status:v1"));
    let client = client(&reference);
    block_on(client.push(&reference, &component("get_job_status"))).unwrap();
    let digest = keyless_sign(&client, &reference, &fulcio, &rekor, &sigstore::LeafSpec::workflow());
    let identity = format!("identity:{}#{}", sigstore::GITHUB_ISSUER, sigstore::WORKFLOW);

    let document = dir.path().join("workspace.json");
    std::fs::write(&document, harmonia_host::capability::workspace::mock::DEMO_WORKSPACE_JSON).unwrap();
    succeed(
        harmonia(&["workspace", "import"]).arg(&document).arg("--db").arg(dir.path().join("harmonia.db")),
    );
    let config = dir.path().join("harmonia.toml");
    std::fs::write(
        &config,
        format!(
            "[plugins]\nbuiltin = false\nlock = \"plugins/plugins.lock\"\n[plugins.trust]\nrequire_signatures = true\n\
             trusted_root = \"sigstore/trusted_root.json\"\n\
             [plugins.trust.repositories.\"127.0.0.1:{}/tools/*\"]\n\
             identities = [{{ subject_regex = \"https://github.com/acme/tools/.*\", issuer = \"{}\" }}]\n\
             [workspace]\npath = \"harmonia.db\"\n[trace]\nkey_file = \"trace-key\"\n",
            registry.port,
            sigstore::GITHUB_ISSUER
        ),
    )
    .unwrap();
    let pulled = succeed(harmonia(&["plugin", "pull", &reference.to_string(), "--config"]).arg(&config));
    assert!(pulled.contains(&identity), "{pulled}");
    let lock = LockFile::read(&dir.path().join("plugins/plugins.lock")).unwrap();
    let entry = lock.get("get_job_status").expect("locked").clone();
    assert_eq!(
        (entry.manifest_digest.clone(), entry.signer.as_deref()),
        (digest.clone(), Some(identity.as_str()))
    );
    let verified = succeed(harmonia(&["plugin", "verify", "--config"]).arg(&config));
    assert!(verified.contains(&identity), "{verified}");

    // Another workflow of another organisation, genuinely logged: refused.
    let stranger = parse(&registry.reference("tools/stranger:v1"));
    block_on(client.push(&stranger, &component("get_job_status"))).unwrap();
    let evil = "https://github.com/evil/tools/.github/workflows/release.yml@refs/heads/main";
    keyless_sign(&client, &stranger, &fulcio, &rekor, &sigstore::LeafSpec::of(evil, sigstore::GITHUB_ISSUER));
    let output =
        harmonia(&["plugin", "pull", &stranger.to_string(), "--config"]).arg(&config).output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    assert!(
        text(&output).contains(evil) && text(&output).contains("not an identity trusted"),
        "{}",
        text(&output)
    );

    // A session over the keyless-signed component: its signer is sealed in the trace.
    let skills = dir.path().join("skills/job-status");
    std::fs::create_dir_all(&skills).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for file in std::fs::read_dir(root.join("skills/job-status")).unwrap() {
        let file = file.unwrap();
        std::fs::copy(file.path(), skills.join(file.file_name())).unwrap();
    }
    let mut child = harmonia(&["session", "--workspace", "ws_demo", "--config"])
        .arg(&config)
        .arg("--skills")
        .arg(dir.path().join("skills"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        let stdin = child.stdin.as_mut().unwrap();
        for request in [
            r#"{"op": "activate", "skill": "job-status"}"#,
            r#"{"op": "call", "tool": "get_job_status", "args": {"job_id": "job-42"}}"#,
            r#"{"op": "trace"}"#,
        ] {
            writeln!(stdin, "{request}").unwrap();
        }
    }
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let lines: Vec<serde_json::Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines[1]["status"], "success", "{}", lines[1]);
    let trace = lines[2]["trace"].clone();
    let call = &trace["entries"][1];
    assert_eq!(call["kind"], "tool_call");
    assert_eq!(call["manifestDigest"], entry.manifest_digest.as_str());
    assert_eq!(call["signer"], identity.as_str());

    let trace_file = dir.path().join("trace.json");
    std::fs::write(&trace_file, trace.to_string()).unwrap();
    let answer =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/catalogue/grounded-job-status/answer.json");
    let validate = |signer: &str| {
        let output =
            harmonia(&["validate", "--json", "--submission", "--require-signer", signer, "--config"])
                .arg(&config)
                .arg("--skills")
                .arg(dir.path().join("skills"))
                .arg("--trace")
                .arg(&trace_file)
                .arg("--answer")
                .arg(&answer)
                .output()
                .unwrap();
        let verdict: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap_or_default();
        (verdict, output.status.code().unwrap(), text(&output))
    };
    let (verdict, code, shown) = validate(&identity);
    assert_eq!((verdict["accepted"].as_bool(), code), (Some(true), 0), "{shown}");
    for other in [
        format!("identity:{}#{evil}", sigstore::GITHUB_ISSUER),
        format!("identity:https://accounts.google.com#{}", sigstore::WORKFLOW),
    ] {
        let (verdict, code, shown) = validate(&other);
        assert_eq!((code, verdict["rule"].as_str()), (1, Some("component_signer")), "{shown}");
    }

    // The bundle removed from the stored signature: refused at the next load, offline.
    let stored = dir.path().join(format!("plugins/oci/signatures/{}.json", digest.hex()));
    let mut signatures: Vec<StoredSignature> =
        serde_json::from_slice(&std::fs::read(&stored).unwrap()).unwrap();
    assert!(signatures[0].bundle.is_some());
    signatures[0].bundle = None;
    std::fs::write(&stored, serde_json::to_vec(&signatures).unwrap()).unwrap();
    let output = harmonia(&["plugin", "verify", "--config"]).arg(&config).output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    assert!(text(&output).contains("without its Rekor bundle"), "{}", text(&output));
}
