//! Write a Harmonia tool as a WebAssembly component: only its logic.
//!
//! A tool crate writes an input type, two plain functions and one line:
//!
//! ```ignore
//! pub fn descriptor() -> Descriptor { ... }                                   // the contract
//! pub fn run(web: &impl PublicWeb, input: MyInput) -> Result<Output, ToolError> { ... } // the logic
//! harmonia_guest_sdk::export!(descriptor, run, harmonia_guest_sdk::HostPublicWeb);    // the export
//! ```
//!
//! `MyInput` is a `#[derive(serde::Deserialize)]` struct: the SDK parses the
//! call's text into it ([`input`]) and answers `invalid_input` itself when
//! it does not fit; natively, [`invoke`] parses the same way for tests and
//! benchmarks. Everything else (the WIT bindings, the conversions, the
//! contract's errors) lives here too.
//!
//! Parts:
//! - [`error`]: error categories, [`ToolError`] and the contract's stable codes.
//! - [`output`]: [`Output`] and [`Evidence`], what a successful call returns.
//! - [`descriptor`]: [`Descriptor`], the contract a tool declares at load.
//! - [`input`]: typed, strict parsing of the input object (unknown fields
//!   rejected) and the field types whose constants also write the schema.
//! - [`capability`]: the read-only capabilities as plain traits
//!   ([`PublicWeb`], [`Workspace`]), so tool logic can run and be tested
//!   natively as well as in the sandbox.
//! - [`time`]: strict RFC 3339 parsing to UTC, the one the host and the
//!   built-in tools use (workspace times such as `publishedAt` are RFC 3339).
//! - `testing` (feature `testing`): what test guests share, their
//!   descriptor and the raw input and output hostile guests need.
//! - `guest` (wasm32 only): the one `wit_bindgen::generate!`, the host-backed
//!   capabilities ([`HostPublicWeb`], [`HostWorkspace`]) and the export glue.

pub mod capability;
pub mod descriptor;
pub mod error;
pub mod input;
pub mod output;
#[cfg(feature = "testing")]
pub mod testing;

/// Strict RFC 3339 date-times, parsed to UTC seconds (docs/contract.md).
pub mod time {
    pub use harmonia_contract::time::{UtcTime, parse_rfc3339};
}

#[cfg(target_arch = "wasm32")]
#[doc(hidden)]
pub mod guest;

pub use capability::{FeedRead, FetchError, PublicWeb, ReadError, Response, Workspace};
pub use descriptor::{Descriptor, Scope};
pub use error::{Category, ErrorSpec, ToolError};
pub use input::{FromInput, NoInput, invoke};
pub use output::{Answer, Evidence, Output};

#[cfg(target_arch = "wasm32")]
pub use guest::{HostPublicWeb, HostWorkspace};

/// Export a tool: `describe` answers `$descriptor()` (a function, or a
/// closure such as `|| testing::descriptor("x", 5_000)`), and `invoke` parses
/// the input text into `$run`'s input type (see [`input`]) and answers
/// `$run(&$capability, input)`, or `$run(input)` for a guest that reads no
/// capability.
///
/// ```ignore
/// harmonia_guest_sdk::export!(descriptor, run, harmonia_guest_sdk::HostPublicWeb);
/// harmonia_guest_sdk::export!(descriptor, run); // no capability
/// ```
///
/// On targets other than wasm32 the macro expands to nothing, so the same
/// crate builds natively for unit tests and benchmarks, where `run` gets a
/// fake capability (and [`invoke`] parses the input as the export does).
#[macro_export]
macro_rules! export {
    (@with $descriptor:expr, $call:expr) => {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            struct HarmoniaToolExport;

            impl $crate::guest::bindings::exports::harmonia::tools::tool::Guest for HarmoniaToolExport {
                fn describe() -> $crate::guest::bindings::harmonia::tools::types::Descriptor {
                    $crate::guest::descriptor_to_wit(($descriptor)())
                }

                fn invoke(
                    input: ::std::string::String,
                ) -> ::std::result::Result<
                    $crate::guest::bindings::harmonia::tools::types::Output,
                    $crate::guest::bindings::harmonia::tools::types::ToolError,
                > {
                    $crate::guest::result_to_wit($crate::invoke(&input, $call))
                }
            }

            $crate::guest::bindings::export!(HarmoniaToolExport with_types_in $crate::guest::bindings);
        };
    };
    ($descriptor:expr, $run:path $(,)?) => {
        $crate::export!(@with $descriptor, |input| $run(input));
    };
    ($descriptor:expr, $run:path, $capability:expr $(,)?) => {
        $crate::export!(@with $descriptor, |input| $run(&$capability, input));
    };
}
