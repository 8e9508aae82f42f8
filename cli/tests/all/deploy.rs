//! The deployment files under `deploy/` held to what `harmonia serve`
//! reads, offline:
//! - every Kubernetes manifest passes Kubernetes' own JSON schemas, strict
//!   (unknown fields refused), for the oldest and the newest release this
//!   deployment claims ([`KUBERNETES`]), with kubernetes-validate from
//!   `scripts/install-test-deps.sh`;
//! - the Deployment's args name the config files where the ConfigMap is
//!   mounted; those files parse with the server's own parsers, and every
//!   file they name (the session key, the database password, the tokens,
//!   the trace key) is a key of the Secret mounted at that very path, the
//!   trace key as a plain file (`subPath`), each with the mode the kubelet
//!   gives it under the pod's `fsGroup` and that the server accepts; the
//!   component cache is a directory below an emptyDir;
//! - the `--http` port is the container's, the Service's target and the
//!   probes'; the probes ask `/healthz` and `/readyz` with a `Host` the
//!   server's own check lets in, and so do the Service's DNS names in the
//!   kustomization's namespace; the grace period outlasts the preStop
//!   pause and the server's drain limit;
//! - the pod runs as the image's non-root user, locked down, and the image
//!   (`deploy/Dockerfile`) exposes the port and runs the Deployment's args;
//! - the Secret template's placeholders are refused by the server (it
//!   fails closed if applied unchanged); the kustomization lists every
//!   manifest; every pod's database pool fits PostgreSQL's connections.
//!
//! Building the image and applying the manifests are not tested: no
//! container engine or cluster runs here. The manifests are read as JSON
//! through the venv's PyYAML (kubernetes-validate's own dependency), which
//! reads YAML 1.1 as Kubernetes does (`0440` is octal).

use crate::support::repo;
use axum::http::{HeaderMap, HeaderValue, Uri, header};
use harmonia_host::HostConfig;
use harmonia_host::config::WorkspaceSourceKind;
use harmonia_host::liaison::signing::TraceSigner;
use harmonia_serve::auth::tokens::TokenFile;
use harmonia_serve::config::ServeConfig;
use harmonia_serve::http::DRAIN_LIMIT;
use harmonia_serve::http::origin::Addressing;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The Kubernetes releases whose schemas the manifests must pass: the
/// oldest this deployment claims (PodDisruptionBudget's
/// `unhealthyPodEvictionPolicy` is GA from 1.31) and the newest
/// kubernetes-validate 1.37.0 ships.
const KUBERNETES: [&str; 2] = ["1.31.0", "1.37.0"];

/// PostgreSQL's default `max_connections` (100) less its
/// `superuser_reserved_connections` (3): what every pod's pool shares.
const POSTGRES_CONNECTIONS: u64 = 97;

fn kubernetes_dir() -> PathBuf {
    repo().join("deploy/kubernetes")
}

/// A program of the test venv; missing, the test fails naming the script.
fn venv_program(name: &str) -> PathBuf {
    let path = repo().join("target/test-deps/venv/bin").join(name);
    assert!(
        path.exists(),
        "{} is missing: run scripts/install-test-deps.sh (it installs kubernetes-validate, and PyYAML with it, \
         which the deploy test uses)",
        path.display()
    );
    path
}

/// Every manifest under deploy/kubernetes but the kustomization, sorted.
fn manifest_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(kubernetes_dir())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            path.extension().is_some_and(|extension| extension == "yaml" || extension == "yml")
                && path.file_name().is_some_and(|name| name != "kustomization.yaml")
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no manifest under {}", kubernetes_dir().display());
    files
}

/// Each YAML file's documents, as JSON, by file name.
fn read_yaml(files: &[PathBuf]) -> BTreeMap<String, Vec<Value>> {
    let script = "import json, sys, yaml\n\
                  print(json.dumps({path: [doc for doc in yaml.safe_load_all(open(path)) if doc is not None] \
                  for path in sys.argv[1:]}))";
    let output = Command::new(venv_program("python")).arg("-c").arg(script).args(files).output().unwrap();
    assert!(output.status.success(), "reading the YAML failed: {}", String::from_utf8_lossy(&output.stderr));
    let parsed: BTreeMap<String, Vec<Value>> = serde_json::from_slice(&output.stdout).unwrap();
    parsed
        .into_iter()
        .map(|(path, docs)| (Path::new(&path).file_name().unwrap().to_string_lossy().into_owned(), docs))
        .collect()
}

/// The manifests' documents and the kustomization.
struct Manifests {
    docs: Vec<Value>,
    files: BTreeMap<String, Vec<Value>>,
    kustomization: Value,
}

