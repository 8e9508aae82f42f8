//! The validator on arbitrary traces and answers: never panics, always a
//! verdict with a one-line reason.
#![no_main]

use harmonia_contract::liaison::skills::SkillSet;
use harmonia_contract::liaison::trace::Trace;
use harmonia_contract::liaison::validator::{Mode, validate};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

const GROUNDED_TRACE: &str = include_str!("../../tests/catalogue/grounded-job-status/trace.json");

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(value) = serde_json::from_str::<Value>(&text) else { return };
    let skills = SkillSet::builtin();
    // `[trace, answer]` fuzzes both; anything else is an answer to a real trace.
    let (trace, answer) = match value.as_array().map(Vec::as_slice) {
        Some([trace, answer]) => match Trace::parse(trace) {
            Ok(trace) => (trace, answer.clone()),
            Err(_) => return,
        },
        _ => (Trace::parse_str(GROUNDED_TRACE).expect("catalogue trace"), value),
    };
    for mode in [Mode::Review, Mode::Submission] {
        let verdict = validate(&trace, &answer, &skills, mode);
        assert_eq!(verdict.accepted, verdict.rule.is_none());
        if let Some(reason) = verdict.reason {
            assert_eq!(reason.lines().count(), 1);
        }
    }
});
