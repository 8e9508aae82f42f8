//! Keeps `docs/contract.md` true to the code, and the code citing it:
//! - every stable error code, the session's `call_refused` and every
//!   validator rule code the host knows is documented;
//! - every section a file cites as `docs/contract.md §n` exists;
//! - every test the document names as holding a guarantee exists, and so
//!   does every catalogue case it names;
//! - no file in the repository cites a contract outside it;
//! - and the guarantee of §7 that had no test of its own: a call's log
//!   records carry neither its arguments' values nor its data.

use harmonia_contract::codes::{STABLE_CODES, stable_code};
use harmonia_contract::liaison::validator::RuleCode;
use harmonia_host::config::HostConfig;
use harmonia_host::liaison::session::CALL_REFUSED;
use harmonia_host::log::MemoryLog;
use harmonia_host::{CallContext, Host};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The workspace root.
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ sits in the workspace root")
}

fn contract() -> String {
    std::fs::read_to_string(root().join("docs/contract.md")).expect("docs/contract.md is readable")
}

/// Every file of the repository: what git tracks or would track (not
/// what `.gitignore` excludes, such as build output and the peers'
/// builds), or, outside a git checkout, every file outside build output.
fn repository_files() -> Vec<PathBuf> {
    let mut files = git_files().unwrap_or_else(walked_files);
    files.sort();
    files
}

/// `git ls-files` of the root, tracked and untracked-but-not-ignored,
/// without the files deleted from the work tree; `None` outside a
/// checkout or without git.
fn git_files() -> Option<Vec<PathBuf>> {
    let output = std::process::Command::new("git")
        .args(["ls-files", "-z", "--cached", "--others", "--exclude-standard"])
        .current_dir(root())
        .output()
        .ok()
        .filter(|output| output.status.success())?;
    let listed = output.stdout.split(|&byte| byte == 0).filter(|name| !name.is_empty());
    let files = listed.map(|name| root().join(String::from_utf8_lossy(name).as_ref()));
    Some(files.filter(|path| path.is_file()).collect())
}

/// Every file under the root but build output, git's store and npm's.
fn walked_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![root().to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|error| panic!("{}: {error}", dir.display())) {
            let entry = entry.expect("a directory entry");
            let path = entry.path();
            let file_type = entry.file_type().expect("a file type");
            let name = entry.file_name();
            if file_type.is_dir() {
                let skipped = name.to_str().is_some_and(|name| {
                    name.starts_with("target") || matches!(name, ".git" | "node_modules")
                });
                if !skipped {
                    pending.push(path);
                }
            } else if file_type.is_file() {
                files.push(path);
            }
        }
    }
    files
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|window| window == needle)
}

/// Backticked spans of `text`, in order.
fn backticked(text: &str) -> impl Iterator<Item = &str> {
    text.split('`').skip(1).step_by(2)
}

#[test]
fn every_error_code_and_rule_code_is_documented() {
    let contract = contract();
    let documented: BTreeSet<&str> = backticked(&contract).collect();
    let codes = STABLE_CODES.iter().map(|stable| stable.code).chain([CALL_REFUSED]);
    let rules = RuleCode::ALL.iter().map(|rule| rule.as_str());
    let missing: Vec<&str> = codes.chain(rules).filter(|code| !documented.contains(code)).collect();
    assert!(missing.is_empty(), "docs/contract.md does not document {missing:?}");
    assert!(RuleCode::ALL.len() >= 25, "the rule list is the validator's, not a stub");
}

#[test]
fn every_rule_code_but_the_seal_has_a_validator_test_of_its_name() {
    let validator = std::fs::read_to_string(root().join("contract/src/liaison/validator/tests.rs")).unwrap();
    let missing: Vec<&str> = RuleCode::ALL
        .iter()
        .filter(|rule| **rule != RuleCode::TraceUnverified)
        .map(|rule| rule.as_str())
        .filter(|code| !validator.contains(&format!("#[test]\nfn {code}()")))
        .collect();
    assert!(missing.is_empty(), "docs/contract.md §5.0.6 says these have a test of their name: {missing:?}");
}

#[test]
fn every_stable_code_row_states_its_category_and_retryability() {
    let contract = contract();
    for stable in STABLE_CODES {
        let row_start = format!("| `{}` | ", stable.code);
        let row = contract
            .lines()
            .find(|line| line.starts_with(&row_start))
            .unwrap_or_else(|| panic!("no table row for `{}`", stable.code));
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let retryable = if stable.retryable { "yes" } else { "no" };
        assert_eq!(
            (cells[2], cells[3]),
            (stable.category.as_str(), retryable),
            "the row of `{}` disagrees with contract/src/codes.rs",
            stable.code
        );
    }
}

/// Section numbers the document has: `1`, `1.3`, `5.0.1`, ...
fn sections(contract: &str) -> BTreeSet<String> {
    contract
        .lines()
        .filter(|line| line.starts_with('#'))
        .filter_map(|line| line.trim_start_matches('#').split_whitespace().next())
        .map(|number| number.trim_end_matches('.').to_owned())
        .filter(|number| number.starts_with(|c: char| c.is_ascii_digit()))
        .collect()
}

#[test]
fn every_cited_section_exists() {
    let known = sections(&contract());
    assert!(known.contains("5.7") && known.contains("7"), "sections are read from the headings: {known:?}");
    let citation = "docs/contract.md §";
    let mut missing = Vec::new();
    for file in repository_files() {
        let Ok(text) = std::fs::read_to_string(&file) else { continue };
        for (_, after) in text.match_indices(citation).map(|(at, _)| text.split_at(at + citation.len())) {
            let number: String = after.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
            let number = number.trim_end_matches('.');
            // `§n` with no digit is a placeholder in prose, not a citation.
            if !number.is_empty() && !known.contains(number) {
                missing.push(format!("{}: §{number}", file.display()));
            }
        }
    }
    assert!(missing.is_empty(), "cited sections that docs/contract.md lacks: {missing:?}");
}

