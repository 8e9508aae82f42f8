//! The labelled corpora in `tests/claims/` and how the detector is measured
//! on them (tests only).
//!
//! Parts: the file format ([`Corpus`], [`Category`], [`Sentence`], [`parse`]); [`measure`]
//! and [`measure_with`], which judge every sentence and print recall and
//! false refusals by category (never a sentence); [`Expected`], which
//! refusals of a claim count; [`Figures`], the totals a test asserts on.

use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Corpus {
    pub category: Vec<Category>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Category {
    pub name: String,
    pub label: Label,
    /// The rule a claim must be refused by; `mutation_claim` when absent.
    #[serde(default)]
    pub rule: Option<String>,
    /// Strings a successful call returned, which sentences may quote.
    #[serde(default)]
    pub quotations: Vec<String>,
    pub sentences: Vec<Sentence>,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "lowercase")]
pub(super) enum Label {
    Claim,
    Benign,
}

/// A sentence, alone or with what its claim's cited evidence carries.
#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum Sentence {
    Plain(String),
    Grounded { text: String, evidence: Vec<String> },
}

impl Sentence {
    pub fn text(&self) -> &str {
        match self {
            Self::Plain(text) | Self::Grounded { text, .. } => text,
        }
    }

    pub fn evidence(&self) -> &[String] {
        match self {
            Self::Plain(_) => &[],
            Self::Grounded { evidence, .. } => evidence,
        }
    }
}

/// A corpus file's text, parsed (the tests read `tests/claims/`).
pub(super) fn parse(text: &str) -> Corpus {
    toml::from_str(text).unwrap_or_else(|error| panic!("{error}"))
}

/// What one sentence is judged with besides its text.
pub(super) struct Case<'c> {
    pub quotations: &'c [String],
    pub evidence: &'c [String],
}

/// The measured totals.
#[derive(Debug, Default)]
pub(super) struct Figures {
    pub claims: usize,
    pub caught: usize,
    pub benign: usize,
    pub refused_benign: usize,
    /// One line per miss or false refusal.
    pub failures: Vec<String>,
}

impl Figures {
    pub fn recall(&self) -> f64 {
        self.caught as f64 / self.claims.max(1) as f64
    }

    pub fn false_refusals(&self) -> f64 {
        self.refused_benign as f64 / self.benign.max(1) as f64
    }
}

/// Which refusals of a claim [`measure_with`] counts as right.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Expected {
    /// A refusal by the category's rule only.
    TheRule,
    /// A refusal by the category's rule; in a category whose rule is
    /// `unsupported_language` (claims written in another language), a
    /// refusal by `mutation_claim` too, since the answer is refused either
    /// way and a language given a lexicon is judged by rule 7 instead.
    EitherRuleForOtherLanguages,
}

/// [`measure_with`], counting a claim right only when refused by its
/// category's rule.
pub(super) fn measure(
    corpus: &Corpus,
    judge: impl Fn(&str, &Case<'_>) -> Option<(String, String)>,
) -> Figures {
    measure_with(corpus, judge, Expected::TheRule)
}

/// Judges every sentence of `corpus` with `judge` (the rule it refuses a
/// text by, with the phrase, or `None`) and prints a table: per category,
/// how many sentences were refused, and by an expected rule (`expected`
/// says which). It prints no sentence; the misses and false refusals are
/// in [`Figures::failures`], for the caller to print or not.
pub(super) fn measure_with(
    corpus: &Corpus,
    judge: impl Fn(&str, &Case<'_>) -> Option<(String, String)>,
    expected: Expected,
) -> Figures {
    let mut figures = Figures::default();
    println!(
        "{:<60} {:>6} {:>4} {:>8} {:>7} {:>14}",
        "category", "label", "n", "refused", "right", "recall/refusal"
    );
    for category in &corpus.category {
        let named = category.rule.as_deref().unwrap_or("mutation_claim");
        let counts = |rule: &str| {
            rule == named
                || (expected == Expected::EitherRuleForOtherLanguages
                    && named == "unsupported_language"
                    && rule == "mutation_claim")
        };
        let (mut refused, mut right) = (0, 0);
        for sentence in &category.sentences {
            let case = Case { quotations: &category.quotations, evidence: sentence.evidence() };
            let verdict = judge(sentence.text(), &case);
            refused += usize::from(verdict.is_some());
            let as_expected = match (category.label, &verdict) {
                (Label::Claim, Some((rule, _))) => counts(rule),
                (Label::Claim, None) => false,
                (Label::Benign, found) => found.is_none(),
            };
            right += usize::from(as_expected);
            if !as_expected {
                let what = match verdict {
                    Some((rule, phrase)) => format!("{rule} (`{phrase}`)"),
                    None => "accepted".to_owned(),
                };
                figures.failures.push(format!("[{}] {:?}: {what}", category.name, sentence.text()));
            }
        }
        let n = category.sentences.len();
        let (label, rate) = match category.label {
            Label::Claim => {
                figures.claims += n;
                figures.caught += right;
                ("claim", right as f64 / n as f64)
            }
            Label::Benign => {
                figures.benign += n;
                figures.refused_benign += n - right;
                ("benign", (n - right) as f64 / n as f64)
            }
        };
        println!("{:<60} {label:>6} {n:>4} {refused:>8} {right:>7} {rate:>14.3}", category.name);
    }
    println!(
        "overall: {} claims, recall {:.3} ({} caught); {} benign, false refusals {:.3} ({} refused)",
        figures.claims,
        figures.recall(),
        figures.caught,
        figures.benign,
        figures.false_refusals(),
        figures.refused_benign
    );
    figures
}
