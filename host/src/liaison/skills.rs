//! Skills (docs/contract.md §4): the parsing and the checks are the
//! contract crate's `liaison::skills`, re-exported here; the host reads a
//! directory of skill files.

pub use harmonia_contract::liaison::skills::*;
use std::path::{Path, PathBuf};

/// Why a directory of skills could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The directory or a skill file could not be read.
    #[error("skill file {}: {source}", path.display())]
    Unreadable {
        /// The directory or file.
        path: PathBuf,
        /// What the file system said.
        source: std::io::Error,
    },
    /// A file is not a skill file, or two files name one skill.
    #[error(transparent)]
    Skill(#[from] SkillError),
}

fn unreadable(path: &Path, source: std::io::Error) -> LoadError {
    LoadError::Unreadable { path: path.to_owned(), source }
}

/// Every `*/SKILL.md` under `dir`.
pub fn load_dir(dir: &Path) -> Result<SkillSet, LoadError> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|source| unreadable(dir, source))?
        .filter_map(Result::ok)
        .map(|entry| entry.path().join("SKILL.md"))
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    let mut set = SkillSet::default();
    for file in files {
        let text = std::fs::read_to_string(&file).map_err(|source| unreadable(&file, source))?;
        set.add(Skill::parse(&text, &file.display().to_string())?)?;
    }
    Ok(set)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn a_missing_directory_names_it_and_keeps_the_io_error_as_the_source() {
        let dir = std::env::temp_dir().join(format!("harmonia-no-skills-{}", std::process::id()));
        let error = load_dir(&dir).unwrap_err();
        assert!(error.to_string().starts_with(&format!("skill file {}: ", dir.display())), "{error}");
        let source = error.source().and_then(|source| source.downcast_ref::<std::io::Error>());
        assert_eq!(source.map(std::io::Error::kind), Some(std::io::ErrorKind::NotFound));
    }

    #[test]
    fn a_skill_defined_twice_is_the_contracts_error() {
        let dir = std::env::temp_dir().join(format!("harmonia-twice-skills-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for name in ["a", "b"] {
            std::fs::create_dir_all(dir.join(name)).unwrap();
            let text = "---\nname: twice\ndescription: d\nallowed-tools: a_b\n---\nstep\n";
            std::fs::write(dir.join(name).join("SKILL.md"), text).unwrap();
        }
        let error = load_dir(&dir).unwrap_err();
        assert!(
            matches!(&error, LoadError::Skill(SkillError::Duplicate(name)) if name == "twice"),
            "{error}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
