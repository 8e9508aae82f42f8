//! No import cycle between the files of `host/src`.
//!
//! Granularity: a node is one source file (`x.rs` or `x/mod.rs` is the
//! module `x`); an edge A → B means file A names module B by a path: a
//! `use` (re-exports included: `pub use child::Item` is a use of `child`)
//! or a path in code (`crate::a::b::f()`, `super::Item`, `child::f()`,
//! `alias::f()` after `use crate::a::alias`). A path resolves to the
//! longest prefix that is a file, so `crate::capability::Receipt` names
//! `capability/mod.rs` and `crate::capability::receipt::Receipt` names
//! `capability/receipt.rs`. Not edges: a `mod` declaration (the tree, not
//! a dependency), comments, `#[cfg(test)] mod tests` (a file's own tests),
//! and paths through the crate root (`lib.rs` declares every module and
//! re-exports the public API; counting it would join everything).
//!
//! Parts: [`graph`] reads the files into edges, [`cycles`] finds the
//! strongly connected components (Tarjan), the test asserts there are none
//! and prints any it finds, each as its files.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// `host/src`.
fn host_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root").join("host/src")
}

/// Every `.rs` file under `dir`, with its module path (`[]` is the root).
fn modules(dir: &Path, prefix: &[String], out: &mut BTreeMap<Vec<String>, PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("host/src is readable") {
        let path = entry.expect("an entry").path();
        let name = path.file_stem().and_then(|stem| stem.to_str()).expect("a UTF-8 name").to_owned();
        if path.is_dir() {
            let mut inner = prefix.to_vec();
            inner.push(name);
            modules(&path, &inner, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            let mut module = prefix.to_vec();
            if name != "mod" && name != "lib" {
                module.push(name);
            }
            out.insert(module, path);
        }
    }
}

/// The file's code without comments, string literals and its test module.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]\nmod tests").next().unwrap_or(text);
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for next in chars.by_ref() {
                    if next == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '"' => {
                let mut escaped = false;
                for next in chars.by_ref() {
                    if next == '"' && !escaped {
                        break;
                    }
                    escaped = next == '\\' && !escaped;
                }
                out.push_str("\"\"");
            }
            _ => out.push(c),
        }
    }
    out
}

/// The paths a use tree names: `a::{b, c::{d, e as f}}` → `a::b`,
/// `a::c::d`, `a::c::e` (renames dropped: the path is what counts).
fn use_paths(tree: &str) -> Vec<Vec<String>> {
    let mut plain = String::new();
    let mut rest = tree;
    while let Some(at) = rest.find(" as ") {
        plain.push_str(&rest[..at]);
        let renamed = rest[at + 4..].trim_start();
        rest = renamed.trim_start_matches(|c: char| c.is_alphanumeric() || c == '_');
    }
    plain.push_str(rest);
    let tree: String = plain.chars().filter(|c| !c.is_whitespace()).collect();
    let mut out = Vec::new();
    expand(&tree, &mut Vec::new(), &mut out);
    out
}

fn expand(tree: &str, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    if let Some(open) = tree.find('{') {
        let head: Vec<String> =
            tree[..open].split("::").filter(|part| !part.is_empty()).map(str::to_owned).collect();
        let inner = &tree[open + 1..tree.rfind('}').expect("a closed use group")];
        let mut depth = 0;
        let mut start = 0;
        let mut items = Vec::new();
        for (index, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    items.push(&inner[start..index]);
                    start = index + 1;
                }
                _ => {}
            }
        }
        items.push(&inner[start..]);
        let kept = prefix.len();
        prefix.extend(head);
        for item in items.into_iter().filter(|item| !item.is_empty()) {
            expand(item, prefix, out);
        }
        prefix.truncate(kept);
    } else {
        let mut full = prefix.clone();
        full.extend(tree.split("::").filter(|part| !part.is_empty()).map(str::to_owned));
        out.push(full);
    }
}

