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