/// The names the document gives as tests: backticked spans in paragraphs
/// that start with `Tests` and in the last column of tables whose header
/// ends with `test`.
fn named_tests(contract: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut in_tests_paragraph = false;
    let mut in_test_table = false;
    for line in contract.lines() {
        if line.trim().is_empty() {
            in_tests_paragraph = false;
            in_test_table = false;
            continue;
        }
        if line.starts_with("Tests") {
            in_tests_paragraph = true;
        }
        if line.starts_with('|') && line.trim_end().ends_with("| test |") {
            in_test_table = true;
            continue;
        }
        let spans: Vec<&str> = if in_tests_paragraph {
            backticked(line).collect()
        } else if in_test_table {
            line.trim_end()
                .trim_end_matches('|')
                .rsplit('|')
                .next()
                .map(backticked)
                .into_iter()
                .flatten()
                .collect()
        } else {
            Vec::new()
        };
        names.extend(spans.into_iter().map(str::to_owned));
    }
    names
}

#[test]
fn every_test_the_document_names_exists() {
    let contract = contract();
    let mut functions = String::new();
    for file in repository_files().into_iter().filter(|file| file.extension().is_some_and(|ext| ext == "rs"))
    {
        functions.push_str(&std::fs::read_to_string(&file).unwrap_or_default());
    }
    let named = named_tests(&contract);
    assert!(named.len() > 150, "the test names are read from the document: {}", named.len());
    let mut missing = Vec::new();
    for name in &named {
        let last = name.rsplit("::").next().unwrap_or(name);
        let is_identifier = last.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            && RuleCode::parse(last).is_none()
            && stable_code(last).is_none();
        if name.starts_with("reject-") || name.starts_with("accepted-") || name.starts_with("grounded-") {
            if !root().join("tests/catalogue").join(name).is_dir() {
                missing.push(format!("catalogue case {name}"));
            }
        } else if is_identifier && last != "tests" && !functions.contains(&format!("fn {last}(")) {
            missing.push(name.clone());
        }
    }
    assert!(missing.is_empty(), "docs/contract.md names tests that do not exist: {missing:?}");
}

#[test]
fn no_file_cites_a_contract_outside_the_repository() {
    // Spelled in pieces so this file does not match itself.
    let outside = [["CONTRACT", ".md"].concat(), ["..", "/shared"].concat()];
    let mut citing = Vec::new();
    for file in repository_files() {
        let bytes = std::fs::read(&file).unwrap_or_else(|error| panic!("{}: {error}", file.display()));
        for needle in &outside {
            if contains(&bytes, needle.as_bytes()) {
                citing.push(format!("{} cites {needle}", file.display()));
            }
        }
    }
    assert!(citing.is_empty(), "{citing:?}");
    assert!(
        repository_files().iter().any(|file| file.ends_with("contract/src/codes.rs")),
        "the walk covers the source tree"
    );
}

fn strings(value: &Value, found: &mut Vec<String>) {
    match value {
        Value::String(text) => found.push(text.clone()),
        Value::Array(items) => items.iter().for_each(|item| strings(item, found)),
        Value::Object(map) => map.values().for_each(|item| strings(item, found)),
        _ => {}
    }
}

#[test]
fn call_records_carry_no_argument_values_or_data() {
    let log = Arc::new(MemoryLog::default());
    let host =
        Host::builder(HostConfig { mock: true, ..HostConfig::default() }).log(log.clone()).build().unwrap();
    let context =
        CallContext { workspace: Some("ws_demo".into()), trace_id: Some("trace-telemetry-1".into()) };
    let query_canary = "canaryquery7f3a";
    let job_canary = "canary-job-55c1";
    let found =
        host.call("search_trend_signals", &format!(r#"{{"query": "sqlite {query_canary}"}}"#), &context);
    let found = found.unwrap();
    assert!(found.is_success(), "{}", found.to_json());
    let missing = host.call("get_job_status", &format!(r#"{{"job_id": "{job_canary}"}}"#), &context).unwrap();
    assert_eq!(missing.error.as_ref().map(|error| error.code.as_str()), Some("job_not_found"));

    let mut data = Vec::new();
    strings(&Value::Object(found.data.clone().unwrap_or_default()), &mut data);
    data.extend(found.evidence.iter().filter_map(|item| item.reference.clone()));
    assert!(data.iter().any(|text| text.contains("SQLite")), "the search found data: {data:?}");

    let records = log.records();
    let finished: Vec<_> = records.iter().filter(|record| record.event == "call.finished").collect();
    assert_eq!(finished.len(), 2);
    let allowed = ["tool", "status", "duration_us", "receipts", "code", "category", "retryable", "trace_id"];
    for record in &finished {
        for (key, value) in &record.fields {
            assert!(allowed.contains(key), "call.finished carries `{key}`: {record}");
            for text in &data {
                assert!(!value.contains(text.as_str()), "`{key}` carries data `{text}`: {record}");
            }
        }
        assert!(record.fields.contains(&("trace_id", "trace-telemetry-1".to_owned())), "{record}");
    }
    for record in &records {
        let shown = record.to_string();
        assert!(
            !shown.contains(query_canary) && !shown.contains(job_canary),
            "an argument value is logged: {shown}"
        );
    }
}
