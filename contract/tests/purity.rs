//! The contract crate stays pure (its module doc's promise): its
//! dependencies are data and crypto crates only, and its code, tests aside,
//! names no file system, network, process or environment API.

use std::path::{Path, PathBuf};

/// Every dependency the crate may have: none of them runs wasm, opens a
/// database or a socket.
const ALLOWED: [&str; 16] = [
    "serde",
    "serde_json",
    "thiserror",
    "url",
    "sha2",
    "ed25519-dalek",
    "unicode-normalization",
    "unicode-security",
    "unicode-properties",
    "toml",
    // Language identification from compiled-in trigram tables: data, not I/O.
    "whatlang",
    // Language identification reliable on short text, from n-gram models
    // compiled into its model crates: data, not I/O (it may use threads
    // only for its `*_in_parallel` calls, which the crate does not make).
    "lingua",
    // Parts of speech and lemmas from WordNet tables compiled in: data.
    "english-pos-tagger",
    // String distances (a misspelt verb's nearest spelling): pure functions.
    "strsim",
    // A hash function for in-memory tables: pure.
    "rustc-hash",
    // Substring search over bytes (the tools' strings in an answer): pure.
    "memchr",
];

/// What I/O looks like in Rust source.
const IO_APIS: [&str; 5] = ["std::fs", "std::net", "std::process", "std::env", "File::"];

#[test]
fn depends_only_on_pure_crates() {
    let manifest: toml::Table = toml::from_str(include_str!("../Cargo.toml")).expect("Cargo.toml parses");
    let dependencies = manifest["dependencies"].as_table().expect("a [dependencies] table");
    let stray: Vec<&String> = dependencies.keys().filter(|name| !ALLOWED.contains(&name.as_str())).collect();
    assert!(stray.is_empty(), "harmonia-contract must stay pure; it now depends on {stray:?}");
    assert!(dependencies.contains_key("serde"), "the list is the manifest's");
}

fn sources(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            sources(&path, found);
        } else if path.extension().is_some_and(|extension| extension == "rs")
            && path.file_name().is_some_and(|name| name != "tests.rs")
        {
            found.push(path);
        }
    }
}

#[test]
fn the_code_does_no_io() {
    let mut files = Vec::new();
    sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut files);
    assert!(files.len() >= 20, "the walk reads the crate: {files:?}");
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("a source file");
        // Unit tests may read fixtures; the code above them may not.
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for api in IO_APIS.iter().filter(|api| code.contains(*api)) {
            found.push(format!("{} uses {api}", file.display()));
        }
    }
    assert!(found.is_empty(), "{found:?}");
}
