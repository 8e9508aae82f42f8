//! The precompiled component cache: entries are reused, and a corrupt,
//! truncated or mismatched entry is discarded and rebuilt, never loaded.

use harmonia_host::config::HostConfig;
use harmonia_host::log::MemoryLog;
use harmonia_host::{CallContext, Host};
use harmonia_testkit::tempdir::TempDir;
use std::path::Path;
use std::sync::Arc;

/// Start a host over the six tools with the cache in `dir`; the cache
/// outcome of each plugin, from the log.
fn start(dir: &Path, memory_mib: u32) -> (Host, Vec<String>) {
    let mut config = HostConfig::default();
    config.cache.dir = Some(dir.to_owned());
    config.limits.memory_mib = memory_mib;
    let log = Arc::new(MemoryLog::default());
    let host = Host::builder(config).log(log.clone()).build().unwrap();
    let outcomes = log
        .records()
        .into_iter()
        .filter(|record| record.event == "plugin.loaded")
        .filter_map(|record| {
            record.fields.into_iter().find(|(key, _)| *key == "cache").map(|(_, value)| value)
        })
        .collect();
    (host, outcomes)
}

fn entries(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "cwasm"))
        .collect();
    files.sort();
    files
}

fn works(host: &Host) {
    let envelope = host.call("get_job_status", r#"{"job_id": " "}"#, &CallContext::default()).unwrap();
    assert_eq!(envelope.error.unwrap().code, "invalid_job_id");
}

#[test]
fn entries_are_reused_and_broken_ones_rebuilt() {
    let dir = TempDir::new("cache");
    let (_, first) = start(dir.path(), 64);
    assert_eq!(first, vec!["miss"; 6]);
    let (host, second) = start(dir.path(), 64);
    assert_eq!(second, vec!["hit"; 6]);
    works(&host);
    // A running host maps its entries, like shared libraries: they may be
    // replaced or deleted under it, never rewritten in place.
    drop(host);

    let files = entries(dir.path());
    assert_eq!(files.len(), 6);
    let corrupt = &files[0];
    let mut bytes = std::fs::read(corrupt).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(corrupt, &bytes).unwrap();
    let truncated = &files[1];
    let bytes = std::fs::read(truncated).unwrap();
    std::fs::write(truncated, &bytes[..bytes.len() / 3]).unwrap();
    std::fs::write(&files[2], b"").unwrap();
    let mut trailer_lies = std::fs::read(&files[3]).unwrap();
    let length_at = trailer_lies.len() - 8;
    trailer_lies[length_at] ^= 1;
    std::fs::write(&files[3], &trailer_lies).unwrap();
    let (host, third) = start(dir.path(), 64);
    assert_eq!(third.iter().filter(|outcome| *outcome == "rebuilt").count(), 4, "{third:?}");
    assert_eq!(third.iter().filter(|outcome| *outcome == "hit").count(), 2, "{third:?}");
    works(&host);
    let (_, fourth) = start(dir.path(), 64);
    assert_eq!(fourth, vec!["hit"; 6], "rebuilt entries are stored again");
}

#[test]
fn a_running_host_keeps_working_when_its_entries_are_replaced_or_deleted() {
    let dir = TempDir::new("cache-replaced");
    start(dir.path(), 64);
    let (host, outcomes) = start(dir.path(), 64);
    assert_eq!(outcomes, vec!["hit"; 6]);
    for (index, entry) in entries(dir.path()).iter().enumerate() {
        if index % 2 == 0 {
            std::fs::remove_file(entry).unwrap();
        } else {
            let replacement = entry.with_extension("new");
            std::fs::write(&replacement, b"not an artifact").unwrap();
            std::fs::rename(&replacement, entry).unwrap();
        }
    }
    for _ in 0..3 {
        works(&host);
    }
    let (host, outcomes) = start(dir.path(), 64);
    assert_eq!(outcomes.iter().filter(|outcome| *outcome == "miss").count(), 3, "{outcomes:?}");
    assert_eq!(outcomes.iter().filter(|outcome| *outcome == "rebuilt").count(), 3, "{outcomes:?}");
    works(&host);
}

#[test]
fn an_entry_from_another_engine_is_never_loaded() {
    let dir = TempDir::new("cache-mismatch");
    start(dir.path(), 64);
    let ours = entries(dir.path());
    // Another engine (other memory limits) has another key: its own entries.
    let (_, other) = start(dir.path(), 32);
    assert_eq!(other, vec!["miss"; 6]);
    let theirs: Vec<_> = entries(dir.path()).into_iter().filter(|path| !ours.contains(path)).collect();
    assert_eq!(theirs.len(), 6);
    // Put the other engine's (checksummed, valid) artifacts under our names.
    for (mine, foreign) in ours.iter().zip(&theirs) {
        let component = mine.file_name().unwrap().to_string_lossy().split('-').next().unwrap().to_owned();
        let same_component = theirs
            .iter()
            .find(|path| path.file_name().unwrap().to_string_lossy().starts_with(&component))
            .unwrap_or(foreign);
        std::fs::copy(same_component, mine).unwrap();
    }
    let (host, outcomes) = start(dir.path(), 64);
    assert_eq!(outcomes, vec!["rebuilt"; 6]);
    works(&host);
}

#[test]
fn a_directory_others_can_write_is_not_used() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new("cache-open");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let (host, outcomes) = start(dir.path(), 64);
    assert_eq!(outcomes, vec!["bypassed"; 6]);
    assert!(entries(dir.path()).is_empty());
    works(&host);
}

