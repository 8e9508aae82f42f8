//! The validator's throughput: verdicts per second over the evaluation
//! catalogue's answers (`tests/catalogue/`, read from the checkout this
//! binary was built from) and over the grounded job-status answer padded
//! to the answer schema's 4,000 characters; then rule 7's effect and
//! language checks alone over 64 KiB of text, more than an answer may hold
//! (docs/contract.md §5.7: they stay linear in the text). The padding is
//! sentences whose effect words every frame excuses, so the detector reads
//! to the end.

use super::Report;
use anyhow::{Context, Result};
use harmonia_contract::liaison::answer::MAX_ANSWER_CHARS;
use harmonia_contract::liaison::mutation::{self, Context as Quoted};
use harmonia_contract::liaison::trace::Trace;
use harmonia_contract::liaison::validator::{Mode, validate};
use harmonia_host::liaison::skills::SkillSet;
use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, Instant};

/// How long each figure is measured for.
const WINDOW: Duration = Duration::from_secs(2);
const QUICK_WINDOW: Duration = Duration::from_millis(300);

/// The size of the text given to rule 7's checks alone.
const LARGE_TEXT_BYTES: usize = 64 * 1024;

/// A sentence with effect words that every frame excuses, so the detector
/// reads the whole answer (a negation, another actor, a recommendation).
const PADDING: &str =
    "Nothing was published by me, the operator signed the draft and I suggest you publish it. ";

fn case(dir: &Path) -> Result<(Trace, Value, Mode)> {
    let read = |file: &str| -> Result<Value> {
        let text = std::fs::read_to_string(dir.join(file)).with_context(|| format!("{}", dir.display()))?;
        Ok(serde_json::from_str(&text)?)
    };
    let expected = read("expected.json")?;
    let mode = if expected["mode"] == "submission" { Mode::Submission } else { Mode::Review };
    Ok((Trace::parse(&read("trace.json")?)?, read("answer.json")?, mode))
}

/// Verdicts per second of `validate` over `cases`, round-robin, for `window`.
fn per_second(cases: &[(Trace, Value, Mode)], skills: &SkillSet, window: Duration) -> f64 {
    let started = Instant::now();
    let mut verdicts = 0u64;
    while started.elapsed() < window {
        for (trace, answer, mode) in cases {
            std::hint::black_box(validate(trace, answer, skills, *mode));
            verdicts += 1;
        }
    }
    verdicts as f64 / started.elapsed().as_secs_f64()
}

pub(super) fn run(quick: bool, out: &mut Report) -> Result<()> {
    let window = if quick { QUICK_WINDOW } else { WINDOW };
    let catalogue = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/catalogue");
    let Ok(entries) = std::fs::read_dir(&catalogue) else {
        out.say(format!("\nvalidator: skipped, no catalogue at {}", catalogue.display()));
        return Ok(());
    };
    let mut dirs: Vec<_> = entries.filter_map(Result::ok).map(|entry| entry.path()).collect();
    dirs.retain(|dir| dir.join("answer.json").is_file());
    dirs.sort();
    let cases = dirs.iter().map(|dir| case(dir)).collect::<Result<Vec<_>>>()?;
    let skills = SkillSet::builtin();
    let catalogue_rate = per_second(&cases, &skills, window);

    let (trace, mut answer, mode) = case(&catalogue.join("grounded-job-status"))?;
    let grounded = answer["answer"].as_str().unwrap_or_default().to_owned();
    let padding = PADDING.repeat(MAX_ANSWER_CHARS.saturating_sub(grounded.len() + 1) / PADDING.len());
    answer["answer"] = json!(format!("{grounded} {padding}"));
    let full = [(trace, answer, mode)];
    let verdict = validate(&full[0].0, &full[0].1, &skills, mode);
    anyhow::ensure!(verdict.accepted, "the padded answer is refused: {verdict:?}");
    let full_rate = per_second(&full, &skills, window);

    let text = PADDING.repeat(LARGE_TEXT_BYTES / PADDING.len());
    anyhow::ensure!(mutation::find_in(&text, &Quoted::default()).is_none(), "the 64 KiB text holds a claim");
    let started = Instant::now();
    let mut texts = 0u64;
    while started.elapsed() < window {
        std::hint::black_box(mutation::find_in(&text, &Quoted::default()));
        std::hint::black_box(mutation::find_foreign(&text, &[]));
        texts += 1;
    }
    let large_rate = texts as f64 / started.elapsed().as_secs_f64();

    out.say(format!(
        "\nvalidator ({} catalogue answers; effect and language checks on 64 KiB):",
        cases.len()
    ));
    out.say(format!("  catalogue answers:           {catalogue_rate:10.0} verdicts/s"));
    out.say(format!("  a {MAX_ANSWER_CHARS}-character answer:   {full_rate:10.0} verdicts/s"));
    out.say(format!("  64 KiB text, rule 7 alone:   {large_rate:10.1} texts/s"));
    out.insert("validator_catalogue_per_s", json!(catalogue_rate));
    out.insert("validator_full_answer_per_s", json!(full_rate));
    out.insert("validator_rule7_64kib_per_s", json!(large_rate));
    Ok(())
}
