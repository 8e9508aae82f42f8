//! Which imports a component may have: the grant of each world, as data.
//!
//! A tool imports the WASI interfaces a language runtime needs (all granted
//! with nothing behind them: no preopens, no environment, no arguments,
//! empty stdin, captured stdout and stderr), the shared `types`, and at
//! most one capability, which places it in that capability's world (the
//! capability table, `crate::capability::kind`: `public-web` is the
//! `public-tool` world, `workspace` the `workspace-tool` world). Anything else is refused at
//! load, naming every refused import at once. Filesystem and sockets
//! imports (which language runtimes carry) are admitted by default and
//! linked to implementations that deny everything (no preopens, every
//! address and name lookup refused); the operator may refuse them instead
//! (`wasi.inert_filesystem_and_sockets = false`). wasi:http and unknown
//! interfaces are never admitted.

pub use crate::capability::kind::World;
use crate::capability::kind::{CapabilityKind, TABLE};

/// WASI interfaces granted to every tool (names without `@version`).
pub const RUNTIME_INTERFACES: &[&str] = &[
    "wasi:io/error",
    "wasi:io/poll",
    "wasi:io/streams",
    "wasi:cli/environment",
    "wasi:cli/exit",
    "wasi:cli/stdin",
    "wasi:cli/stdout",
    "wasi:cli/stderr",
    "wasi:cli/terminal-input",
    "wasi:cli/terminal-output",
    "wasi:cli/terminal-stdin",
    "wasi:cli/terminal-stdout",
    "wasi:cli/terminal-stderr",
    "wasi:clocks/wall-clock",
    "wasi:clocks/monotonic-clock",
    "wasi:random/random",
    "wasi:random/insecure",
    "wasi:random/insecure-seed",
];

/// Interfaces admitted by the inert switch (on by default), linked to
/// implementations that deny everything.
pub const INERT_INTERFACES: &[&str] = &[
    "wasi:filesystem/types",
    "wasi:filesystem/preopens",
    "wasi:sockets/network",
    "wasi:sockets/instance-network",
    "wasi:sockets/tcp",
    "wasi:sockets/tcp-create-socket",
    "wasi:sockets/udp",
    "wasi:sockets/udp-create-socket",
    "wasi:sockets/ip-name-lookup",
];

/// The shared types interface; carries no functions.
pub const TYPES_INTERFACE: &str = "harmonia:tools/types";
/// The export every tool provides.
pub const TOOL_INTERFACE: &str = "harmonia:tools/tool";

/// Import policy switches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImportPolicy {
    /// Admit filesystem and sockets imports, linked to implementations
    /// that deny everything.
    pub inert_filesystem_and_sockets: bool,
}

impl Default for ImportPolicy {
    fn default() -> Self {
        Self::from(&crate::config::WasiConfig::default())
    }
}

impl From<&crate::config::WasiConfig> for ImportPolicy {
    fn from(wasi: &crate::config::WasiConfig) -> Self {
        Self { inert_filesystem_and_sockets: wasi.inert_filesystem_and_sockets }
    }
}

/// How an import is linked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grant {
    /// A runtime interface (I/O, clocks, random, CLI) or the shared types.
    Runtime,
    /// A capability (a row of the capability table).
    Capability,
    /// Filesystem or sockets: linked to implementations that deny
    /// everything.
    LinkedDenied,
    /// Refused at load, and why.
    Refused(&'static str),
}

impl Grant {
    /// How `harmonia inspect` says it.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Runtime => "granted",
            Self::Capability => "capability",
            Self::LinkedDenied => "linked, denied",
            Self::Refused(reason) => reason,
        }
    }
}

/// One import outside every grant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefusedImport {
    /// The import as the component names it.
    pub import: String,
    /// Why.
    pub reason: &'static str,
}

/// Why a component's imports are refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ImportError {
    /// Imports outside every grant, all of them, in the component's order.
    #[error("{} not granted: {}", if refused.len() == 1 { "import is" } else { "imports are" }, list_refused(refused))]
    NotGranted {
        /// Each refused import and why.
        refused: Vec<RefusedImport>,
    },
    /// Two capabilities imported (the first two, in the table's order).
    #[error("imports both `{}` and `{}`: a tool reads one scope", .0[0].row().interface, .0[1].row().interface)]
    BothCapabilities([CapabilityKind; 2]),
}

fn list_refused(refused: &[RefusedImport]) -> String {
    let items: Vec<String> =
        refused.iter().map(|refusal| format!("`{}` ({})", refusal.import, refusal.reason)).collect();
    items.join(", ")
}

/// `name` without its `@version` suffix.
pub fn unversioned(name: &str) -> &str {
    name.split_once('@').map_or(name, |(base, _)| base)
}

impl ImportPolicy {
    /// How one import is granted.
    pub fn grant(&self, import: &str) -> Grant {
        let name = unversioned(import);
        match name {
            _ if CapabilityKind::of_interface(name).is_some() => Grant::Capability,
            TYPES_INTERFACE => Grant::Runtime,
            _ if RUNTIME_INTERFACES.contains(&name) => Grant::Runtime,
            _ if INERT_INTERFACES.contains(&name) => {
                if self.inert_filesystem_and_sockets {
                    Grant::LinkedDenied
                } else if name.starts_with("wasi:sockets/") {
                    Grant::Refused("sockets are refused by wasi.inert_filesystem_and_sockets = false")
                } else {
                    Grant::Refused("the filesystem is refused by wasi.inert_filesystem_and_sockets = false")
                }
            }
            _ if name.starts_with("wasi:http/") => {
                Grant::Refused("tools get no outgoing HTTP; use public-web")
            }
            _ => Grant::Refused("unknown interface"),
        }
    }