/// `path` as named from `module` (a file), made absolute: `None` when it
/// leaves the crate.
fn absolute(
    module: &[String],
    path: &[String],
    known: &BTreeMap<Vec<String>, PathBuf>,
    aliases: &BTreeMap<String, Vec<String>>,
) -> Option<Vec<String>> {
    let (first, rest) = path.split_first()?;
    let mut base: Vec<String> = match first.as_str() {
        "crate" => Vec::new(),
        "self" => module.to_vec(),
        "super" => module[..module.len().checked_sub(1)?].to_vec(),
        child if known.contains_key(&[module, &[child.to_owned()]].concat()) => {
            [module, &[child.to_owned()]].concat()
        }
        alias => aliases.get(alias)?.clone(),
    };
    let mut rest = rest;
    while let Some(("super", tail)) = rest.split_first().map(|(head, tail)| (head.as_str(), tail)) {
        base.pop();
        rest = tail;
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// The longest prefix of `path` that is a file; the root is no module.
fn resolve(path: &[String], known: &BTreeMap<Vec<String>, PathBuf>) -> Option<Vec<String>> {
    (1..=path.len()).rev().map(|len| path[..len].to_vec()).find(|prefix| known.contains_key(prefix))
}

/// Every path in code: an identifier followed by `::`, with what follows.
fn code_paths(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut index = 0;
    while index < bytes.len() {
        let starts =
            ident(bytes[index]) && (index == 0 || !(ident(bytes[index - 1]) || bytes[index - 1] == b':'));
        if !starts {
            index += 1;
            continue;
        }
        let mut segments = Vec::new();
        let mut cursor = index;
        loop {
            let start = cursor;
            while cursor < bytes.len() && ident(bytes[cursor]) {
                cursor += 1;
            }
            segments.push(code[start..cursor].to_owned());
            if code[cursor..].starts_with("::") && cursor + 2 < bytes.len() && ident(bytes[cursor + 2]) {
                cursor += 2;
            } else {
                break;
            }
        }
        if segments.len() > 1 {
            out.push(segments);
        }
        index = cursor.max(index + 1);
    }
    out
}

/// Module → the modules its file names.
fn graph() -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let mut known = BTreeMap::new();
    modules(&host_src(), &[], &mut known);
    let mut edges = BTreeMap::new();
    for (module, file) in &known {
        let code = code(&std::fs::read_to_string(file).expect("a readable file"));
        let mut named = Vec::new();
        let mut rest = code.as_str();
        let mut outside_uses = String::new();
        // `use` statements (any visibility) up to their `;`.
        while let Some(at) = find_use(rest) {
            outside_uses.push_str(&rest[..at]);
            let end = rest[at..].find(';').map_or(rest.len(), |end| at + end);
            named.extend(use_paths(&rest[at + 4..end]));
            rest = &rest[end..];
        }
        outside_uses.push_str(rest);
        let mut aliases = BTreeMap::new();
        for path in &named {
            if let Some(target) = absolute(module, path, &known, &BTreeMap::new())
                && known.contains_key(&target)
            {
                let name = path.iter().rev().find(|segment| *segment != "self").expect("a segment");
                aliases.insert(name.clone(), target);
            }
        }
        named.extend(code_paths(&outside_uses));
        let targets: BTreeSet<Vec<String>> = named
            .iter()
            .filter_map(|path| absolute(module, path, &known, &aliases))
            .filter_map(|path| resolve(&path, &known))
            .filter(|target| target != module && !target.is_empty())
            .collect();
        edges.insert(module.clone(), targets);
    }
    edges
}

/// Where the next `use` statement starts (`use` as a whole word).
fn find_use(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(found) = text[from..].find("use ") {
        let at = from + found;
        let before = at.checked_sub(1).map(|index| bytes[index]);
        if before.is_none_or(|b| !(b.is_ascii_alphanumeric() || b == b'_')) {
            return Some(at);
        }
        from = at + 4;
    }
    None
}

/// Strongly connected components of more than one module (Tarjan).
fn cycles(edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        edges: &'a BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        index: BTreeMap<&'a Vec<String>, usize>,
        low: BTreeMap<&'a Vec<String>, usize>,
        stack: Vec<&'a Vec<String>>,
        found: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, node: &'a Vec<String>) {
            let at = self.index.len();
            self.index.insert(node, at);
            self.low.insert(node, at);
            self.stack.push(node);
            for next in &self.edges[node] {
                if !self.index.contains_key(next) {
                    self.visit(next);
                    let low = self.low[node].min(self.low[next]);
                    self.low.insert(node, low);
                } else if self.stack.contains(&next) {
                    let low = self.low[node].min(self.index[next]);
                    self.low.insert(node, low);
                }
            }
            if self.low[node] == self.index[node] {
                let mut component = Vec::new();
                while let Some(top) = self.stack.pop() {
                    component.push(display(top));
                    if top == node {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk =
        Walk { edges, index: BTreeMap::new(), low: BTreeMap::new(), stack: Vec::new(), found: Vec::new() };
    for node in edges.keys() {
        if !walk.index.contains_key(node) {
            walk.visit(node);
        }
    }
    walk.found
}

fn display(module: &[String]) -> String {
    if module.is_empty() { "lib".into() } else { module.join("::") }
}

#[test]
fn host_modules_import_no_cycle() {
    let edges = graph();
    assert!(edges.len() > 20, "host/src was read: {} files", edges.len());
    let found = cycles(&edges);
    let mut listed = Vec::new();
    for cycle in &found {
        listed.push(cycle.join(" ↔ "));
        // The edges inside the cycle, to say which use to move.
        for (from, targets) in &edges {
            for to in
                targets.iter().filter(|to| cycle.contains(&display(to)) && cycle.contains(&display(from)))
            {
                listed.push(format!("  {} → {}", display(from), display(to)));
            }
        }
    }
    assert!(found.is_empty(), "import cycles in host/src:\n{}", listed.join("\n"));
}

#[test]
fn the_graph_sees_each_kind_of_use() {
    let edges = graph();
    let has = |from: &str, to: &str| {
        let from: Vec<String> = from.split("::").map(str::to_owned).collect();
        let to: Vec<String> = to.split("::").map(str::to_owned).collect();
        edges[&from].contains(&to)
    };
    // A `use crate::…`, a path in code, and a re-export of a child.
    assert!(has("sandbox", "call_state"), "use crate::call_state");
    assert!(has("engine", "capability::set"), "crate::capability::set::add_to_linker in code");
    assert!(has("capability::workspace", "capability::workspace::sources"), "pub use sources::…");
    assert!(has("capability::workspace::sources", "capability::workspace::mock"), "use super::{{…, mock}}");
    // A cycle is found when there is one.
    let mut looped = edges.clone();
    looped.get_mut(&vec!["limits".to_owned()]).expect("limits.rs").insert(vec!["sandbox".to_owned()]);
    assert!(!cycles(&looped).is_empty(), "sandbox → limits → sandbox is a cycle");
}
