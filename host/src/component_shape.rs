//! A component's shape, read from its bytes before anything is compiled:
//! its top-level imports and exports, how many core instances, memories
//! and tables instantiating it creates (counted the way wasmtime's pooling
//! allocator counts them), and the largest initial memory and table it
//! declares.
//!
//! The loader checks the shape against the import policy and the
//! configured limits first, so a refusal costs a parse (milliseconds)
//! instead of a compile (seconds for a component carrying a language
//! runtime), and names every refused import and the config key of every
//! limit exceeded. Wasmtime's own checks stay behind this one: a count this
//! reader cannot see (a module imported by the component) only makes the
//! later, slower refusal the one reported.

use crate::limits::{ComponentLimits, MAX_TABLE_ELEMENTS};
use wasmparser::{
    ComponentAlias, ComponentExternalKind, ComponentOuterAliasKind, ComponentTypeRef, Encoding, Instance,
    Parser, Payload,
};

/// What instantiating a component creates, summed over its core modules.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Counts {
    /// Core module instances.
    pub core_instances: u32,
    /// Linear memories defined by those instances.
    pub memories: u32,
    /// Tables defined by those instances.
    pub tables: u32,
}

impl Counts {
    fn add(&mut self, other: Counts) {
        self.core_instances = self.core_instances.saturating_add(other.core_instances);
        self.memories = self.memories.saturating_add(other.memories);
        self.tables = self.tables.saturating_add(other.tables);
    }
}

/// A component's shape.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ComponentShape {
    /// Top-level imports, as the component names them.
    pub imports: Vec<String>,
    /// Top-level exports.
    pub exports: Vec<String>,
    /// What one instance creates.
    pub counts: Counts,
    /// The largest initial size of any memory, in bytes.
    pub largest_initial_memory: u64,
    /// The largest initial size of any table, in elements.
    pub largest_initial_table: u64,
}

/// Why bytes have no usable shape.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    /// A core module, not a component.
    #[error(
        "a core WebAssembly module, not a component (build it for wasm32-wasip2 or wrap it with `wasm-tools component new`)"
    )]
    CoreModule,
    /// The bytes do not parse.
    #[error("{0}")]
    Malformed(String),
}

/// A limit the shape exceeds.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("creates {count} {what}, more than the {limit} allowed by {key}")]
pub struct ShapeLimitError {
    /// What is counted.
    pub what: &'static str,
    /// The component's count.
    pub count: u64,
    /// The limit.
    pub limit: u64,
    /// The config key that sets the limit.
    pub key: &'static str,
}

/// One component in the nesting: its core module and component index
/// spaces, as counts of what instantiating each entry creates.
#[derive(Default)]
struct Frame {
    modules: Vec<Counts>,
    components: Vec<Counts>,
    counts: Counts,
}

/// What the parser is inside of.
enum Scope {
    Component(Frame),
    Module(Counts),
}

