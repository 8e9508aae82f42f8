//! Skills: the files that gate which tools the agent may call.
//!
//! A skill is a file `skills/<name>/SKILL.md`: front matter between `---`
//! lines with `name`, `description` and `allowed-tools` (comma-separated,
//! optionally in brackets), then the workflow text. Activating a skill
//! records the SHA-256 of the whole file, binding an answer to the exact
//! text loaded. The five built-in skills are embedded in the binary;
//! reading a directory of skill files is the host's (`SkillSet::add`
//! takes each file parsed here).
//!
//! A file may start with a UTF-8 byte order mark and may end its lines
//! with CRLF; both are read as if absent (the hash is still of the bytes
//! as stored). A front matter key given twice is refused: which of the two
//! would gate the tools must never be a guess.

use crate::descriptor::Descriptor;
use crate::digest::sha256_hex;

/// One skill.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skill {
    /// `trend-scan`, ...
    pub name: String,
    /// One line on what the skill is for.
    pub description: String,
    /// Tools the skill may call.
    pub allowed_tools: Vec<String>,
    /// The workflow text after the front matter.
    pub workflow: String,
    /// Lowercase hex SHA-256 of the whole file.
    pub sha256: String,
    /// The whole file, as read: the bytes `sha256` digests (served as the
    /// skill's `SKILL.md` by the MCP skills extension).
    pub text: String,
}

/// Why skills could not be loaded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SkillError {
    /// The file is not a skill file.
    #[error("skill file {file}: {reason}")]
    Malformed {
        /// Which file.
        file: String,
        /// What is wrong.
        reason: String,
    },
    /// Two files name one skill.
    #[error("skill `{0}` is defined twice")]
    Duplicate(String),
    /// A skill names a tool no plugin provides.
    #[error("skill `{skill}` allows unknown tool `{tool}`")]
    UnknownTool {
        /// The skill.
        skill: String,
        /// The tool.
        tool: String,
    },
    /// The skill file and the tool's descriptor disagree.
    #[error("skill `{skill}` and tool `{tool}` disagree: {detail}")]
    Disagreement {
        /// The skill.
        skill: String,
        /// The tool.
        tool: String,
        /// Which side lists the other.
        detail: &'static str,
    },
}

const BUILTIN: &[(&str, &str)] = &[
    ("trend-scan", include_str!("../../../skills/trend-scan/SKILL.md")),
    ("signal-watch", include_str!("../../../skills/signal-watch/SKILL.md")),
    ("engagement-insights", include_str!("../../../skills/engagement-insights/SKILL.md")),
    ("posting-schedule", include_str!("../../../skills/posting-schedule/SKILL.md")),
    ("job-status", include_str!("../../../skills/job-status/SKILL.md")),
];

impl Skill {
    /// Parse a skill file's text; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Self, SkillError> {
        let malformed =
            |reason: &str| SkillError::Malformed { file: file.to_owned(), reason: reason.to_owned() };
        let sha256 = sha256_hex(text.as_bytes());
        let file_text = text.to_owned();
        let text = text.strip_prefix('\u{feff}').unwrap_or(text).replace("\r\n", "\n");
        let rest = text
            .strip_prefix("---\n")
            .ok_or_else(|| malformed("must start with a `---` front matter line"))?;
        let (front, workflow) =
            rest.split_once("\n---\n").ok_or_else(|| malformed("front matter is not closed by `---`"))?;
        let (mut name, mut description, mut tools) = (None, None, None);
        for line in front.lines().filter(|line| !line.trim().is_empty()) {
            let (key, value) =
                line.split_once(':').ok_or_else(|| malformed("front matter lines are `key: value`"))?;
            let slot = match key.trim() {
                "name" => &mut name,
                "description" => &mut description,
                "allowed-tools" => &mut tools,
                other => return Err(malformed(&format!("unknown front matter key `{other}`"))),
            };
            if slot.replace(value.trim().to_owned()).is_some() {
                return Err(malformed(&format!("front matter key `{}` is given twice", key.trim())));
            }
        }
        let name = name.filter(|name| !name.is_empty()).ok_or_else(|| malformed("`name` is required"))?;
        let description = description
            .filter(|text| !text.is_empty())
            .ok_or_else(|| malformed("`description` is required"))?;
        let tools = tools.ok_or_else(|| malformed("`allowed-tools` is required"))?;
        let allowed_tools: Vec<String> = tools
            .trim_start_matches('[')
            .trim_end_matches(']')
            .split(',')
            .map(|tool| tool.trim().trim_matches('"').to_owned())
            .filter(|tool| !tool.is_empty())
            .collect();
        if allowed_tools.is_empty() {
            return Err(malformed("`allowed-tools` names no tool"));
        }
        Ok(Self {
            name,
            description,
            allowed_tools,
            workflow: workflow.trim().to_owned(),
            sha256,
            text: file_text,
        })
    }

    /// Whether the skill allows `tool`.
    pub fn allows(&self, tool: &str) -> bool {
        self.allowed_tools.iter().any(|allowed| allowed == tool)
    }
}

