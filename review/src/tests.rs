//! The page's markup, checked without a browser: whatever the trace and
//! the answer hold, every tag and attribute on the page is one this crate
//! writes, and every link stays inside the page.

use super::*;
use harmonia_contract::liaison::trace::{EntryKind, Trace, TraceEntry};
use serde_json::json;

const TAGS: &[&str] = &[
    "!DOCTYPE", "html", "head", "meta", "title", "style", "body", "a", "header", "p", "h1", "h2", "h3",
    "nav", "ul", "ol", "li", "main", "section", "div", "span", "code", "strong", "em", "kbd", "mark", "dl",
    "dt", "dd", "details", "summary", "table", "caption", "thead", "tbody", "tr", "th", "td", "footer",
];
const ATTRIBUTES: &[&str] = &[
    "lang",
    "charset",
    "http-equiv",
    "content",
    "name",
    "class",
    "id",
    "href",
    "aria-describedby",
    "aria-labelledby",
    "aria-label",
    "aria-hidden",
    "role",
    "scope",
];

/// Every tag of `page` outside `<style>`, as (name, [(attribute, value)]).
fn tags(page: &str) -> Vec<(String, Vec<(String, String)>)> {
    let body = page.split("</style>").nth(1).expect("a stylesheet, then the body");
    let head = page.split("<style>").next().expect("a head");
    let mut found = Vec::new();
    for part in [head, body] {
        for tag in part.split('<').skip(1) {
            let inside = tag.split('>').next().unwrap_or("");
            let inside = inside.trim_start_matches('/');
            let (name, mut rest) = inside.split_once(' ').unwrap_or((inside, ""));
            let mut attributes = Vec::new();
            while let Some((attribute, after)) = rest.trim_start().split_once("=\"") {
                let (value, after) = after.split_once('"').expect("a closed attribute value");
                attributes.push((attribute.to_owned(), value.to_owned()));
                rest = after;
            }
            found.push((name.to_owned(), attributes));
        }
    }
    found
}

fn hostile(place: &str) -> String {
    format!(
        "<script>alert('{place}')</script><img src=x onerror=\"alert(1)\"> javascript:alert(1) \u{202e}x\" onfocus=\"y"
    )
}

#[test]
fn hostile_strings_never_become_markup() {
    let mut activation = TraceEntry::new(1, EntryKind::SkillActivation);
    activation.skill = Some(hostile("skill"));
    activation.sha256 = Some(hostile("sha"));
    let mut call = TraceEntry::new(2, EntryKind::ToolCall);
    call.name = Some(hostile("tool"));
    call.args = Some(json!({ hostile("key"): hostile("value") }));
    call.attempt = Some(1);
    call.duration_ms = Some(1.0);
    call.response = Some(json!({"status": "success", "data": {"x": hostile("data")}, "error": null,
        "evidence": [{"evidenceId": hostile("id"), "source": hostile("source"), "provenance": hostile("p"),
        "reference": hostile("reference")}]}));
    call.receipts =
        Some(vec![json!({"capability": hostile("c"), "target": hostile("t"), "status": hostile("s"),
        "bytes": hostile("b"), "durationUs": hostile("d")})]);
    let mut refused = TraceEntry::new(3, EntryKind::ToolRefused);
    refused.name = Some(hostile("refused"));
    refused.args = Some(json!([hostile("args")]));
    refused.attempt = Some(1);
    refused.reason = Some(hostile("reason"));
    refused.response = Some(json!(hostile("response")));
    let document = TraceDocument { trace: Trace { entries: vec![activation, call, refused] }, seal: None };
    let answer = json!({"status": hostile("status"), "answer": format!("{} and more", hostile("answer")),
        "skillName": hostile("skill"), "claims": [{"text": hostile("answer"), "kind": hostile("kind"),
        "evidenceIds": [hostile("id"), hostile("other")]}], "error": {"code": hostile("code"), "message": hostile("m")},
        "uncertainty": [hostile("note")]});
    let skills = SkillSet::builtin();
    for mode in [Mode::Review, Mode::Submission] {
        let (page, verdict) = review_with_verdict(
            &document,
            Err::<(), _>(hostile("seal")),
            &answer,
            &skills,
            mode,
            Some(&hostile("title")),
            input_bytes(&document, &answer),
        );
        assert!(!verdict.accepted);
        assert!(page.contains("id=\"claim-1\""), "the hostile claim is still marked");
        for (name, attributes) in tags(&page) {
            assert!(TAGS.contains(&name.as_str()), "tag <{name}> on the page");
            for (attribute, value) in attributes {
                assert!(ATTRIBUTES.contains(&attribute.as_str()), "attribute {attribute} on <{name}>");
                if attribute == "href" {
                    assert!(value.starts_with('#'), "a link out of the page: {value}");
                }
            }
        }
        assert!(page.contains("&lt;script&gt;alert(&#39;answer&#39;)&lt;/script&gt;"));
        assert!(page.contains("<span class=\"cc\">[U+202E]</span>"));
    }
}

