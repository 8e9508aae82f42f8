//! `harmonia plugin push|pull|sign|keygen|verify`: plugins through an OCI
//! registry, pinned by digest in `plugins.lock` and signed in the cosign
//! format (see the `harmonia-registry` crate).

use crate::args::PluginCommand;
use crate::setup::{UsageError, load_config};
use anyhow::{Context, Result};
use harmonia_registry::declared::{self, NameCheck};
use harmonia_registry::keys::{Algorithm, PrivateKey};
use harmonia_registry::oci::{Client, Options};
use harmonia_registry::{OciReference, Store, TrustPolicy};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Run a `plugin` subcommand.
pub fn run(command: PluginCommand) -> Result<ExitCode> {
    // The registry client's own log, on stderr, from `RUST_LOG` (default:
    // warnings). Credentials never reach it: the client redacts them and
    // this crate never formats them.
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).try_init();
    match command {
        PluginCommand::Push { file, reference } => push(&file, &reference),
        PluginCommand::Pull { reference, dir, name, config, update } => {
            pull(&reference, dir.as_deref(), name.as_deref(), config.as_deref(), update)
        }
        PluginCommand::Sign { reference, key } => sign(&reference, &key),
        PluginCommand::Keygen { out, ed25519 } => keygen(&out, ed25519),
        PluginCommand::Verify { dir, config } => verify(dir.as_deref(), config.as_deref()),
    }
}

fn reference(text: &str) -> Result<OciReference> {
    OciReference::parse(text).map_err(|error| UsageError(error.to_string()).into())
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// The plugin directory: `--dir`, else the config's `plugins.lock`'s
/// directory, else `plugins`.
fn plugin_dir(dir: Option<&Path>, config: &harmonia_host::HostConfig) -> PathBuf {
    dir.map(Path::to_owned)
        .or_else(|| config.plugins.lock.as_ref().and_then(|lock| lock.parent().map(Path::to_owned)))
        .unwrap_or_else(|| PathBuf::from("plugins"))
}

fn policy(config: &harmonia_host::HostConfig) -> Result<TrustPolicy> {
    Ok(TrustPolicy::load(&config.plugins.trust)?)
}

fn push(file: &Path, text: &str) -> Result<ExitCode> {
    let reference = reference(text)?;
    let bytes = std::fs::read(file)
        .map_err(|error| UsageError(format!("cannot read component {}: {error}", file.display())))?;
    let digest = runtime()?
        .block_on(async { Client::new(&reference, Options::default())?.push(&reference, &bytes).await })?;
    outln!("pushed {} as {reference}@{digest}", file.display());
    Ok(ExitCode::SUCCESS)
}

fn pull(
    text: &str,
    dir: Option<&Path>,
    name: Option<&str>,
    config: Option<&Path>,
    update: bool,
) -> Result<ExitCode> {
    let reference = reference(text)?;
    let config = load_config(config)?;
    let policy = policy(&config)?;
    let store = Store::new(&plugin_dir(dir, &config));
    let name = name.unwrap_or(reference.short_name()).to_owned();
    let options = Options { redirect_hosts: config.plugins.redirect_hosts.clone(), ..Options::default() };
    let describe = |bytes: &[u8]| declared_tool(&config, bytes, &reference.to_string());
    let entry = runtime()?.block_on(async {
        Client::new(&reference, options)?.pull(&reference, &name, &store, &policy, update, &describe).await
    })?;
    let signer = entry.signer.as_deref().unwrap_or("unsigned");
    outln!(
        "locked {} = {} at {} (component {}, signer {signer}) in {}",
        entry.name,
        entry.reference,
        entry.manifest_digest,
        entry.layer_digest,
        store.lock_path().display()
    );
    Ok(ExitCode::SUCCESS)
}

fn sign(text: &str, key: &Path) -> Result<ExitCode> {
    let reference = reference(text)?;
    let key = PrivateKey::from_file(key)?;
    let digest = runtime()?
        .block_on(async { Client::new(&reference, Options::default())?.sign(&reference, &key).await })?;
    outln!("signed {reference} at {digest} with {}", key.public().fingerprint());
    Ok(ExitCode::SUCCESS)
}

fn keygen(out: &Path, ed25519: bool) -> Result<ExitCode> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let algorithm = if ed25519 { Algorithm::Ed25519 } else { Algorithm::EcdsaP256 };
    let key = PrivateKey::generate(algorithm)?;
    let private = out.with_extension("key");
    let public = out.with_extension("pub");
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&private)
        .map_err(|error| UsageError(format!("cannot create {}: {error}", private.display())))?;
    file.write_all(key.to_pem()?.as_bytes())?;
    std::fs::write(&public, key.public().to_pem())
        .map_err(|error| UsageError(format!("cannot write {}: {error}", public.display())))?;
    outln!("{}", key.public().fingerprint());
    outln!("private key {} (keep it secret), public key {}", private.display(), public.display());
    Ok(ExitCode::SUCCESS)
}

/// The tool component `bytes` (pulled by `reference`) declare, as the
/// host would load them under `config`.
fn declared_tool(
    config: &harmonia_host::HostConfig,
    bytes: &[u8],
    reference: &str,
) -> Result<String, String> {
    let origin = harmonia_host::plugin::PluginOrigin::Oci(reference.to_owned());
    harmonia_host::inspect::declared_tool(config, bytes, origin)
}

/// Each locked plugin verified as a load verifies it: its bytes and
/// signatures from the store, then the tool it declares against its name.
fn verify(dir: Option<&Path>, config: Option<&Path>) -> Result<ExitCode> {
    let config = load_config(config)?;
    let policy = policy(&config)?;
    let store = Store::new(&plugin_dir(dir, &config));
    let lock_path = store.lock_path();
    let mut failed = false;
    let lock = harmonia_registry::LockFile::read(&lock_path)?;
    for entry in &lock.plugins {
        let verified = store.verify(entry, &policy, harmonia_registry::store::MAX_COMPONENT_BYTES).and_then(
            |verified| {
                let declared = declared::declared_by(
                    &|bytes: &[u8]| declared_tool(&config, bytes, &entry.reference),
                    &entry.reference,
                    &verified.bytes,
                )?;
                declared::check(&entry.name, &entry.reference, &declared, NameCheck::Lock(&lock_path))?;
                Ok(verified)
            },
        );
        match verified {
            Ok(verified) => outln!(
                "ok {} {} signer {}",
                entry.name,
                entry.manifest_digest,
                verified.entry.signer.as_deref().unwrap_or("unsigned")
            ),
            Err(error) => {
                failed = true;
                eprintln!("refused {}: {error}", entry.name);
            }
        }
    }
    Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}