impl Manifests {
    fn load() -> Self {
        let files = read_yaml(&manifest_files());
        let kustomization = read_yaml(&[kubernetes_dir().join("kustomization.yaml")])
            .into_values()
            .next()
            .and_then(|docs| docs.into_iter().next())
            .expect("kustomization.yaml holds one document");
        let docs = files.values().flatten().cloned().collect();
        Self { docs, files, kustomization }
    }

    /// The one document of `kind`.
    fn one(&self, kind: &str) -> &Value {
        let found: Vec<&Value> = self.docs.iter().filter(|doc| doc["kind"] == kind).collect();
        assert_eq!(found.len(), 1, "expected one {kind} among the manifests, found {}", found.len());
        found[0]
    }

    /// The document of `kind` named `name`.
    fn named(&self, kind: &str, name: &str) -> &Value {
        self.docs
            .iter()
            .find(|doc| doc["kind"] == kind && doc["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no {kind} named `{name}` among the manifests"))
    }

    fn pod(&self) -> &Value {
        &self.one("Deployment")["spec"]["template"]["spec"]
    }

    /// The Deployment's one container.
    fn container(&self) -> &Value {
        let containers = self.pod()["containers"].as_array().expect("the pod's containers");
        assert_eq!(containers.len(), 1, "the pod runs one container, harmonia");
        &containers[0]
    }

    /// The container's args, read as `harmonia serve` reads them.
    fn args(&self) -> ServeArgs {
        assert!(
            self.container().get("command").is_none(),
            "the container sets no command: the image's ENTRYPOINT is `harmonia`"
        );
        ServeArgs::parse(&strings(&self.container()["args"]))
    }

    /// Where a file at `path` inside the container comes from; the
    /// ConfigMap or Secret it is a key of holds that key.
    fn file_at(&self, path: &str) -> Mounted {
        assert!(path.starts_with('/'), "{path} is relative: a path in the pod is absolute");
        let file = mounted(self, path)
            .unwrap_or_else(|| panic!("{path} is not a file any volume of the Deployment mounts"));
        let (kind, name) = match &file.source {
            Source::ConfigMap(name) => ("ConfigMap", name),
            Source::Secret(name) => ("Secret", name),
            Source::EmptyDir => return file,
        };
        let key = file.key.as_deref().unwrap();
        assert!(
            text_of(self.named(kind, name), key).is_some(),
            "{path} would be the key `{key}` of the {kind} {name}, which lacks it"
        );
        file
    }

    /// The text of the ConfigMap or Secret key mounted at `path`.
    fn text_at(&self, path: &str) -> String {
        let file = self.file_at(path);
        let (kind, name) = match &file.source {
            Source::ConfigMap(name) => ("ConfigMap", name),
            Source::Secret(name) => ("Secret", name),
            Source::EmptyDir => panic!("{path} is on an emptyDir: nothing is in it at start"),
        };
        text_of(self.named(kind, name), file.key.as_deref().unwrap()).unwrap()
    }

    /// The Port number `port` (a number or a container port's name) means.
    fn port_number(&self, port: &Value) -> u64 {
        if let Some(number) = port.as_u64() {
            return number;
        }
        let name = port.as_str().expect("a port is a number or a name");
        let ports = self.container()["ports"].as_array().expect("the container's ports");
        let found = ports.iter().find(|candidate| candidate["name"] == name);
        found.unwrap_or_else(|| panic!("no container port named `{name}`"))["containerPort"].as_u64().unwrap()
    }

    /// The serve config and the host config the container reads, parsed
    /// by the server's own parsers, every path in them as the pod sees it.
    fn configs(&self) -> (ServeConfig, HostConfig) {
        let args = self.args();
        // Each file at its path in the pod below a scratch root, so that a
        // relative path in it resolves, as in the pod, from the file's
        // directory; the root is then taken off every path again.
        let root = scratch("configs");
        let place = |pod_path: &str| {
            let file = root.join(pod_path.trim_start_matches('/'));
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, self.text_at(pod_path)).unwrap();
            file
        };
        let serve_file = place(&args.serve_config);
        let mut serve = ServeConfig::from_file(&serve_file)
            .unwrap_or_else(|error| panic!("the ConfigMap's serve config ({}): {error}", args.serve_config));
        let host_file = place(&args.config);
        let mut host = HostConfig::from_file(&host_file)
            .unwrap_or_else(|error| panic!("the ConfigMap's host config ({}): {error}", args.config));
        let in_pod = |path: &mut PathBuf| {
            if let Ok(inside) = path.strip_prefix(&root) {
                // `..` taken lexically: the config's directory is a mount,
                // no symbolic link.
                let mut resolved = PathBuf::from("/");
                for part in inside.components() {
                    match part {
                        std::path::Component::ParentDir => {
                            resolved.pop();
                        }
                        std::path::Component::Normal(part) => resolved.push(part),
                        _ => {}
                    }
                }
                *path = resolved;
            }
        };
        let sessions = &mut serve.sessions;
        [serve.tokens_file.as_mut(), sessions.key_file.as_mut(), sessions.password_file.as_mut()]
            .into_iter()
            .chain([serve.jwt.as_mut().and_then(|jwt| jwt.jwks_file.as_mut())])
            .flatten()
            .for_each(in_pod);
        let plugins = &mut host.plugins;
        [host.trace.key_file.as_mut(), host.cache.dir.as_mut(), plugins.dir.as_mut(), plugins.lock.as_mut()]
            .into_iter()
            .flatten()
            .chain(plugins.files.iter_mut())
            .for_each(in_pod);
        (serve, host)
    }
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("a list of strings, not {value}"))
        .iter()
        .map(|item| item.as_str().unwrap_or_else(|| panic!("a string, not {item}")).to_owned())
        .collect()
}

