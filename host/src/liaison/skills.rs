//! Skills (docs/contract.md §4): the parsing and the checks are the
//! contract crate's `liaison::skills`, re-exported here; the host reads a
//! directory of skill files.

pub use harmonia_contract::liaison::skills::*;
use std::path::Path;

/// Every `*/SKILL.md` under `dir`.
pub fn load_dir(dir: &Path) -> Result<SkillSet, SkillError> {
    let unreadable = |reason: String| SkillError::Malformed { file: dir.display().to_string(), reason };
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|error| unreadable(error.to_string()))?
        .filter_map(Result::ok)
        .map(|entry| entry.path().join("SKILL.md"))
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    let mut set = SkillSet::default();
    for file in files {
        let text = std::fs::read_to_string(&file).map_err(|error| unreadable(error.to_string()))?;
        set.add(Skill::parse(&text, &file.display().to_string())?)?;
    }
    Ok(set)
}
