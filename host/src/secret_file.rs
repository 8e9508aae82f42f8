//! Who may read a file that holds a secret (the trace key, the session
//! key, the database password): its owner only (mode 0600 or stricter),
//! or, for a file owned by root, also its group, read-only (mode 0640 or
//! stricter), as PostgreSQL accepts its own TLS key. The second form is how
//! Kubernetes mounts a Secret for a pod that runs as a non-root user with
//! an `fsGroup`: owned by root, readable by that group.

/// Why a file with these `mode` bits, owned by `uid`, may not hold a
/// secret; `None` when it may.
pub fn mode_problem(mode: u32, uid: u32) -> Option<String> {
    let permissions = mode & 0o777;
    if permissions & 0o077 == 0 || (uid == 0 && permissions & 0o037 == 0) {
        return None;
    }
    Some(format!(
        "is readable or writable by others (mode {permissions:o}): chmod 600 it (or, when root owns it, 640 for a group such as a Kubernetes fsGroup)"
    ))
}

#[cfg(unix)]
/// [`mode_problem`] of the file `metadata` describes.
pub fn metadata_problem(metadata: &std::fs::Metadata) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    mode_problem(metadata.mode(), metadata.uid())
}

#[cfg(test)]
mod tests {
    use super::mode_problem;

    #[test]
    fn only_the_owner_reads_a_secret_or_a_root_owned_files_group() {
        for (mode, uid) in [(0o600, 1000), (0o400, 1000), (0o600, 0), (0o640, 0), (0o440, 0), (0o400, 0)] {
            assert_eq!(mode_problem(mode, uid), None, "{mode:o} owned by {uid}");
        }
        for (mode, uid) in [(0o640, 1000), (0o644, 0), (0o660, 0), (0o604, 1000), (0o650, 0), (0o666, 1000)] {
            let problem = mode_problem(mode, uid).unwrap_or_else(|| panic!("{mode:o} owned by {uid}"));
            assert!(problem.contains(&format!("{mode:o}")), "{problem}");
        }
    }
}
