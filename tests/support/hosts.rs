//! Hosts over chosen guests, with every log record kept.

use harmonia_host::config::HostConfig;
use harmonia_host::log::MemoryLog;
use harmonia_host::{Host, HostError};
use std::path::Path;
use std::sync::Arc;

/// The path of a test guest (`hostile-loop`, `testing-trivial`, ...).
pub fn guest_path(name: &str) -> &'static Path {
    Path::new(harmonia_artifacts::test_guest(name).unwrap_or_else(|| panic!("no test guest {name}")))
}

/// A config loading no built-in tool.
pub fn bare_config() -> HostConfig {
    let mut config = HostConfig::default();
    config.plugins.builtin = false;
    config
}

/// A host with `config` plus the named test guests, and its log.
pub fn try_host_with(config: HostConfig, guests: &[&str]) -> Result<(Host, Arc<MemoryLog>), HostError> {
    let log = Arc::new(MemoryLog::default());
    let mut builder = Host::builder(config).log(log.clone());
    for guest in guests {
        builder = builder.component_file(guest_path(guest))?;
    }
    Ok((builder.build()?, log))
}

/// Like [`try_host_with`], panicking on failure.
pub fn host_with(config: HostConfig, guests: &[&str]) -> (Host, Arc<MemoryLog>) {
    try_host_with(config, guests).unwrap_or_else(|error| panic!("host: {error}"))
}
