//! The bench's trivial tool for Wassette: a function export (Wassette's
//! tool shape) answering the same fixed JSON as Harmonia's `trivial_probe`
//! envelope and the hyper-mcp plugin, so the three servers return the same
//! text.

wit_bindgen::generate!({ world: "trivial", path: "wit" });

/// Harmonia's envelope for `trivial_probe`, byte for byte.
const ANSWER: &str = r#"{"status":"success","data":{},"error":null,"evidence":[]}"#;

struct Tool;

impl Guest for Tool {
    fn trivial_probe() -> String {
        ANSWER.to_string()
    }
}

export!(Tool);
