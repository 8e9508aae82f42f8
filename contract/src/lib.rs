//! Harmonia's contract as pure data and parsers (docs/contract.md): no
//! wasmtime, no database, no file or network I/O, so the host, the guest
//! SDK and the fuzz targets share one definition of every table and rule.
//!
//! Parts:
//! - [`codes`]: categories, the stable error codes with their retryability
//!   and fixed messages, the runtime codes, the name and code patterns.
//! - [`time`]: RFC 3339 date-times, parsed strictly and formatted in UTC.
//! - [`job`] (feature `job`, in `full`): the redacted summary of a stored
//!   job, the only view of a job that leaves the host; `get_job_status`
//!   builds the same one.
//!
//! With the default `full` feature (off in WebAssembly tools, which need
//! only the two above):
//! - [`envelope`]: the envelope, its strict parser and evidence ids.
//! - [`descriptor`]: a tool's declared contract and its validation.
//! - [`url`]: the public web's URL and origin rules.
//! - [`digest`]: hashes spelled as lowercase hex.
//! - [`json_size`]: a value's size as compact JSON, counted without
//!   building it.
//! - [`workspace_document`]: the workspace JSON document, parsed strictly
//!   as a stream.
//! - [`liaison`]: the answer, the trace and its seal, skills, attempts,
//!   grounding, the detector of claimed effects and the validator.

pub mod codes;
#[cfg(feature = "job")]
pub mod job;
pub mod time;

#[cfg(feature = "full")]
pub mod descriptor;
#[cfg(feature = "full")]
pub mod digest;
#[cfg(feature = "full")]
pub mod envelope;
#[cfg(feature = "full")]
pub mod json_size;
#[cfg(feature = "full")]
pub mod liaison;
#[cfg(feature = "full")]
pub mod url;
#[cfg(feature = "full")]
pub mod workspace_document;
