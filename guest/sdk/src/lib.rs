//! Write a Harmonia tool as a WebAssembly component: only its logic.
//!
//! A tool crate implements [`Tool`] and calls [`export_tool!`], or writes
//! `descriptor()` and `run(&capability, input)` and calls
//! [`export_logic!`]; everything else (the WIT bindings, the conversions,
//! the contract's errors) lives here.
//!
//! Parts:
//! - [`error`]: error categories, [`ToolError`] and the contract's stable codes.
//! - [`output`]: [`Output`] and [`Evidence`], what a successful call returns.
//! - [`descriptor`]: [`Descriptor`], the contract a tool declares at load.
//! - [`input`]: strict parsing of the input object (unknown fields rejected).
//! - [`capability`]: the read-only capabilities as plain traits
//!   ([`PublicWeb`], [`Workspace`]), so tool logic can run and be tested
//!   natively as well as in the sandbox.
//! - `guest` (wasm32 only): the one `wit_bindgen::generate!`, the host-backed
//!   capabilities ([`HostPublicWeb`], [`HostWorkspace`]) and the export glue.

pub mod capability;
pub mod descriptor;
pub mod error;
pub mod input;
pub mod output;

#[cfg(target_arch = "wasm32")]
#[doc(hidden)]
pub mod guest;

pub use capability::{FeedRead, FetchError, PublicWeb, ReadError, Response, Workspace};
pub use descriptor::{Descriptor, Scope};
pub use error::{Category, ErrorSpec, ToolError};
pub use input::Input;
pub use output::{Evidence, Output};

#[cfg(target_arch = "wasm32")]
pub use guest::{HostPublicWeb, HostWorkspace};

/// A tool: its contract and its logic.
pub trait Tool {
    /// The tool's contract, read once by the host at load.
    fn descriptor() -> Descriptor;

    /// Run once on the input text (a JSON value, unparsed).
    fn invoke(input: &str) -> Result<Output, ToolError>;
}

/// Export a [`Tool`] implementation as the component's `tool` interface.
///
/// ```ignore
/// struct Echo;
/// impl harmonia_guest_sdk::Tool for Echo { /* ... */ }
/// harmonia_guest_sdk::export_tool!(Echo);
/// ```
///
/// On targets other than wasm32 the macro expands to nothing, so the same
/// crate builds natively for unit tests and benchmarks.
#[macro_export]
macro_rules! export_tool {
    ($tool:ty) => {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            struct HarmoniaToolExport;

            impl $crate::guest::bindings::exports::harmonia::tools::tool::Guest for HarmoniaToolExport {
                fn describe() -> $crate::guest::bindings::harmonia::tools::types::Descriptor {
                    $crate::guest::descriptor_to_wit(<$tool as $crate::Tool>::descriptor())
                }

                fn invoke(
                    input: ::std::string::String,
                ) -> ::std::result::Result<
                    $crate::guest::bindings::harmonia::tools::types::Output,
                    $crate::guest::bindings::harmonia::tools::types::ToolError,
                > {
                    $crate::guest::result_to_wit(<$tool as $crate::Tool>::invoke(&input))
                }
            }

    $crate::guest::bindings::export!(HarmoniaToolExport with_types_in $crate::guest::bindings);
        };
    };
}

/// Export a tool written as two plain functions: `descriptor()` and
/// `run(&capability, input)`, run against the host's capability.
///
/// ```ignore
/// harmonia_guest_sdk::export_logic!(descriptor, run, harmonia_guest_sdk::HostPublicWeb);
/// ```
///
/// Like [`export_tool!`], it expands to nothing off wasm32, so `run` stays
/// testable natively with fake capabilities.
#[macro_export]
macro_rules! export_logic {
    ($descriptor:path, $run:path, $capability:expr) => {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            struct HarmoniaTool;

            impl $crate::Tool for HarmoniaTool {
                fn descriptor() -> $crate::Descriptor {
                    $descriptor()
                }

                fn invoke(input: &str) -> ::std::result::Result<$crate::Output, $crate::ToolError> {
                    $run(&$capability, input)
                }
            }

            $crate::export_tool!(HarmoniaTool);
        };
    };
}
