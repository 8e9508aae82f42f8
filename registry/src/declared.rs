//! A lock entry's name is the tool its component declares.
//!
//! Trust rules are looked up by the lock entry's name
//! (`[plugins.trust.plugins.NAME]`), while the host serves a component
//! under the name its descriptor declares. Were the two allowed to
//! differ, a component declaring `get_job_status`, signed only by a key
//! trusted for `tools/*`, could be locked as `weekly_digest` and serve
//! `get_job_status` past the rule that lets only `jobs.pub` sign it. So
//! the names must agree, and a mismatch is refused wherever a component
//! meets its lock entry: at pull (nothing is locked), at `plugin verify`
//! and at every load (an earlier lock holding such an entry is refused,
//! saying how to fix it).
//!
//! This crate cannot run a component; its caller can (the host compiles
//! it and calls `describe`), so a pull is handed a [`Describe`].

use crate::RegistryError;
use std::path::Path;

/// The tool a component's bytes declare (the host compiles them and calls
/// `describe`), or why it declares none.
pub type Describe<'a> = &'a dyn Fn(&[u8]) -> Result<String, String>;

/// Where the names are compared; the fix the refusal names differs.
#[derive(Clone, Copy, Debug)]
pub enum NameCheck<'a> {
    /// A pull about to lock the component: nothing is locked.
    Pull,
    /// An entry of the lock file at this path.
    Lock(&'a Path),
}

/// Refuse plugin `locked` (pulled by `reference`) unless `declared`, the
/// tool its component declares, is its name.
pub fn check(locked: &str, reference: &str, declared: &str, at: NameCheck<'_>) -> Result<(), RegistryError> {
    if locked == declared {
        return Ok(());
    }
    let fix = match at {
        NameCheck::Pull => format!(
            "nothing was locked: pull it with --name {declared}, so that the rule for `{declared}` decides who may sign it"
        ),
        NameCheck::Lock(lock) => format!(
            "remove the entry `{locked}` from {} and pull {reference} again with --name {declared}, \
             so that the rule for `{declared}` decides who may sign it",
            lock.display()
        ),
    };
    Err(RegistryError::NotTheDeclaredTool {
        locked: locked.to_owned(),
        declared: declared.to_owned(),
        reference: reference.to_owned(),
        fix,
    })
}

/// Describe `component` of `reference` with `describe`: the tool it
/// declares, or a refusal naming the reference.
pub fn declared_by(
    describe: Describe<'_>,
    reference: &str,
    component: &[u8],
) -> Result<String, RegistryError> {
    describe(component)
        .map_err(|reason| RegistryError::Undescribed { reference: reference.to_owned(), reason })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_that_is_not_the_declared_tool_is_refused_naming_both_and_the_fix() {
        let reference = "oci://r:5000/tools/weekly_digest:v1";
        assert!(check("get_job_status", reference, "get_job_status", NameCheck::Pull).is_ok());
        let pull =
            check("weekly_digest", reference, "get_job_status", NameCheck::Pull).unwrap_err().to_string();
        for named in
            ["`weekly_digest`", "`get_job_status`", reference, "nothing was locked", "--name get_job_status"]
        {
            assert!(pull.contains(named), "{named}: {pull}");
        }
        let lock = Path::new("/srv/plugins/plugins.lock");
        let load = check("weekly_digest", reference, "get_job_status", NameCheck::Lock(lock))
            .unwrap_err()
            .to_string();
        for named in
            ["`weekly_digest`", "`get_job_status`", "/srv/plugins/plugins.lock", "--name get_job_status"]
        {
            assert!(load.contains(named), "{named}: {load}");
        }
    }
}
