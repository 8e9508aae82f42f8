//! Which imports a component may have: the grant of each world, as data.
//!
//! A tool imports the WASI interfaces a language runtime needs (all granted
//! with nothing behind them: no preopens, no environment, no arguments,
//! empty stdin, captured stdout and stderr), the shared `types`, and at
//! most one capability: `public-web` (the `public-tool` world) or
//! `workspace` (the `workspace-tool` world). Anything else is refused at
//! load, naming the import. The inert switch admits filesystem and sockets
//! imports, linked with no preopens and every address denied; wasi:http
//! and unknown interfaces are never admitted.

use crate::descriptor::Scope;

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

/// Interfaces admitted only by the inert switch, linked with nothing behind
/// them.
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
/// The public web capability.
pub const PUBLIC_WEB_INTERFACE: &str = "harmonia:tools/public-web";
/// The workspace capability.
pub const WORKSPACE_INTERFACE: &str = "harmonia:tools/workspace";
/// The export every tool provides.
pub const TOOL_INTERFACE: &str = "harmonia:tools/tool";

/// The world a component's imports place it in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum World {
    /// Imports `public-web`.
    PublicTool,
    /// Imports `workspace`.
    WorkspaceTool,
    /// Imports no capability: it fits either world.
    NoCapability,
}

impl World {
    /// The WIT world name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::PublicTool => "public-tool",
            Self::WorkspaceTool => "workspace-tool",
            Self::NoCapability => "no capability",
        }
    }

    /// Whether a tool in this world may declare `scope`.
    pub fn admits(self, scope: Scope) -> bool {
        matches!(
            (self, scope),
            (Self::NoCapability, _)
                | (Self::PublicTool, Scope::Public)
                | (Self::WorkspaceTool, Scope::Workspace)
        )
    }
}

/// Import policy switches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImportPolicy {
    /// Admit filesystem and sockets imports, linked inert.
    pub inert_filesystem_and_sockets: bool,
}

/// Why a component's imports are refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ImportError {
    /// An import outside every grant.
    #[error("import `{import}` is not granted: {reason}")]
    NotGranted {
        /// The import as the component names it.
        import: String,
        /// Why.
        reason: &'static str,
    },
    /// Both capabilities imported.
    #[error("imports both `{PUBLIC_WEB_INTERFACE}` and `{WORKSPACE_INTERFACE}`: a tool reads one scope")]
    BothCapabilities,
}

/// `name` without its `@version` suffix.
pub fn unversioned(name: &str) -> &str {
    name.split_once('@').map_or(name, |(base, _)| base)
}

impl ImportPolicy {
    /// Check every import and decide the component's world.
    pub fn classify<'a>(&self, imports: impl IntoIterator<Item = &'a str>) -> Result<World, ImportError> {
        let (mut public, mut workspace) = (false, false);
        for import in imports {
            let name = unversioned(import);
            let refuse = |reason| Err(ImportError::NotGranted { import: import.to_owned(), reason });
            match name {
                PUBLIC_WEB_INTERFACE => public = true,
                WORKSPACE_INTERFACE => workspace = true,
                TYPES_INTERFACE => {}
                _ if RUNTIME_INTERFACES.contains(&name) => {}
                _ if INERT_INTERFACES.contains(&name) => {
                    if !self.inert_filesystem_and_sockets {
                        return refuse(if name.starts_with("wasi:sockets/") {
                            "tools get no network access (sockets)"
                        } else {
                            "tools get no filesystem access"
                        });
                    }
                }
                _ if name.starts_with("wasi:http/") => {
                    return refuse("tools get no outgoing HTTP; use public-web");
                }
                _ => return refuse("unknown interface"),
            }
        }
        match (public, workspace) {
            (true, true) => Err(ImportError::BothCapabilities),
            (true, false) => Ok(World::PublicTool),
            (false, true) => Ok(World::WorkspaceTool),
            (false, false) => Ok(World::NoCapability),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            Err(ImportError::BothCapabilities)
        );
    }

    #[test]
    fn every_runtime_grant_is_admitted_and_nothing_else() {
        let policy = ImportPolicy::default();
        for name in RUNTIME_INTERFACES {
            assert_eq!(classify(policy, &[name]), Ok(World::NoCapability), "{name}");
        }
        for name in INERT_INTERFACES {
            let versioned = format!("{name}@0.2.6");
            let refused = classify(policy, &[&versioned]).unwrap_err();
            assert!(refused.to_string().contains(&versioned), "{refused}");
        }
    }

    #[test]
    fn inert_switch_admits_filesystem_and_sockets_only() {
        let policy = ImportPolicy { inert_filesystem_and_sockets: true };
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
    fn world_admits_matching_scope() {
        assert!(World::PublicTool.admits(Scope::Public));
        assert!(!World::PublicTool.admits(Scope::Workspace));
        assert!(World::WorkspaceTool.admits(Scope::Workspace));
        assert!(!World::WorkspaceTool.admits(Scope::Public));
        assert!(World::NoCapability.admits(Scope::Public) && World::NoCapability.admits(Scope::Workspace));
    }
}