#[test]
fn the_seal_state_names_the_key_or_why_not() {
    let document = TraceDocument::default();
    assert_eq!(SealState::of(&document, &Err::<(), _>("x")), SealState::Unsigned);
    let mut signed = document.clone();
    signed.seal = Some(harmonia_contract::liaison::seal::Seal {
        algorithm: "ed25519".into(),
        public_key: "ab".repeat(32),
        chain: vec![],
        signature: String::new(),
    });
    assert_eq!(SealState::of(&signed, &Ok::<(), String>(())), SealState::Verified { key: "ab".repeat(32) });
    assert_eq!(
        SealState::of(&signed, &Err("entry 2 is not the entry that was signed")),
        SealState::Unverified { reason: "entry 2 is not the entry that was signed".into() }
    );
}

/// The bytes a client sends for `document` and `answer`: the request of
/// `POST /v1/review`, compact.
fn request_bytes(document: &TraceDocument, answer: &Value) -> usize {
    serde_json::to_vec(&json!({"trace": document.trace, "answer": answer, "mode": "review"})).unwrap().len()
}

/// A successful call of `tool` whose response carries `evidence` and whose
/// record has `receipts`.
fn call(sequence: u64, tool: &str, args: Value, evidence: Vec<Value>, receipts: Vec<Value>) -> TraceEntry {
    let mut call = TraceEntry::new(sequence, EntryKind::ToolCall);
    call.name = Some(tool.into());
    call.args = Some(args);
    call.attempt = Some(1);
    call.response = Some(json!({"status": "success", "data": {}, "error": null, "evidence": evidence}));
    call.receipts = Some(receipts);
    call
}