    /// Check every import and decide the component's world; a refusal
    /// lists every import outside the grant.
    pub fn classify<'a>(&self, imports: impl IntoIterator<Item = &'a str>) -> Result<World, ImportError> {
        let mut imported = [false; TABLE.len()];
        let mut refused = Vec::new();
        for import in imports {
            match self.grant(import) {
                Grant::Capability => {
                    let name = unversioned(import);
                    let row = TABLE.iter().position(|row| row.interface == name);
                    imported[row.expect("a capability grant is a row")] = true;
                }
                Grant::Refused(reason) => refused.push(RefusedImport { import: import.to_owned(), reason }),
                Grant::Runtime | Grant::LinkedDenied => {}
            }
        }
        if !refused.is_empty() {
            return Err(ImportError::NotGranted { refused });
        }
        let mut granted = TABLE.iter().zip(imported).filter(|(_, imported)| *imported).map(|(row, _)| row);
        match (granted.next(), granted.next()) {
            (Some(first), Some(second)) => Err(ImportError::BothCapabilities([first.kind, second.kind])),
            (Some(only), None) => Ok(only.world),
            (None, _) => Ok(World::NoCapability),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::descriptor::Scope;

    const STD: &[&str] = &["wasi:io/streams@0.2.6", "wasi:cli/stdout@0.2.0", "harmonia:tools/types@0.1.0"];

    fn classify(policy: ImportPolicy, extra: &[&str]) -> Result<World, ImportError> {
        policy.classify(STD.iter().chain(extra).copied())
    }

    #[test]
    fn decides_the_world_from_the_capability() {
        let policy = ImportPolicy::default();
        assert_eq!(classify(policy, &[]), Ok(World::NoCapability));
        assert_eq!(classify(policy, &["harmonia:tools/public-web@0.1.0"]), Ok(World::PublicTool));
        assert_eq!(classify(policy, &["harmonia:tools/workspace@0.1.0"]), Ok(World::WorkspaceTool));
        assert_eq!(
            classify(policy, &["harmonia:tools/workspace@0.1.0", "harmonia:tools/public-web@0.1.0"]),
            Err(ImportError::BothCapabilities([CapabilityKind::PublicWeb, CapabilityKind::Workspace]))
        );
        assert_eq!(
            classify(policy, &["harmonia:tools/public-web@0.1.0", "harmonia:tools/workspace@0.1.0"])
                .unwrap_err()
                .to_string(),
            "imports both `harmonia:tools/public-web` and `harmonia:tools/workspace`: a tool reads one scope"
        );
    }

    #[test]
    fn every_runtime_grant_is_admitted_and_nothing_else() {
        let policy = ImportPolicy { inert_filesystem_and_sockets: false };
        for name in RUNTIME_INTERFACES {
            assert_eq!(classify(policy, &[name]), Ok(World::NoCapability), "{name}");
        }
        for name in INERT_INTERFACES {
            let versioned = format!("{name}@0.2.6");
            let refused = classify(policy, &[&versioned]).unwrap_err();
            assert!(refused.to_string().contains(&versioned), "{refused}");
            assert!(refused.to_string().contains("wasi.inert_filesystem_and_sockets"), "{refused}");
        }
    }

    #[test]
    fn a_refusal_lists_every_refused_import_at_once() {
        let error = classify(
            ImportPolicy::default(),
            &["wasi:http/types@0.2.0", "harmonia:tools/public-web@0.1.0", "acme:db/query@1.0.0"],
        )
        .unwrap_err();
        let ImportError::NotGranted { refused } = &error else { panic!("{error}") };
        let names: Vec<&str> = refused.iter().map(|refusal| refusal.import.as_str()).collect();
        assert_eq!(names, ["wasi:http/types@0.2.0", "acme:db/query@1.0.0"]);
        assert_eq!(
            error.to_string(),
            "imports are not granted: `wasi:http/types@0.2.0` (tools get no outgoing HTTP; use public-web), \
             `acme:db/query@1.0.0` (unknown interface)"
        );
    }

    #[test]
    fn filesystem_and_sockets_are_admitted_by_default_and_nothing_else() {
        let policy = ImportPolicy::default();
        for name in INERT_INTERFACES {
            assert_eq!(classify(policy, &[name]), Ok(World::NoCapability), "{name}");
        }
        for refused in [
            "wasi:http/outgoing-handler@0.2.0",
            "wasi:http/types@0.2.0",
            "acme:db/query@1.0.0",
            "wasi:keyvalue/store",
        ] {
            let error = classify(policy, &[refused]).unwrap_err();
            assert!(error.to_string().contains(refused), "{error}");
        }
    }

    #[test]
    fn inspect_words_for_each_grant() {
        let policy = ImportPolicy::default();
        assert_eq!(policy.grant("wasi:filesystem/preopens@0.2.3").describe(), "linked, denied");
        assert_eq!(policy.grant("wasi:sockets/tcp@0.2.3").describe(), "linked, denied");
        assert_eq!(policy.grant("wasi:io/streams@0.2.3").describe(), "granted");
        assert_eq!(policy.grant("harmonia:tools/public-web@0.1.0").describe(), "capability");
        assert_eq!(
            policy.grant("wasi:http/types@0.2.3"),
            Grant::Refused("tools get no outgoing HTTP; use public-web")
        );
    }

    #[test]
    fn world_admits_matching_scope() {
        assert!(World::PublicTool.admits(Scope::Public));
        assert!(!World::PublicTool.admits(Scope::Workspace));
        assert!(World::WorkspaceTool.admits(Scope::Workspace));
        assert!(!World::WorkspaceTool.admits(Scope::Public));
        assert!(World::NoCapability.admits(Scope::Public) && World::NoCapability.admits(Scope::Workspace));
    }
}
