//! The WIT bindings and the glue between them and the SDK's plain types.
//!
//! Bindings are generated for one world that includes both tool worlds, so
//! every tool shares them; a component only imports the capability its
//! code actually calls, which is how its world (and scope) is decided.

use crate::capability::{FeedRead, FetchError, PublicWeb, ReadError, Response, Workspace};
use crate::descriptor::{Descriptor, Scope};
use crate::error::{Category, ToolError};
use crate::output::Answer;

#[allow(missing_docs)]
pub mod bindings {
    wit_bindgen::generate!({
        path: "../../wit",
        inline: "
            package harmonia:sdk;
            world guest {
                include harmonia:tools/public-tool@0.1.0;
                include harmonia:tools/workspace-tool@0.1.0;
            }
        ",
        world: "harmonia:sdk/guest",
        generate_all,
        pub_export_macro: true,
        default_bindings_module: "harmonia_guest_sdk::guest::bindings",
    });
}

use bindings::harmonia::tools::{public_web, types, workspace};

fn category_to_wit(category: Category) -> types::ErrorCategory {
    match category {
        Category::Validation => types::ErrorCategory::Validation,
        Category::Authorization => types::ErrorCategory::Authorization,
        Category::NotFound => types::ErrorCategory::NotFound,
        Category::Dependency => types::ErrorCategory::Dependency,
        Category::ProviderPermanent => types::ErrorCategory::ProviderPermanent,
    }
}

/// Convert a descriptor for `describe`.
pub fn descriptor_to_wit(descriptor: Descriptor) -> types::Descriptor {
    types::Descriptor {
        name: descriptor.name.to_owned(),
        version: descriptor.version.to_owned(),
        purpose: descriptor.purpose.to_owned(),
        input_schema: descriptor.input_schema.to_string(),
        errors: descriptor
            .errors
            .iter()
            .map(|spec| types::ErrorSpec {
                code: spec.code.to_owned(),
                category: category_to_wit(spec.category),
                retryable: spec.retryable,
            })
            .collect(),
        scope: match descriptor.scope {
            Scope::Public => types::Scope::Public,
            Scope::Workspace => types::Scope::Workspace,
        },
        deadline_ms: descriptor.deadline_ms,
        skills: descriptor.skills.iter().map(|skill| (*skill).to_owned()).collect(),
    }
}

/// Convert the result of `invoke`.
pub fn result_to_wit(result: Result<impl Answer, ToolError>) -> Result<types::Output, types::ToolError> {
    match result {
        Ok(answer) => {
            let (data, evidence) = answer.into_parts();
            Ok(types::Output {
                data,
                evidence: evidence
                    .into_iter()
                    .map(|item| types::EvidenceItem { source: item.source, reference: item.reference })
                    .collect(),
            })
        }
        Err(error) => Err(types::ToolError {
            code: error.code,
            category: category_to_wit(error.category),
            message: error.message,
            retryable: error.retryable,
        }),
    }
}

/// The host's `public-web` capability.
pub struct HostPublicWeb;

impl PublicWeb for HostPublicWeb {
    fn get(&self, url: &str) -> Result<Response, FetchError> {
        match public_web::get(url) {
            Ok(response) => Ok(Response {
                status: response.status,
                content_type: response.content_type,
                body: response.body,
            }),
            Err(public_web::FetchError::Denied) => Err(FetchError::Denied),
            Err(public_web::FetchError::InvalidUrl) => Err(FetchError::InvalidUrl),
            Err(public_web::FetchError::TimedOut) => Err(FetchError::TimedOut),
            Err(public_web::FetchError::TooLarge) => Err(FetchError::TooLarge),
            Err(public_web::FetchError::Unavailable) => Err(FetchError::Unavailable),
        }
    }
}

fn read_error(error: workspace::ReadError) -> ReadError {
    match error {
        workspace::ReadError::Unauthorized => ReadError::Unauthorized,
        workspace::ReadError::NotFound => ReadError::NotFound,
        workspace::ReadError::Rejected => ReadError::Rejected,
        workspace::ReadError::Unavailable => ReadError::Unavailable,
        workspace::ReadError::TimedOut => ReadError::TimedOut,
    }
}

/// The host's `workspace` capability, bound to the caller's workspace.
pub struct HostWorkspace;

impl Workspace for HostWorkspace {
    fn engagement(&self) -> Result<String, ReadError> {
        workspace::engagement().map_err(read_error)
    }

    fn feed(&self) -> Result<FeedRead, ReadError> {
        workspace::feed()
            .map(|read| FeedRead {
                document: read.document,
                updated_at: read.updated_at,
                read_at: read.read_at,
            })
            .map_err(read_error)
    }

    fn job(&self, id: &str) -> Result<String, ReadError> {
        workspace::job(id).map_err(read_error)
    }
}