impl ComponentShape {
    /// Read the shape of component `bytes`.
    pub fn read(bytes: &[u8]) -> Result<Self, ShapeError> {
        let mut shape = Self::default();
        let mut stack: Vec<Scope> = Vec::new();
        for payload in Parser::new(0).parse_all(bytes) {
            let payload = payload.map_err(|error| ShapeError::Malformed(error.to_string()))?;
            let top_level = stack.len() == 1;
            match payload {
                Payload::Version { encoding: Encoding::Module, .. } if stack.is_empty() => {
                    return Err(ShapeError::CoreModule);
                }
                Payload::Version { encoding: Encoding::Component, .. } if stack.is_empty() => {
                    stack.push(Scope::Component(Frame::default()));
                }
                Payload::ModuleSection { .. } => stack.push(Scope::Module(Counts::default())),
                Payload::ComponentSection { .. } => stack.push(Scope::Component(Frame::default())),
                Payload::MemorySection(reader) => {
                    if let Some(Scope::Module(module)) = stack.last_mut() {
                        module.memories = module.memories.saturating_add(reader.count());
                    }
                    for memory in reader.into_iter().flatten() {
                        let bytes = memory.initial.saturating_mul(1 << memory.page_size_log2.unwrap_or(16));
                        shape.largest_initial_memory = shape.largest_initial_memory.max(bytes);
                    }
                }
                Payload::TableSection(reader) => {
                    if let Some(Scope::Module(module)) = stack.last_mut() {
                        module.tables = module.tables.saturating_add(reader.count());
                    }
                    for table in reader.into_iter().flatten() {
                        shape.largest_initial_table = shape.largest_initial_table.max(table.ty.initial);
                    }
                }
                Payload::InstanceSection(reader) => {
                    let frame = current_frame(&mut stack)?;
                    for instance in reader {
                        let instance = instance.map_err(|error| ShapeError::Malformed(error.to_string()))?;
                        if let Instance::Instantiate { module_index, .. } = instance {
                            let module =
                                frame.modules.get(module_index as usize).copied().unwrap_or_default();
                            frame.counts.add(Counts { core_instances: 1, ..module });
                        }
                    }
                }
                Payload::ComponentInstanceSection(reader) => {
                    let frame = current_frame(&mut stack)?;
                    for instance in reader {
                        let instance = instance.map_err(|error| ShapeError::Malformed(error.to_string()))?;
                        if let wasmparser::ComponentInstance::Instantiate { component_index, .. } = instance {
                            let nested = frame.components.get(component_index as usize).copied();
                            frame.counts.add(nested.unwrap_or_default());
                        }
                    }
                }
                Payload::ComponentAliasSection(reader) => {
                    for alias in reader {
                        let alias = alias.map_err(|error| ShapeError::Malformed(error.to_string()))?;
                        add_alias(&mut stack, alias)?;
                    }
                }
                Payload::ComponentImportSection(reader) => {
                    for import in reader {
                        let import = import.map_err(|error| ShapeError::Malformed(error.to_string()))?;
                        let frame = current_frame(&mut stack)?;
                        match import.ty {
                            ComponentTypeRef::Module(_) => frame.modules.push(Counts::default()),
                            ComponentTypeRef::Component(_) => frame.components.push(Counts::default()),
                            _ => {}
                        }
                        if top_level {
                            shape.imports.push(import.name.name.to_owned());
                        }
                    }
                }
                Payload::ComponentExportSection(reader) => {
                    for export in reader {
                        let export = export.map_err(|error| ShapeError::Malformed(error.to_string()))?;
                        let frame = current_frame(&mut stack)?;
                        // An export adds a new index to its sort's space.
                        match export.kind {
                            ComponentExternalKind::Module => {
                                let module = frame.modules.get(export.index as usize).copied();
                                frame.modules.push(module.unwrap_or_default());
                            }
                            ComponentExternalKind::Component => {
                                let nested = frame.components.get(export.index as usize).copied();
                                frame.components.push(nested.unwrap_or_default());
                            }
                            _ => {}
                        }
                        if top_level {
                            shape.exports.push(export.name.name.to_owned());
                        }
                    }
                }
                Payload::End(_) => match stack.pop() {
                    Some(Scope::Module(module)) => current_frame(&mut stack)?.modules.push(module),
                    Some(Scope::Component(frame)) => match stack.last_mut() {
                        Some(Scope::Component(parent)) => parent.components.push(frame.counts),
                        Some(Scope::Module(_)) => return Err(malformed("a component inside a module")),
                        None => {
                            shape.counts = frame.counts;
                            return Ok(shape);
                        }
                    },
                    None => return Err(malformed("unbalanced sections")),
                },
                _ => {}
            }
        }
        Err(malformed("truncated component"))
    }

    /// The first configured limit this shape exceeds, naming its key.
    pub fn check(&self, limits: ComponentLimits, memory_bytes: u64) -> Result<(), ShapeLimitError> {
        let checks = [
            (
                "core module instances",
                u64::from(self.counts.core_instances),
                u64::from(limits.core_instances),
                "limits.max_core_instances_per_component",
            ),
            (
                "linear memories",
                u64::from(self.counts.memories),
                u64::from(limits.memories),
                "limits.max_memories_per_component",
            ),
            (
                "tables",
                u64::from(self.counts.tables),
                u64::from(limits.tables),
                "limits.max_tables_per_component",
            ),
            (
                "bytes of initial linear memory",
                self.largest_initial_memory,
                memory_bytes,
                "limits.memory_mib",
            ),
            (
                "initial table elements",
                self.largest_initial_table,
                MAX_TABLE_ELEMENTS as u64,
                "the host's table limit (not configurable)",
            ),
        ];
        for (what, count, limit, key) in checks {
            if count > limit {
                return Err(ShapeLimitError { what, count, limit, key });
            }
        }
        Ok(())
    }
}

