//! Host-side bindings of `wit/`, generated, and nothing else: each
//! capability's import runs on that capability's view, in its folder
//! (`capability::public_web::guest`, `capability::workspace::guest`); the
//! shared `types` on the call's store data (`call_state`).
//!
//! One host world includes both tool worlds, so one linker serves every
//! plugin; the loader's policy decides which capability each may import.
//! Imports and exports are async: every call runs as a future
//! ([`crate::Host::call`] polls that same future on the caller's thread),
//! so a capability waiting on the network holds a task, never a thread.

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
    imports: { default: async | trappable },
    exports: { default: async },
});

pub(crate) use harmonia::tools::{public_web, types, workspace};
