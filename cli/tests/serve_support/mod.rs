//! What the `harmonia serve` test files share: the repository root, the
//! Python with the official MCP SDK, and the `harmonia` command with a
//! clean environment.

use std::path::{Path, PathBuf};
use std::process::Command;

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The virtual environment's Python; the tests fail, naming the script
/// that installs it, when it is missing.
pub fn python() -> PathBuf {
    let python = repo().join("target/test-deps/venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run scripts/install-test-deps.sh (it installs the MCP Python SDK these tests use)",
        python.display()
    );
    python
}

/// `harmonia` with no config or workspace from the environment and its
/// data dir (the trace key) in `dir`.
pub fn harmonia(dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_harmonia"));
    command.env_remove("HARMONIA_CONFIG").env_remove("HARMONIA_WORKSPACE").env("XDG_DATA_HOME", dir);
    command
}
