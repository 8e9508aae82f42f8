//! Property tests: the host's parsers and the validator on arbitrary
//! input never panic, always answer with a typed result, and round-trip
//! what they accept.
//!
//! Cases per property are fixed (`CASES`, `SQLITE_CASES`) so a run's total
//! is known: 8 × 512 + 2 × 64 = 4,224 generated cases.

use harmonia_contract::codes::Category;
use harmonia_contract::envelope::{Envelope, ErrorObject, EvidenceItem, Provenance};
use harmonia_contract::liaison::trace::Trace;
use harmonia_contract::liaison::validator::{Mode, validate};
use harmonia_contract::workspace_document::WorkspaceDocument;
use harmonia_host::capability::workspace::WorkspaceRead;
use harmonia_host::capability::workspace::sqlite::{SqliteSource, import};
use harmonia_host::config::HostConfig;
use harmonia_host::liaison::skills::SkillSet;
use harmonia_testkit::tempdir::TempDir;
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use std::time::{Duration, Instant};

const CASES: u32 = 512;
const SQLITE_CASES: u32 = 64;

/// A fixed number of cases, and no failure files written into the tree
/// (a failure prints its minimal input instead).
fn config(cases: u32) -> ProptestConfig {
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| json!(f)),
        ".{0,12}".prop_map(Value::String),
        prop::sample::select(vec![
            "status",
            "success",
            "error",
            "data",
            "evidence",
            "ev-",
            "live",
            "mock",
            "validation"
        ])
        .prop_map(|s| Value::String(s.to_owned())),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    ".{0,8}",
                    prop::sample::select(vec![
                        "status",
                        "data",
                        "error",
                        "evidence",
                        "evidenceId",
                        "source",
                        "provenance",
                        "reference",
                        "code",
                        "category",
                        "message",
                        "retryable",
                        "answer",
                        "claims",
                        "kind",
                        "sequence",
                        "skill",
                    ])
                    .prop_map(str::to_owned),
                ],
                inner,
                0..6
            )
            .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

fn object() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::btree_map(".{1,8}", json_value(), 0..5).prop_map(|map| map.into_iter().collect())
}

fn category() -> impl Strategy<Value = Category> {
    prop::sample::select(vec![
        Category::Validation,
        Category::Authorization,
        Category::NotFound,
        Category::Dependency,
        Category::ProviderPermanent,
    ])
}

fn evidence_item() -> impl Strategy<Value = EvidenceItem> {
    ("[a-z_]{1,30}", any::<bool>(), prop::option::of(".{0,40}")).prop_map(|(source, mock, reference)| {
        let provenance = if mock { Provenance::Mock } else { Provenance::Live };
        EvidenceItem::new(&source, provenance, reference.as_deref())
    })
}

fn valid_envelope() -> impl Strategy<Value = Envelope> {
    prop_oneof![
        (object(), prop::collection::vec(evidence_item(), 0..8))
            .prop_map(|(data, evidence)| Envelope::success(data, evidence)),
        ("[a-z0-9_]{1,40}", category(), ".{1,60}", any::<bool>()).prop_map(
            |(code, category, message, retryable)| {
                Envelope::failure(ErrorObject { code, category, message, retryable })
            }
        ),
    ]
}

