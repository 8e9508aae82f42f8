//! Host-side bindings of `wit/`, generated, and nothing else: the per-call
//! store data the imports run on is `call_state`, each capability's import
//! lives with the capability (`capability::public_web::guest`,
//! `capability::workspace::guest`).
//!
//! One host world includes both tool worlds, so one linker serves every
//! plugin; the loader's policy decides which capability each may import.
//! It is generated twice: blocking imports for [`crate::Host::call`], and
//! [`asynchronous`] imports for [`crate::Host::call_async`], which share
//! every type with the blocking ones.

#![allow(missing_docs)]

wasmtime::component::bindgen!({
    path: "../wit",
    inline: "
        package harmonia:host;
        world tool-host {
            include harmonia:tools/public-tool@0.1.0;
            include harmonia:tools/workspace-tool@0.1.0;
        }
    ",
    world: "harmonia:host/tool-host",
    imports: { default: trappable },
});

pub(crate) use harmonia::tools::{public_web, types, workspace};

/// The same world with async imports and exports. The shared `types`
/// interface is the blocking bindings' own; each import's types are
/// generated again (bindgen replaces only resources one by one), and the
/// capabilities map their answers onto both with one macro.
pub mod asynchronous {
    wasmtime::component::bindgen!({
        path: "../wit",
        inline: "
            package harmonia:host;
            world tool-host {
                include harmonia:tools/public-tool@0.1.0;
                include harmonia:tools/workspace-tool@0.1.0;
            }
        ",
        world: "harmonia:host/tool-host",
        imports: { default: async | trappable },
        exports: { default: async },
        with: {
            "harmonia:tools/types": super::harmonia::tools::types,
        },
    });

    pub(crate) use harmonia::tools::{public_web, workspace};
}
