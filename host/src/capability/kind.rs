//! The capability table: one row per capability, the one place that names
//! it (its interface, world, scope and labels). The import policy
//! (`crate::policy`), the worlds, receipts and metrics derive from it.
//!
//! Parts: [`CapabilityKind`] (a receipt's `capability`), [`Row`] and
//! [`TABLE`], and [`World`], the world a component's imports place it in.
//! Pure data: nothing here names another module of the host, so every
//! module may name it.

use harmonia_contract::codes::RESERVED_SOURCE_PREFIXES;
use harmonia_contract::descriptor::Scope;
use serde::Serialize;

/// Which capability: a receipt's `capability`, serialized as the
/// interface's name (`public-web`, `workspace`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CapabilityKind {
    /// `harmonia:tools/public-web`.
    PublicWeb,
    /// `harmonia:tools/workspace`.
    Workspace,
}

/// One capability's row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    /// Which capability.
    pub kind: CapabilityKind,
    /// The interface components import (without `@version`).
    pub interface: &'static str,
    /// The world a component importing it is in.
    pub world: World,
    /// The WIT world's name.
    pub world_name: &'static str,
    /// The scope a tool in that world declares.
    pub scope: Scope,
    /// Its name in receipts and traces.
    pub receipt: &'static str,
    /// Its `kind` label in metrics.
    pub metric: &'static str,
}

/// Every capability. Adding one adds a row here (and its folder).
pub const TABLE: [Row; 2] = [
    Row {
        kind: CapabilityKind::PublicWeb,
        interface: "harmonia:tools/public-web",
        world: World::PublicTool,
        world_name: "public-tool",
        scope: Scope::Public,
        receipt: "public-web",
        metric: "public_web",
    },
    Row {
        kind: CapabilityKind::Workspace,
        interface: "harmonia:tools/workspace",
        world: World::WorkspaceTool,
        world_name: "workspace-tool",
        scope: Scope::Workspace,
        receipt: "workspace",
        metric: "workspace",
    },
];

impl CapabilityKind {
    /// Its row of [`TABLE`].
    pub fn row(self) -> &'static Row {
        TABLE.iter().find(|row| row.kind == self).expect("every kind has a row")
    }

    /// Its name in receipts and traces (`public-web`, `workspace`).
    pub fn as_str(self) -> &'static str {
        self.row().receipt
    }

    /// The capability whose interface is `interface` (without `@version`).
    pub fn of_interface(interface: &str) -> Option<Self> {
        TABLE.iter().find(|row| row.interface == interface).map(|row| row.kind)
    }
}

impl Row {
    /// The source prefixes reserved to this capability's scope (the
    /// contract's table, `harmonia_contract::codes::RESERVED_SOURCE_PREFIXES`).
    pub fn reserved_source_prefixes(&self) -> impl Iterator<Item = &'static str> + '_ {
        RESERVED_SOURCE_PREFIXES.iter().filter(|(_, scope)| *scope == self.scope).map(|(prefix, _)| *prefix)
    }
}

impl std::fmt::Display for CapabilityKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

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
    /// The capability this world grants, if any.
    pub fn capability(self) -> Option<&'static Row> {
        TABLE.iter().find(|row| row.world == self)
    }

    /// The WIT world name.
    pub fn as_str(self) -> &'static str {
        self.capability().map_or("no capability", |row| row.world_name)
    }

    /// Whether a tool in this world may declare `scope`.
    pub fn admits(self, scope: Scope) -> bool {
        self.capability().is_none_or(|row| row.scope == scope)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_receipt_names_its_capability_as_before() {
        let names: Vec<String> =
            TABLE.iter().map(|row| serde_json::to_string(&row.kind).expect("a kind serializes")).collect();
        assert_eq!(names, ["\"public-web\"", "\"workspace\""]);
        for row in TABLE {
            assert_eq!(serde_json::to_value(row.kind).unwrap(), row.receipt);
            assert_eq!(row.kind.row(), &row);
            assert_eq!(row.world.capability(), Some(&row));
        }
    }

    #[test]
    fn every_reserved_prefix_belongs_to_one_capability() {
        let held: Vec<&str> = TABLE.iter().flat_map(|row| row.reserved_source_prefixes()).collect();
        assert_eq!(held, ["hacker_news_", "harmonia_"]);
    }
}
