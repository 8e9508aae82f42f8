//! Builds every guest crate under `guest/` for wasm32-wasip2, once per
//! build of this crate, and writes `artifacts.rs` naming the results.
//!
//! The guests build in their own target directory, shared by every profile
//! of the host (`<target>/wasm-guests`), so debug, release and clippy runs
//! reuse one guest build. The parent's rustflags and compiler wrappers are
//! removed so they do not leak into the wasm build.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The six tools embedded in the host binary.
const BUILTIN_TOOLS: &[&str] = &[
    "fetch_trend_signals",
    "search_trend_signals",
    "get_engagement_insights",
    "get_operator_feed",
    "get_job_status",
    "suggest_posting_windows",
];

/// Test guests embedded for the benchmarks and the conformance suite:
/// (crate name, file stem).
const BENCH_GUESTS: &[(&str, &str)] = &[
    ("testing-trivial", "testing_trivial"),
    ("hostile-loop", "hostile_loop"),
    ("testing-denied-probe", "testing_denied_probe"),
];

/// Folders of test-only guests, each crate named `<folder>-<dir>`.
const TEST_GUEST_FOLDERS: &[&str] = &["hostile", "testing"];

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let root = manifest_dir.parent().expect("workspace root").to_path_buf();
    let guest = root.join("guest");
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));

    println!("cargo:rerun-if-changed={}", root.join("wit").display());
    // The guests take their codes and time from the contract crate.
    println!("cargo:rerun-if-changed={}", root.join("contract").display());
    for entry in fs::read_dir(&guest).expect("guest/ exists") {
        let path = entry.expect("guest entry").path();
        if path.file_name().is_some_and(|name| name != "target") {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }

    let target_dir = shared_target_dir(&out_dir);
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .current_dir(&guest)
        .args(["build", "--release", "--workspace", "--target", "wasm32-wasip2"])
        .env("CARGO_TARGET_DIR", &target_dir);
    for variable in [
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTFLAGS",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_BUILD_TARGET",
        "CARGO_BUILD_RUSTFLAGS",
        "CARGO_PROFILE_RELEASE_DEBUG",
        "CARGO_LLVM_COV",
        "LLVM_PROFILE_FILE",
    ] {
        command.env_remove(variable);
    }
    let status = command.status().expect("run cargo for the guests");
    if !status.success() {
        panic!(
            "building the wasm guests failed (see above). If the error says the wasm32-wasip2 \
             target is missing, run `rustup target add wasm32-wasip2`."
        );
    }

    let built = target_dir.join("wasm32-wasip2").join("release");
    let mut source = String::new();
    source.push_str("/// The six built-in tools: (crate name, component bytes).\n");
    source.push_str("pub const BUILTIN_TOOLS: &[(&str, &[u8])] = &[\n");
    for name in BUILTIN_TOOLS {
        let copied = copy_component(&built, &out_dir, name);
        writeln!(source, "    ({name:?}, include_bytes!({:?})),", copied.display()).unwrap();
    }
    source.push_str("];\n\n/// Test-only guests: (crate name, component path).\n");
    source.push_str("pub const TEST_GUESTS: &[(&str, &str)] = &[\n");
    for folder in TEST_GUEST_FOLDERS {
        for name in crate_dirs(&guest.join(folder)) {
            let file = format!("{folder}_{}", name.replace('-', "_"));
            let copied = copy_component(&built, &out_dir, &file);
            writeln!(source, "    ({:?}, {:?}),", format!("{folder}-{name}"), copied.display()).unwrap();
        }
    }
    source.push_str("];\n\n");
    source.push_str(&foreach_hostile(&crate_dirs(&guest.join("hostile"))));
    source.push_str("\n/// Guests `harmonia bench` measures: (crate name, component bytes).\n");
    source.push_str("pub const BENCH_GUESTS: &[(&str, &[u8])] = &[\n");
    for (name, file) in BENCH_GUESTS {
        let copied = out_dir.join(format!("{file}.wasm"));
        writeln!(source, "    ({name:?}, include_bytes!({:?})),", copied.display()).unwrap();
    }
    source.push_str("];\n");
    fs::write(out_dir.join("artifacts.rs"), source).expect("write artifacts.rs");
}

/// `<target>/wasm-guests`, found from `OUT_DIR` =
/// `<target>[/<triple>]/<profile>/build/<pkg>-<hash>/out`.
fn shared_target_dir(out_dir: &Path) -> PathBuf {
    let build = out_dir.ancestors().find(|dir| dir.file_name().is_some_and(|name| name == "build"));
    match build.and_then(Path::parent).and_then(Path::parent) {
        Some(target) => target.join("wasm-guests"),
        None => out_dir.join("wasm-guests"),
    }
}

/// The `foreach_hostile!` macro: `$mac!(hostile_<name>)` for every hostile
/// guest (`guest/hostile/<name>`, its tool named `hostile_<name>` with `_`
/// for `-`), as wasmtime's test-programs list theirs, so that a test file
/// invoking it with a macro that names each guest's test fails to compile
/// when a guest has none.
fn foreach_hostile(names: &[String]) -> String {
    let mut source = String::from(
        "/// Calls `$mac!(tool)` once per hostile guest under `guest/hostile/`, with its\n\
         /// tool name (`hostile_loop`, ...): `tests/all/hostile.rs` passes a macro that\n\
         /// names the guest's test, so a guest without one does not compile.\n\
         #[macro_export]\nmacro_rules! foreach_hostile {\n    ($mac:ident) => {\n",
    );
    for name in names {
        writeln!(source, "        $mac!(hostile_{});", name.replace('-', "_")).unwrap();
    }
    source.push_str("    };\n}\n");
    source
}

fn crate_dirs(folder: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(folder)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|entry| entry.path().join("Cargo.toml").is_file())
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn copy_component(built: &Path, out_dir: &Path, file_stem: &str) -> PathBuf {
    let from = built.join(format!("{file_stem}.wasm"));
    let to = out_dir.join(format!("{file_stem}.wasm"));
    fs::copy(&from, &to).unwrap_or_else(|error| panic!("copy {}: {error}", from.display()));
    to
}
