//! Host-side bindings of `wit/`, generated, and nothing else: each
//! capability's import runs on that capability's view, in its folder
//! (`capability::public_web::guest`, `capability::workspace::guest`); the
//! shared `types` on the call's store data (`call_state`).
//!
//! The host's world (`tool-host` in `wit/tools.wit`) includes every tool
//! world, so one linker serves every plugin and a new capability adds no
//! line here; the loader's policy decides which capability each may import.
//! Imports and exports are async: every call runs as a future
//! ([`crate::Host::call`] polls that same future on the caller's thread),
//! so a capability waiting on the network holds a task, never a thread.

#![allow(missing_docs)]

wasmtime::component::bindgen!({
    path: "../wit",
    world: "harmonia:tools/tool-host",
    imports: { default: async | trappable },
    exports: { default: async },
});

pub(crate) use harmonia::tools::*;