/// A new empty directory (the tests run in parallel: each call its own).
fn scratch(name: &str) -> PathBuf {
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, Ordering::Relaxed);
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("deploy-{name}-{}-{call}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `harmonia serve`'s flags the Deployment may use; any other is refused,
/// so a new one gets its check here.
struct ServeArgs {
    http: SocketAddr,
    serve_config: String,
    config: String,
    skills: Option<String>,
    /// Every flag given, for `harmonia serve --help`.
    flags: Vec<String>,
}

impl ServeArgs {
    fn parse(args: &[String]) -> Self {
        assert_eq!(args.first().map(String::as_str), Some("serve"), "the args start with `serve`: {args:?}");
        let mut values: BTreeMap<String, String> = BTreeMap::new();
        let mut flags = Vec::new();
        let mut rest = args[1..].iter();
        while let Some(arg) = rest.next() {
            let (flag, inline) = match arg.split_once('=') {
                Some((flag, value)) => (flag.to_owned(), Some(value.to_owned())),
                None => (arg.clone(), None),
            };
            match flag.as_str() {
                "--http" | "--serve-config" | "--config" | "--skills" => {
                    let value = inline.or_else(|| rest.next().cloned());
                    let value = value.unwrap_or_else(|| panic!("{flag} needs a value"));
                    assert!(values.insert(flag.clone(), value).is_none(), "{flag} is given twice");
                }
                "--quiet" => {}
                other => panic!(
                    "the Deployment passes `{other}`, which this test does not check: add its check to \
                     cli/tests/all/deploy.rs"
                ),
            }
            flags.push(flag);
        }
        let value = |flag: &str| values.get(flag).cloned().unwrap_or_else(|| panic!("the args lack {flag}"));
        let http = value("--http");
        Self {
            http: http.parse().unwrap_or_else(|_| panic!("--http {http} is not ADDRESS:PORT")),
            serve_config: value("--serve-config"),
            config: value("--config"),
            skills: values.get("--skills").cloned(),
            flags,
        }
    }
}

/// What a volume puts at a path.
#[derive(Debug)]
enum Source {
    ConfigMap(String),
    Secret(String),
    EmptyDir,
}

#[derive(Debug)]
struct Mounted {
    source: Source,
    /// The ConfigMap's or Secret's key (none inside an emptyDir).
    key: Option<String>,
    /// Mounted as a file of its own (a plain file), not through a
    /// directory of the volume (a symbolic link into `..data`).
    sub_path: bool,
    /// The file's mode as the kubelet leaves it (ConfigMap, Secret).
    mode: Option<u32>,
    /// The volume mount's path.
    mount_path: String,
}

/// The key a ConfigMap or Secret volume projects at `relative` (a path in
/// the volume), through its `items` when it lists them, and that key's
/// mode.
fn projected(volume_source: &Value, relative: &str) -> Option<(String, Option<u64>)> {
    match volume_source["items"].as_array() {
        Some(items) => items
            .iter()
            .find(|item| item["path"] == relative)
            .map(|item| (item["key"].as_str().unwrap().to_owned(), item["mode"].as_u64())),
        None => (!relative.contains('/')).then(|| (relative.to_owned(), None)),
    }
}

/// What the container sees at `path`: the most specific mount holding it.
fn mounted(manifests: &Manifests, path: &str) -> Option<Mounted> {
    let pod = manifests.pod();
    let mounts = manifests.container()["volumeMounts"].as_array()?;
    let mut candidates: Vec<&Value> = mounts
        .iter()
        .filter(|mount| {
            let at = mount["mountPath"].as_str().unwrap().trim_end_matches('/');
            if mount.get("subPath").is_some() { path == at } else { path.starts_with(&format!("{at}/")) }
        })
        .collect();
    candidates.sort_by_key(|mount| mount["mountPath"].as_str().unwrap().len());
    let mount = *candidates.last()?;
    let at = mount["mountPath"].as_str().unwrap().trim_end_matches('/');
    let volume = pod["volumes"]
        .as_array()?
        .iter()
        .find(|volume| volume["name"] == mount["name"])
        .unwrap_or_else(|| panic!("the mount of {at} names no volume"));
    let sub_path = mount["subPath"].as_str();
    let relative = sub_path.map_or_else(|| path[at.len() + 1..].to_owned(), str::to_owned);
    let fs_group = pod["securityContext"]["fsGroup"].as_u64().is_some();
    let file = |source: Source, volume_source: &Value| {
        let (key, mode) = projected(volume_source, &relative)?;
        let mode = mode.or_else(|| volume_source["defaultMode"].as_u64()).unwrap_or(0o644) as u32;
        // Under an fsGroup, the kubelet gives a read-only volume's files
        // that group and adds its read bit (0440) to their mode.
        let mode = if fs_group { mode | 0o440 } else { mode };
        Some(Mounted {
            source,
            key: Some(key),
            sub_path: sub_path.is_some(),
            mode: Some(mode),
            mount_path: at.to_owned(),
        })
    };
    if let Some(config_map) = volume.get("configMap") {
        file(Source::ConfigMap(config_map["name"].as_str().unwrap().to_owned()), config_map)
    } else if let Some(secret) = volume.get("secret") {
        file(Source::Secret(secret["secretName"].as_str().unwrap().to_owned()), secret)
    } else if volume.get("emptyDir").is_some() {
        Some(Mounted {
            source: Source::EmptyDir,
            key: None,
            sub_path: false,
            mode: None,
            mount_path: at.into(),
        })
    } else {
        panic!("volume {} is of a kind this test does not read", volume["name"])
    }
}

/// A ConfigMap's or Secret's value for `key`, as text.
fn text_of(object: &Value, key: &str) -> Option<String> {
    if let Some(text) = object["stringData"][key].as_str().or_else(|| object["data"][key].as_str()) {
        if object["kind"] == "Secret" && object["stringData"][key].is_null() {
            use base64::Engine;
            let bytes =
                base64::engine::general_purpose::STANDARD.decode(text).expect("a Secret's data is base64");
            return Some(String::from_utf8(bytes).expect("text"));
        }
        return Some(text.to_owned());
    }
    None
}

/// A secret file the server reads: from the Secret, with a mode the server
/// accepts for a root-owned file (the kubelet writes volumes as root).
fn assert_secret_file(manifests: &Manifests, setting: &str, path: &Path) -> Mounted {
    let path = path.to_str().unwrap();
    let file = manifests.file_at(path);
    assert!(
        matches!(file.source, Source::Secret(_)),
        "{setting} ({path}) is not mounted from a Secret: {file:?}"
    );
    let mode = file.mode.unwrap();
    if let Some(problem) = harmonia_host::secret_file::mode_problem(mode, 0) {
        panic!(
            "{setting} ({path}) would be mode {mode:o}, owned by root; the server refuses it: it {problem}"
        );
    }
    file
}

#[test]
fn the_manifests_pass_kubernetes_schemas_offline_and_strict() {
    let program = venv_program("kubernetes-validate");
    let files = manifest_files();
    let documents: usize = read_yaml(&files).values().map(Vec::len).sum();
    for version in KUBERNETES {
        let output = Command::new(&program)
            .args(["--strict", "--kubernetes-version", version])
            .args(&files)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success(),
            "Kubernetes {version}'s schemas refuse a manifest:\n{stdout}{stderr}"
        );
        // A kind or apiVersion it has no schema for is only a warning, and
        // the exit code 0: every document must say it passed.
        let passed =
            stdout.lines().filter(|line| line.starts_with("INFO ") && line.contains(" passed ")).count();
        assert_eq!(passed, documents, "Kubernetes {version}: not every document passed:\n{stdout}{stderr}");
        assert!(
            !stdout.contains("WARN") && !stderr.contains("WARN"),
            "Kubernetes {version}:\n{stdout}{stderr}"
        );
    }
}

