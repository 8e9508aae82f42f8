//! The redacted summary of a stored job, which the host builds before a
//! guest sees a job and `get_job_status` returns: the contract crate's
//! (`harmonia_contract::job`), since the host's redaction is a guarantee
//! of the contract, not of any tool.

pub use harmonia_contract::job::*;