/// Inputs built to blow a page up, each a few hundred KiB: many cited ids
/// per claim and many claims citing one long-named item; deep nesting,
/// which pretty JSON indents; strings escaping to many bytes each (`<`,
/// `'`, a raw DEL, bidirectional overrides); thousands of tiny evidence
/// items and receipts; thousands of uncertainty notes.
fn hostile_inputs() -> Vec<(&'static str, TraceDocument, Value)> {
    let long_tool = "t".repeat(2_000);
    let item = |id: &str| json!({"evidenceId": id, "source": "s", "provenance": "live", "reference": null});
    let one_item = |tool: &str, id: &str| TraceDocument {
        trace: Trace { entries: vec![call(1, tool, json!({}), vec![item(id)], vec![])] },
        seal: None,
    };
    let mut inputs = Vec::new();

    let ids = vec![Value::from("e"); 200_000];
    let answer = json!({"status": "success", "answer": "e e e", "claims": [
        {"text": "e e e", "kind": "record", "evidenceIds": ids}]});
    inputs.push(("one claim citing one id 200,000 times", one_item("t", "e"), answer));

    let claims: Vec<Value> = (0..20_000).map(|_| json!({"text": "e", "evidenceIds": ["e", "e"]})).collect();
    let answer = json!({"status": "success", "answer": "e ".repeat(9_000), "claims": claims});
    inputs.push((
        "20,000 claims citing an item of a tool with a long name",
        one_item(&long_tool, "e"),
        answer,
    ));

    let mut deep = json!([]);
    for _ in 0..120 {
        deep = json!([deep, [], [], [], [], [], [], [], [], [], [], [], [], [], [], [], []]);
    }
    let mut nested = json!([]);
    for _ in 0..20 {
        nested = json!([nested]);
    }
    let wide = vec![nested; 20_000];
    let entries =
        vec![call(1, "t", json!({"deep": deep}), vec![], vec![]), call(2, "t", json!(wide), vec![], vec![])];
    let answer = json!({"status": "success", "answer": "x", "claims": []});
    inputs.push(("deep and wide nesting", TraceDocument { trace: Trace { entries }, seal: None }, answer));

    let escapes = format!(
        "{}{}{}{}",
        "<".repeat(60_000),
        "'".repeat(60_000),
        "\u{7f}".repeat(60_000),
        "\u{202e}".repeat(20_000)
    );
    let mut refused = TraceEntry::new(2, EntryKind::ToolRefused);
    refused.name = Some(escapes.clone());
    refused.reason = Some(escapes.clone());
    let document = TraceDocument {
        trace: Trace {
            entries: vec![
                call(
                    1,
                    &escapes,
                    json!({"a": escapes}),
                    vec![item(&escapes)],
                    vec![json!({"target": escapes})],
                ),
                refused,
            ],
        },
        seal: None,
    };
    let answer = json!({"status": "error", "answer": escapes, "skillName": escapes, "claims": [
        {"text": escapes, "kind": escapes, "evidenceIds": [escapes]}], "error": {"code": escapes, "message": escapes},
        "uncertainty": [escapes]});
    inputs.push(("strings that escape to many bytes", document, answer));

    // The budget spent at the answer text; every later section still has
    // items to say it left out.
    let claims: Vec<Value> = (0..200)
        .map(|n| json!({"text": format!("claim {n}"), "kind": "\u{7f}", "evidenceIds": vec![Value::from("e"); 40]}))
        .collect();
    let answer = json!({"status": "error", "answer": "\u{7f}".repeat(1 << 20), "claims": claims,
        "error": {"code": "\u{7f}", "message": "\u{7f}"}, "uncertainty": vec![Value::from("\u{7f}"); 100]});
    let entries: Vec<TraceEntry> = (1..=4_096u64)
        .map(|sequence| call(sequence, "\u{7f}", json!({}), vec![item("e")], vec![json!({})]))
        .collect();
    inputs.push((
        "the budget spent early, many items after",
        TraceDocument { trace: Trace { entries }, seal: None },
        answer,
    ));

    let entries: Vec<TraceEntry> = (1..=4_096u64)
        .map(|sequence| call(sequence, "t", json!({}), vec![json!({}); 40], vec![json!({}); 40]))
        .collect();
    let answer = json!({"status": "success", "answer": "x", "claims": [], "uncertainty": vec![Value::from("u"); 50_000]});
    inputs.push((
        "4,096 entries of tiny evidence items and receipts",
        TraceDocument { trace: Trace { entries }, seal: None },
        answer,
    ));
    inputs
}

/// Hostile: whatever the input, the page is at most `PAGE_FACTOR` (4)
/// times the bytes of the request that carried it, plus `PAGE_BASE`
/// (256 KiB); it says what it left out, holds only this crate's markup,
/// and is written in bounded time.
#[test]
fn a_hostile_input_never_makes_a_page_past_its_bound() {
    let skills = SkillSet::builtin();
    for (name, document, answer) in hostile_inputs() {
        let input = request_bytes(&document, &answer);
        let started = std::time::Instant::now();
        let (page, _) = review_with_verdict(
            &document,
            Err::<(), _>("unsigned"),
            &answer,
            &skills,
            Mode::Review,
            None,
            input,
        );
        let elapsed = started.elapsed();
        let bound = 4 * input + 256 * 1024;
        assert!(
            page.len() <= bound,
            "{name}: a {input}-byte input made a {}-byte page ({:.1}×), past its bound of {bound}",
            page.len(),
            page.len() as f64 / input as f64
        );
        assert!(elapsed < std::time::Duration::from_secs(20), "{name}: written in {elapsed:?}");
        assert!(page.ends_with("</html>\n"), "{name}: the page is closed");
        for (tag, _) in tags(&page) {
            assert!(TAGS.contains(&tag.as_str()), "{name}: tag <{tag}> on the page");
        }
    }
}