#[test]
fn the_container_finds_its_configs_and_secrets_where_the_manifests_mount_them() {
    let manifests = Manifests::load();
    let args = manifests.args();

    // The flags are `harmonia serve`'s.
    let help = crate::support::harmonia_with(&["serve", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    for flag in &args.flags {
        assert!(help.contains(flag.as_str()), "`harmonia serve` has no {flag}:\n{help}");
    }

    // The two config files come from the ConfigMap.
    for (flag, path) in [("--serve-config", &args.serve_config), ("--config", &args.config)] {
        let file = manifests.file_at(path);
        assert!(matches!(file.source, Source::ConfigMap(_)), "{flag} {path} is not mounted from a ConfigMap");
    }
    if let Some(skills) = &args.skills {
        assert!(
            manifests.container()["volumeMounts"].as_array().unwrap().iter().any(|mount| mount["mountPath"]
                .as_str()
                .unwrap()
                .trim_end_matches('/')
                == skills),
            "--skills {skills} is no directory the Deployment mounts"
        );
    }
    let (serve, host) = manifests.configs();

    // Every file they name is mounted, from the Secret for secrets.
    let sessions = &serve.sessions;
    let ledger =
        sessions.ledger.as_deref().expect("serve.toml's [sessions] ledger: the database replicas share");
    assert!(
        harmonia_serve::database::is_url(ledger),
        "sessions.ledger must be PostgreSQL for replicas on several machines, not {ledger}"
    );
    let key = sessions.key_file.as_deref().expect("sessions.key_file: every replica seals with the same key");
    assert_secret_file(&manifests, "sessions.key_file", key);
    let password = sessions.password_file.as_deref().expect("sessions.password_file");
    assert_secret_file(&manifests, "sessions.password_file", password);
    let tokens =
        serve.tokens_file.as_deref().expect("tokens_file: --http refuses to start without credentials");
    let tokens_mount = assert_secret_file(&manifests, "tokens_file", tokens);
    assert!(!tokens_mount.sub_path, "tokens_file is mounted with subPath: a revocation would need a restart");
    let trace =
        host.trace.key_file.as_deref().expect("trace.key_file: every replica signs with the same key");
    let trace_mount = assert_secret_file(&manifests, "trace.key_file", trace);
    assert!(
        trace_mount.sub_path,
        "trace.key_file ({}) is mounted through a Secret volume's directory, where it is a symbolic link, which \
         the trace key loader refuses: mount it with subPath",
        trace.display()
    );
    if let Some(jwks) = serve.jwt.as_ref().and_then(|jwt| jwt.jwks_file.as_deref()) {
        manifests.file_at(jwks.to_str().unwrap());
    }
    let plugins = &host.plugins;
    for file in plugins.files.iter().chain(&plugins.lock) {
        manifests.file_at(file.to_str().unwrap());
    }
    if let Some(dir) = &plugins.dir {
        let dir = dir.to_str().unwrap();
        assert!(mounted(&manifests, &format!("{dir}/x.wasm")).is_some(), "plugins.dir {dir} is not mounted");
    }

    // The database password comes one way: the file, not the variable too.
    let env = manifests.container()["env"].as_array().cloned().unwrap_or_default();
    let variable = |name: &str| env.iter().find(|entry| entry["name"] == name);
    assert!(
        variable(harmonia_serve::database::PASSWORD_VARIABLE).is_none(),
        "both sessions.password_file and ${} are set: pick one",
        harmonia_serve::database::PASSWORD_VARIABLE
    );
    // The internal API's token is the Secret's.
    if host.workspace.source == WorkspaceSourceKind::Http {
        let name = &host.workspace.token_env;
        let entry = variable(name)
            .unwrap_or_else(|| panic!("workspace.token_env names ${name}, which the pod lacks"));
        let reference = &entry["valueFrom"]["secretKeyRef"];
        let key = reference["key"].as_str().unwrap_or_else(|| panic!("${name} is not from a Secret"));
        let secret = manifests.named("Secret", reference["name"].as_str().unwrap());
        assert!(text_of(secret, key).is_some(), "${name} is the Secret's key `{key}`, which it lacks");
    }

    // The component cache: a directory below an emptyDir (the root
    // filesystem is read-only; the cache needs a directory of its own).
    let cache = host.cache_dir().expect("the component cache is on (else every start compiles)");
    let cache = cache.to_str().unwrap();
    // What holds the cache's entries (a path below it, since the
    // directory itself may be a mount's own path).
    let cache_mount = mounted(&manifests, &format!("{cache}/entry"))
        .unwrap_or_else(|| panic!("cache.dir {cache} is on no volume: the root filesystem is read-only"));
    assert!(
        matches!(cache_mount.source, Source::EmptyDir) && cache != cache_mount.mount_path,
        "cache.dir {cache} must be a directory below an emptyDir's mount (the cache wants a directory private \
         to its user, which the server makes; an emptyDir's root is world-writable): {cache_mount:?}"
    );

    // The Secret as shipped fails closed: its placeholders are no key the
    // server would use, and its token store holds no token.
    let dir = scratch("placeholders");
    let secret = manifests.one("Secret");
    let key_text = text_of(secret, manifests.file_at(key.to_str().unwrap()).key.as_deref().unwrap()).unwrap();
    assert!(
        key_text.trim().len() < harmonia_serve::sessions::handle::MIN_KEY_BYTES,
        "the template's session key would be accepted"
    );
    let trace_file = dir.join("trace-key");
    std::fs::write(&trace_file, text_of(secret, trace_mount.key.as_deref().unwrap()).unwrap()).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&trace_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert!(TraceSigner::load(&trace_file).is_err(), "the template's trace key would be accepted");
    let tokens_file = dir.join("tokens.toml");
    std::fs::write(&tokens_file, text_of(secret, tokens_mount.key.as_deref().unwrap()).unwrap()).unwrap();
    let store =
        TokenFile::load(&tokens_file).unwrap_or_else(|error| panic!("the template's tokens.toml: {error}"));
    assert!(store.tokens.is_empty(), "the template's tokens.toml holds a token");
}

#[test]
fn ports_probes_and_the_grace_period_agree_with_the_server() {
    let manifests = Manifests::load();
    let args = manifests.args();
    let port = u64::from(args.http.port());
    assert!(
        args.http.ip().is_unspecified(),
        "--http {} listens on one address only: 0.0.0.0 for a pod",
        args.http
    );
    let container = manifests.container();
    let container_ports: Vec<u64> = container["ports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|port| port["containerPort"].as_u64().unwrap())
        .collect();
    assert_eq!(container_ports, [port], "the container's ports are not --http's");

    // The Service sends its traffic there, to these pods.
    let service = manifests.one("Service");
    for service_port in service["spec"]["ports"].as_array().unwrap() {
        let target = manifests.port_number(&service_port["targetPort"]);
        assert_eq!(target, port, "the Service's targetPort is {target}, the server listens on {port}");
    }
    let labels = &manifests.one("Deployment")["spec"]["template"]["metadata"]["labels"];
    let selects_pods = |selector: &Value| {
        let selector = selector.as_object().expect("a selector");
        !selector.is_empty() && selector.iter().all(|(key, value)| &labels[key] == value)
    };
    assert!(selects_pods(&service["spec"]["selector"]), "the Service selects no pod of the Deployment");

    // The probes: the port, the paths, a Host the server lets in.
    let (serve, _) = manifests.configs();
    let addressing = Addressing::new(&serve.allowed_hosts, &serve.allowed_origins);
    let probes = [("startupProbe", "/healthz"), ("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")];
    for (probe, path) in probes {
        let get = &container[probe]["httpGet"];
        assert!(get.is_object(), "the container has no {probe} over HTTP");
        // A startup probe on /readyz would kill a pod whose database is
        // still away; /healthz answers as soon as the server listens.
        assert_eq!(get["path"], path, "{probe} must ask {path}");
        let probe_port = manifests.port_number(&get["port"]);
        assert_eq!(probe_port, port, "{probe} asks port {probe_port}, the server listens on {port}");
        let host = get["httpHeaders"]
            .as_array()
            .and_then(|headers| headers.iter().find(|header| header["name"].as_str().unwrap().eq_ignore_ascii_case("host")))
            .map(|header| header["value"].as_str().unwrap().to_owned())
            .unwrap_or_else(|| {
                panic!("{probe} sends no Host header: the kubelet would send the pod's IP, which the server refuses (403)")
            });
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_str(&host).unwrap());
        assert!(
            addressing.check(&Uri::from_static("/healthz"), &headers).is_ok(),
            "{probe} sends Host: {host}, which serve.toml's allowed_hosts {:?} refuses",
            serve.allowed_hosts
        );
    }

    // Clients in the cluster reach the Service by its DNS names, in the
    // namespace the kustomization sets.
    let name = service["metadata"]["name"].as_str().unwrap();
    let namespace =
        manifests.kustomization["namespace"].as_str().expect("kustomization.yaml sets the namespace");
    let service_port = service["spec"]["ports"][0]["port"].as_u64().unwrap();
    for host in [
        name.to_owned(),
        format!("{name}.{namespace}.svc.cluster.local"),
        format!("{name}.{namespace}.svc.cluster.local:{service_port}"),
    ] {
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_str(&host).unwrap());
        assert!(
            addressing.check(&Uri::from_static("/mcp"), &headers).is_ok(),
            "a client of the Service sends Host: {host}, which serve.toml's allowed_hosts {:?} refuses",
            serve.allowed_hosts
        );
    }

    // SIGTERM comes after the preStop pause; the drain then takes up to
    // DRAIN_LIMIT; the grace period covers both before the SIGKILL.
    let pre_stop = &container["lifecycle"]["preStop"];
    let pause = match (pre_stop["exec"]["command"].as_array(), pre_stop["sleep"]["seconds"].as_u64()) {
        (Some(_), _) => {
            let command = strings(&pre_stop["exec"]["command"]);
            assert_eq!(command.len(), 2, "preStop is `sleep N`: {command:?}");
            assert_eq!(command[0], "sleep", "preStop is `sleep N`: {command:?}");
            command[1].parse::<u64>().unwrap()
        }
        (None, Some(seconds)) => seconds,
        (None, None) => panic!("no preStop pause: the endpoints may still send requests after SIGTERM"),
    };
    assert!(pause >= 1, "a preStop pause of {pause} s leaves the endpoints no time to update");
    let grace =
        manifests.pod()["terminationGracePeriodSeconds"].as_u64().expect("terminationGracePeriodSeconds");
    let needed = pause + DRAIN_LIMIT.as_secs();
    assert!(
        grace > needed,
        "terminationGracePeriodSeconds is {grace}: the preStop pause ({pause} s) and the drain limit ({} s) need \
         more than {needed}",
        DRAIN_LIMIT.as_secs()
    );
}

#[test]
fn the_pod_runs_as_the_images_non_root_user_and_the_image_runs_the_deployments_args() {
    let manifests = Manifests::load();
    let pod = manifests.pod();
    let container = manifests.container();
    let pod_security = &pod["securityContext"];
    let security = &container["securityContext"];
    assert_eq!(pod_security["runAsNonRoot"], true, "the pod's runAsNonRoot");
    assert_ne!(security["runAsNonRoot"], false, "the container's runAsNonRoot");
    let user =
        security["runAsUser"].as_u64().or_else(|| pod_security["runAsUser"].as_u64()).expect("runAsUser");
    let group =
        security["runAsGroup"].as_u64().or_else(|| pod_security["runAsGroup"].as_u64()).expect("runAsGroup");
    assert_ne!(user, 0, "the pod runs as root");
    assert!(pod_security["fsGroup"].as_u64().is_some(), "no fsGroup: the Secret's files would be unreadable");
    assert_eq!(security["allowPrivilegeEscalation"], false, "allowPrivilegeEscalation");
    assert_eq!(security["readOnlyRootFilesystem"], true, "readOnlyRootFilesystem");
    assert!(strings(&security["capabilities"]["drop"]).contains(&"ALL".to_owned()), "capabilities: drop ALL");
    assert!(security["capabilities"]["add"].is_null(), "no capability is added");
    let seccomp = security["seccompProfile"]["type"]
        .as_str()
        .or_else(|| pod_security["seccompProfile"]["type"].as_str());
    assert_eq!(seccomp, Some("RuntimeDefault"), "the seccomp profile");
    assert_eq!(pod["automountServiceAccountToken"], false, "the server needs no Kubernetes API token");

    // The image: its last stage is what runs.
    let dockerfile = std::fs::read_to_string(repo().join("deploy/Dockerfile")).unwrap();
    let instructions = dockerfile_instructions(&dockerfile);
    let last_from = instructions.iter().rposition(|(name, _)| name == "FROM").expect("a FROM");
    let runtime = &instructions[last_from..];
    let value = |name: &str| {
        runtime.iter().rev().find(|(instruction, _)| instruction == name).map(|(_, value)| value.clone())
    };
    let image_user = value("USER").expect("the image sets USER");
    let (uid, gid) = image_user.split_once(':').unwrap_or((&image_user, &image_user));
    assert_eq!(uid.parse::<u64>().ok(), Some(user), "the image's USER {image_user} is not runAsUser {user}");
    assert_eq!(
        gid.parse::<u64>().ok(),
        Some(group),
        "the image's USER {image_user} is not runAsGroup {group}"
    );
    let args = manifests.args();
    let exposed: Vec<u64> = runtime
        .iter()
        .filter(|(name, _)| name == "EXPOSE")
        .flat_map(|(_, ports)| ports.split_whitespace())
        .map(|port| port.trim_end_matches("/tcp").parse().unwrap())
        .collect();
    assert_eq!(exposed, [u64::from(args.http.port())], "the image's EXPOSE is not --http's port");
    let entrypoint: Vec<String> = serde_json::from_str(&value("ENTRYPOINT").expect("ENTRYPOINT")).unwrap();
    assert_eq!(entrypoint, ["harmonia"], "the image's ENTRYPOINT");
    let cmd: Vec<String> = serde_json::from_str(&value("CMD").expect("CMD")).unwrap();
    assert_eq!(cmd, strings(&container["args"]), "the image's CMD is not the Deployment's args");

    // The builder's Rust is the toolchain's release, built as tested.
    let toolchain = std::fs::read_to_string(repo().join("rust-toolchain.toml")).unwrap();
    let channel = toolchain
        .lines()
        .find_map(|line| line.strip_prefix("channel = \""))
        .and_then(|rest| rest.strip_suffix('"'))
        .expect("rust-toolchain.toml's channel");
    let minor: String = channel.split('.').take(2).collect::<Vec<_>>().join(".");
    let builder = &instructions.iter().find(|(name, _)| name == "FROM").unwrap().1;
    assert!(
        builder.starts_with(&format!("rust:{minor}")),
        "the builder image {builder} is not Rust {channel}"
    );
    assert!(
        instructions
            .iter()
            .any(|(name, value)| name == "RUN"
                && value.contains("cargo build --release --locked -p harmonia-cli")),
        "the image is not built with `cargo build --release --locked -p harmonia-cli`"
    );
}

#[test]
fn the_kustomization_lists_every_manifest_and_the_replicas_fit_the_database() {
    let manifests = Manifests::load();
    let listed: BTreeSet<String> = strings(&manifests.kustomization["resources"]).into_iter().collect();
    let present: BTreeSet<String> = manifests.files.keys().cloned().collect();
    assert_eq!(
        listed, present,
        "kustomization.yaml's resources are not the manifests under deploy/kubernetes"
    );
    for doc in &manifests.docs {
        assert!(
            doc["metadata"]["namespace"].is_null(),
            "{} sets its namespace: kustomization.yaml does",
            doc["kind"]
        );
    }

    let deployment = manifests.one("Deployment");
    let name = deployment["metadata"]["name"].as_str().unwrap();
    let labels = &deployment["spec"]["template"]["metadata"]["labels"];
    let selects_pods = |selector: &Value| {
        let selector = selector.as_object().expect("a selector");
        !selector.is_empty() && selector.iter().all(|(key, value)| &labels[key] == value)
    };
    assert!(selects_pods(&deployment["spec"]["selector"]["matchLabels"]), "the Deployment's selector");
    let budget = manifests.one("PodDisruptionBudget");
    assert!(
        selects_pods(&budget["spec"]["selector"]["matchLabels"]),
        "the PodDisruptionBudget selects no pod"
    );
    let autoscaler = manifests.one("HorizontalPodAutoscaler");
    let target = &autoscaler["spec"]["scaleTargetRef"];
    assert_eq!(
        (target["kind"].as_str(), target["name"].as_str()),
        (Some("Deployment"), Some(name)),
        "the autoscaler's target"
    );
    let min = autoscaler["spec"]["minReplicas"].as_u64().unwrap();
    let max = autoscaler["spec"]["maxReplicas"].as_u64().unwrap();
    assert_eq!(
        deployment["spec"]["replicas"].as_u64(),
        Some(min),
        "the Deployment's replicas are the autoscaler's minimum"
    );
    assert!(min >= 2, "one replica cannot drain while another serves");
    assert!(
        container_requests_cpu(&manifests),
        "the autoscaler scales on CPU utilisation, a share of the CPU requests the container lacks"
    );

    // Every pod's pool together, in a rollout's surge too, within the
    // connections PostgreSQL has by default.
    let (serve, _) = manifests.configs();
    let surge = deployment["spec"]["strategy"]["rollingUpdate"]["maxSurge"].as_u64().unwrap_or(1);
    let pods = max + surge;
    let connections = u64::from(serve.sessions.pool_size) * pods;
    assert!(
        connections <= POSTGRES_CONNECTIONS,
        "{pods} pods x sessions.pool_size {} = {connections} connections, more than PostgreSQL's default \
         {POSTGRES_CONNECTIONS}",
        serve.sessions.pool_size
    );
}

fn container_requests_cpu(manifests: &Manifests) -> bool {
    manifests.container()["resources"]["requests"]["cpu"].is_string()
}

/// A Dockerfile's instructions (name in capitals, the rest), continuation
/// lines joined and comments dropped.
fn dockerfile_instructions(text: &str) -> Vec<(String, String)> {
    let mut instructions = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        // Docker drops comment lines and empty lines, inside a continued
        // instruction too.
        if trimmed.starts_with('#') || trimmed.is_empty() {
            continue;
        }
        match trimmed.strip_suffix('\\') {
            Some(part) => {
                current.push_str(part);
                current.push(' ');
            }
            None => {
                current.push_str(trimmed);
                let (name, rest) =
                    current.trim().split_once(char::is_whitespace).unwrap_or((current.trim(), ""));
                instructions.push((name.to_ascii_uppercase(), rest.trim().to_owned()));
                current.clear();
            }
        }
    }
    instructions
}
