//! A Python agent using only the standard library drives `harmonia
//! session` end to end (`examples/nova_agent.py`).

use std::path::Path;
use std::process::Command;

#[test]
fn a_stdlib_python_agent_drives_a_session_end_to_end() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/nova_agent.py");
    let output = Command::new("python3")
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_harmonia"))
        .env_remove("HARMONIA_CONFIG")
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("\"mutation_claim\""), "{stdout}");
}