fn malformed(what: &str) -> ShapeError {
    ShapeError::Malformed(what.to_owned())
}

fn current_frame(stack: &mut [Scope]) -> Result<&mut Frame, ShapeError> {
    match stack.last_mut() {
        Some(Scope::Component(frame)) => Ok(frame),
        _ => Err(malformed("a component section outside a component")),
    }
}

/// Aliases that add to the core module or component index spaces.
fn add_alias(stack: &mut [Scope], alias: ComponentAlias<'_>) -> Result<(), ShapeError> {
    let (sort_is_module, counts) = match alias {
        ComponentAlias::Outer { kind, count, index } => {
            let frames: Vec<&Frame> = stack
                .iter()
                .filter_map(|scope| match scope {
                    Scope::Component(frame) => Some(frame),
                    Scope::Module(_) => None,
                })
                .collect();
            let outer = frames.len().checked_sub(1 + count as usize).and_then(|at| frames.get(at));
            match kind {
                ComponentOuterAliasKind::CoreModule => {
                    (true, outer.and_then(|frame| frame.modules.get(index as usize)).copied())
                }
                ComponentOuterAliasKind::Component => {
                    (false, outer.and_then(|frame| frame.components.get(index as usize)).copied())
                }
                _ => return Ok(()),
            }
        }
        ComponentAlias::InstanceExport { kind: ComponentExternalKind::Module, .. } => (true, None),
        ComponentAlias::InstanceExport { kind: ComponentExternalKind::Component, .. } => (false, None),
        _ => return Ok(()),
    };
    let frame = current_frame(stack)?;
    let space = if sort_is_module { &mut frame.modules } else { &mut frame.components };
    space.push(counts.unwrap_or_default());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_built_in_tool_as_wasmtime_counts_it() {
        let (_, bytes) = harmonia_artifacts::BUILTIN_TOOLS[0];
        let shape = ComponentShape::read(bytes).unwrap();
        assert!(shape.imports.iter().any(|import| import.starts_with("harmonia:tools/")), "{shape:?}");
        assert!(shape.exports.iter().any(|export| export.starts_with("harmonia:tools/tool")), "{shape:?}");
        // A Rust tool: its module, the WASI adapter's and a shim.
        assert!((2..=4).contains(&shape.counts.core_instances), "{shape:?}");
        assert!(shape.counts.memories >= 1, "{shape:?}");
    }

    #[test]
    fn a_core_module_and_garbage_are_told_apart() {
        assert_eq!(ComponentShape::read(b"\0asm\x01\0\0\0"), Err(ShapeError::CoreModule));
        assert!(matches!(ComponentShape::read(b"not wasm"), Err(ShapeError::Malformed(_))));
        let (_, bytes) = harmonia_artifacts::BUILTIN_TOOLS[0];
        assert!(matches!(ComponentShape::read(&bytes[..bytes.len() / 2]), Err(ShapeError::Malformed(_))));
    }

    #[test]
    fn each_limit_names_its_config_key() {
        let shape = ComponentShape {
            counts: Counts { core_instances: 14, memories: 3, tables: 9 },
            largest_initial_memory: 2 << 20,
            ..ComponentShape::default()
        };
        let roomy = ComponentLimits { core_instances: 32, memories: 4, tables: 32 };
        assert_eq!(shape.check(roomy, 64 << 20), Ok(()));
        for (limits, memory, key) in [
            (
                ComponentLimits { core_instances: 8, ..roomy },
                64 << 20,
                "limits.max_core_instances_per_component",
            ),
            (ComponentLimits { memories: 2, ..roomy }, 64 << 20, "limits.max_memories_per_component"),
            (ComponentLimits { tables: 8, ..roomy }, 64 << 20, "limits.max_tables_per_component"),
            (roomy, 1 << 20, "limits.memory_mib"),
        ] {
            let error = shape.check(limits, memory).unwrap_err();
            assert_eq!(error.key, key);
            assert!(error.to_string().contains(key), "{error}");
        }
    }
}