#[test]
fn the_privacy_check_never_writes_through_a_planted_link() {
    let dir = TempDir::new("cache-planted");
    let victim_dir = TempDir::new("cache-victim");
    let victim = victim_dir.path().join("precious.txt");
    std::fs::write(&victim, b"precious").unwrap();
    // The file the old privacy check wrote before checking anything.
    std::os::unix::fs::symlink(&victim, dir.path().join(format!(".owner-{}", std::process::id()))).unwrap();
    let (host, outcomes) = start(dir.path(), 64);
    assert_eq!(outcomes, vec!["miss"; 6]);
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious", "the cache wrote through a planted link");
    works(&host);
}

#[test]
fn a_cache_directory_that_is_a_link_is_not_used() {
    let real = TempDir::new("cache-real");
    let parent = TempDir::new("cache-parent");
    let link = parent.path().join("components");
    std::os::unix::fs::symlink(real.path(), &link).unwrap();
    let (host, outcomes) = start(&link, 64);
    assert_eq!(outcomes, vec!["bypassed"; 6]);
    assert!(entries(real.path()).is_empty());
    works(&host);
}

/// Start once so every entry exists, then apply `tamper` to each entry and
/// start again: every outcome must be `rebuilt`, never `hit`.
fn tampered_entries_are_rebuilt(label: &str, tamper: impl Fn(&Path, &Path)) {
    let dir = TempDir::new(label);
    let elsewhere = TempDir::new(&format!("{label}-elsewhere"));
    start(dir.path(), 64);
    for entry in entries(dir.path()) {
        tamper(&entry, elsewhere.path());
    }
    let (host, outcomes) = start(dir.path(), 64);
    assert_eq!(outcomes, vec!["rebuilt"; 6], "{label}");
    works(&host);
    let (_, again) = start(dir.path(), 64);
    assert_eq!(again, vec!["hit"; 6], "{label}: rebuilt entries are stored again as plain files");
}

#[test]
fn an_entry_that_is_a_link_is_never_loaded() {
    tampered_entries_are_rebuilt("cache-entry-link", |entry, elsewhere| {
        let moved = elsewhere.join(entry.file_name().unwrap());
        std::fs::rename(entry, &moved).unwrap();
        std::os::unix::fs::symlink(&moved, entry).unwrap();
    });
}

#[test]
fn an_entry_with_a_second_hard_link_is_never_loaded() {
    tampered_entries_are_rebuilt("cache-entry-hardlink", |entry, elsewhere| {
        std::fs::hard_link(entry, elsewhere.join(entry.file_name().unwrap())).unwrap();
    });
}

#[test]
fn an_entry_others_can_write_is_never_loaded() {
    use std::os::unix::fs::PermissionsExt;
    tampered_entries_are_rebuilt("cache-entry-open", |entry, _| {
        std::fs::set_permissions(entry, std::fs::Permissions::from_mode(0o666)).unwrap();
    });
}

#[test]
fn entries_are_created_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new("cache-mode");
    start(dir.path(), 64);
    for entry in entries(dir.path()) {
        let mode = std::fs::metadata(&entry).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", entry.display());
    }
}
