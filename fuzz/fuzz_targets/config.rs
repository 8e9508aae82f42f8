//! Config parsing: never panics; errors are one line; accepted configs
//! pass their own checks.
#![no_main]

use harmonia_host::config::HostConfig;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match HostConfig::from_toml_str(&text) {
        Ok(config) => assert!(config.check().is_ok()),
        Err(error) => assert_eq!(error.to_string().lines().count(), 1),
    }
});