proptest! {
    #![proptest_config(config(CASES))]

    #[test]
    fn valid_envelopes_round_trip(envelope in valid_envelope()) {
        prop_assert!(envelope.validate().is_ok());
        prop_assert_eq!(Envelope::parse(&envelope.to_json()).unwrap(), envelope);
    }

    #[test]
    fn an_extra_key_anywhere_is_rejected(envelope in valid_envelope(), key in "[a-zA-Z]{1,10}", where_ in 0usize..3) {
        let mut value = envelope.to_value();
        let target = match where_ {
            1 if value["error"].is_object() => &mut value["error"],
            2 if value["evidence"].as_array().is_some_and(|items| !items.is_empty()) => &mut value["evidence"][0],
            _ => &mut value,
        };
        let fields = target.as_object_mut().unwrap();
        prop_assume!(!fields.contains_key(&key));
        fields.insert(key, json!(1));
        prop_assert!(Envelope::from_value(&value).is_err());
    }

    #[test]
    fn arbitrary_json_is_a_typed_answer_and_accepted_envelopes_round_trip(value in json_value()) {
        if let Ok(envelope) = Envelope::from_value(&value) {
            prop_assert_eq!(Envelope::from_value(&envelope.to_value()).unwrap(), envelope);
        }
    }

    #[test]
    fn arbitrary_text_never_panics_the_parsers(text in ".{0,200}") {
        let _ = Envelope::parse(&text);
        let _ = Trace::parse_str(&text);
        let _ = WorkspaceDocument::parse(&text);
        let _ = HostConfig::from_toml_str(&text);
    }

    #[test]
    fn the_validator_answers_arbitrary_answers(answer in json_value()) {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("catalogue/grounded-job-status");
        let trace = Trace::parse_str(&std::fs::read_to_string(dir.join("trace.json")).unwrap()).unwrap();
        let verdict = validate(&trace, &answer, &SkillSet::builtin(), Mode::Review);
        prop_assert_eq!(verdict.accepted, verdict.rule.is_none());
        prop_assert!(!verdict.accepted, "random JSON is never a grounded answer");
        prop_assert!(verdict.reason.unwrap().lines().count() == 1);
    }

    #[test]
    fn the_validator_answers_arbitrary_traces(entries in prop::collection::vec(json_value(), 0..6), answer in json_value()) {
        if let Ok(trace) = Trace::parse(&Value::Array(entries)) {
            let verdict = validate(&trace, &answer, &SkillSet::builtin(), Mode::Submission);
            prop_assert_eq!(verdict.accepted, verdict.rule.is_none());
        }
    }

    #[test]
    fn config_tables_with_arbitrary_values_never_panic(
        section in prop::sample::select(vec!["", "limits", "plugins", "public_web", "workspace", "cache", "wasi", "public_web.routes", "plugins.pins"]),
        key in prop::sample::select(vec!["memory_mib", "fuel", "allow", "source", "path", "dir", "mock", "enabled", "routes", "x"]),
        value in prop::sample::select(vec!["0", "1", "-1", "4294967296", "\"sqlite\"", "\"http\"", "[]", "[\"https://a.example\"]", "true", "{}", "\"\"", "1.5"]),
    ) {
        let text = if section.is_empty() { format!("{key} = {value}\n") } else { format!("[{section}]\n{key} = {value}\n") };
        match HostConfig::from_toml_str(&text) {
            Ok(config) => prop_assert!(config.check().is_ok()),
            Err(error) => prop_assert_eq!(error.to_string().lines().count(), 1),
        }
    }

    #[test]
    fn workspace_documents_parse_or_name_the_path_of_their_first_error(value in json_value()) {
        match WorkspaceDocument::from_value(&value) {
            Ok(document) => prop_assert!(!document.workspace_id.is_empty()),
            Err(error) => prop_assert!(error.path.starts_with('$')),
        }
    }
}

fn post() -> impl Strategy<Value = Value> {
    (
        "[a-z0-9]{1,6}",
        prop_oneof![Just(Value::Null), (0u64..1000).prop_map(|n| json!(n)), Just(json!(-1)), Just(json!("12"))],
        prop_oneof![
            Just(Value::Null),
            (1u32..28, 0u32..24).prop_map(|(day, hour)| json!(format!("2026-11-{day:02}T{hour:02}:00:00Z"))),
            Just(json!("yesterday")),
        ],
    )
        .prop_map(|(id, likes, at)| json!({"postId": format!("p-{id}"), "text": "t", "likes": likes, "publishedAt": at}))
}

proptest! {
    #![proptest_config(config(SQLITE_CASES))]

    #[test]
    fn imports_are_all_or_nothing(posts in prop::collection::vec(post(), 0..12)) {
        let dir = TempDir::new("prop-import");
        let db = dir.path().join("h.db");
        let seed = WorkspaceDocument::parse(harmonia_host::capability::workspace::mock::DEMO_WORKSPACE_JSON).unwrap();
        import(&db, &seed).unwrap();
        let before = std::fs::read(&db).unwrap();
        let candidate = json!({"workspaceId": "ws_demo", "posts": posts});
        let source = std::sync::Arc::new(SqliteSource::new(db.clone()));
        let deadline = Instant::now() + Duration::from_secs(5);
        match WorkspaceDocument::from_value(&candidate) {
            Err(_) => prop_assert_eq!(std::fs::read(&db).unwrap(), before),
            Ok(document) => {
                import(&db, &document).unwrap();
                let (read, _) = harmonia_testkit::read_source(&source, "ws_demo", WorkspaceRead::Engagement, deadline);
                let engagement: Value = serde_json::from_str(&read.unwrap().body).unwrap();
                prop_assert_eq!(engagement["posts"].as_array().unwrap().len(), document.measured_posts().count());
            }
        }
    }

    #[test]
    fn the_read_only_store_never_changes_under_reads(job in ".{0,20}") {
        let dir = TempDir::new("prop-readonly");
        let db = dir.path().join("h.db");
        let seed = WorkspaceDocument::parse(harmonia_host::capability::workspace::mock::DEMO_WORKSPACE_JSON).unwrap();
        import(&db, &seed).unwrap();
        let before = std::fs::read(&db).unwrap();
        let source = std::sync::Arc::new(SqliteSource::new(db.clone()));
        let deadline = Instant::now() + Duration::from_secs(5);
        for read in [WorkspaceRead::Engagement, WorkspaceRead::Feed, WorkspaceRead::Job(&job)] {
            let _ = harmonia_testkit::read_source(&source, "ws_demo", read, deadline);
            let _ = harmonia_testkit::read_source(&source, &job, read, deadline);
        }
        prop_assert_eq!(std::fs::read(&db).unwrap(), before);
    }
}