/// The loaded skills.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SkillSet {
    skills: Vec<Skill>,
}

impl SkillSet {
    /// The five built-in skills.
    pub fn builtin() -> Self {
        let skills = BUILTIN
            .iter()
            .map(|(name, text)| Skill::parse(text, &format!("skills/{name}/SKILL.md")))
            .collect::<Result<Vec<_>, _>>()
            .unwrap_or_else(|error| panic!("built-in skill: {error}"));
        Self { skills }
    }

    /// Add one skill; a second skill with the same name is an error.
    pub fn add(&mut self, skill: Skill) -> Result<(), SkillError> {
        if self.get(&skill.name).is_some() {
            return Err(SkillError::Duplicate(skill.name));
        }
        self.skills.push(skill);
        Ok(())
    }

    /// The skill named `name`.
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|skill| skill.name == name)
    }

    /// Every skill.
    pub fn iter(&self) -> impl Iterator<Item = &Skill> {
        self.skills.iter()
    }

    /// Check the files against the loaded tools: every allowed tool exists,
    /// and a tool lists a skill exactly when the skill lists the tool.
    pub fn check_against<'a>(
        &self,
        tools: impl IntoIterator<Item = &'a Descriptor>,
    ) -> Result<(), SkillError> {
        let tools: Vec<&Descriptor> = tools.into_iter().collect();
        for skill in &self.skills {
            for tool in &skill.allowed_tools {
                let Some(descriptor) = tools.iter().find(|descriptor| &descriptor.name == tool) else {
                    return Err(SkillError::UnknownTool { skill: skill.name.clone(), tool: tool.clone() });
                };
                if !descriptor.skills.contains(&skill.name) {
                    return Err(SkillError::Disagreement {
                        skill: skill.name.clone(),
                        tool: tool.clone(),
                        detail: "the skill file allows the tool but the tool's descriptor does not list the skill",
                    });
                }
            }
        }
        for descriptor in &tools {
            for name in &descriptor.skills {
                if let Some(skill) = self.get(name)
                    && !skill.allows(&descriptor.name)
                {
                    return Err(SkillError::Disagreement {
                        skill: name.clone(),
                        tool: descriptor.name.clone(),
                        detail: "the tool's descriptor lists the skill but the skill file does not allow the tool",
                    });
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_skills_parse() {
        let set = SkillSet::builtin();
        let names: Vec<&str> = set.iter().map(|skill| skill.name.as_str()).collect();
        assert_eq!(
            names,
            ["trend-scan", "signal-watch", "engagement-insights", "posting-schedule", "job-status"]
        );
        let posting = set.get("posting-schedule").unwrap();
        assert_eq!(
            posting.allowed_tools,
            ["suggest_posting_windows", "get_engagement_insights", "get_operator_feed"]
        );
        assert_eq!(posting.sha256, sha256_hex(BUILTIN[3].1.as_bytes()));
    }

    #[test]
    fn malformed_files_are_refused() {
        for text in [
            "no front matter",
            "---\nname: x\n",
            "---\nname: x\ndescription: d\n---\nbody",
            "---\nname: x\ndescription: d\nallowed-tools:\n---\nbody",
            "---\nname: x\ndescription: d\nallowed-tools: a\ncolour: red\n---\nbody",
        ] {
            assert!(Skill::parse(text, "t").is_err(), "{text}");
        }
        let skill =
            Skill::parse("---\nname: x\ndescription: d\nallowed-tools: [a_b, \"c_d\"]\n---\nbody\n", "t")
                .unwrap();
        assert_eq!(skill.allowed_tools, ["a_b", "c_d"]);
        assert_eq!(skill.workflow, "body");
    }

    #[test]
    fn a_key_given_twice_is_refused() {
        for text in [
            "---\nname: x\ndescription: d\nallowed-tools: a\nallowed-tools: a, b\n---\nbody",
            "---\nname: x\nname: y\ndescription: d\nallowed-tools: a\n---\nbody",
            "---\nname: x\ndescription: d\n description :e\nallowed-tools: a\n---\nbody",
        ] {
            let error = Skill::parse(text, "t").unwrap_err().to_string();
            assert!(error.contains("is given twice"), "{error}");
        }
    }

    #[test]
    fn a_byte_order_mark_and_crlf_lines_read_as_plain_lf() {
        let plain = "---\nname: x\ndescription: d\nallowed-tools: a_b, c_d\n---\nstep one\nstep two\n";
        let windows = format!("\u{feff}{}", plain.replace('\n', "\r\n"));
        let (expected, read) = (Skill::parse(plain, "t").unwrap(), Skill::parse(&windows, "t").unwrap());
        assert_eq!(
            (&read.name, &read.description, &read.allowed_tools),
            (&expected.name, &expected.description, &expected.allowed_tools)
        );
        assert_eq!(read.workflow, "step one\nstep two");
        assert_eq!(read.sha256, sha256_hex(windows.as_bytes()));
        assert_ne!(read.sha256, expected.sha256);
    }
}
