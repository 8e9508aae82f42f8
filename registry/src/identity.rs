//! Keyless signer identities: who a Fulcio certificate was issued to, and
//! which of them a trust rule accepts.
//!
//! A Fulcio certificate names its subject in its one Subject Alternative
//! Name (an email address, or a URI such as a GitHub Actions workflow
//! `https://github.com/acme/tools/.github/workflows/release.yml@refs/heads/main`)
//! and the OIDC issuer that vouched for it in extension
//! `1.3.6.1.4.1.57264.1.8` (a DER UTF8String), or, in certificates from
//! before that extension, `1.3.6.1.4.1.57264.1.1` (the raw bytes).
//!
//! A trust rule lists identities as
//! `{ subject = "…", issuer = "…" }` (both compared exactly) or
//! `{ subject_regex = "…", issuer = "…" }`, where the regular expression
//! (the `regex` crate's syntax) must match the **whole** subject: it is
//! compiled as `^(?:…)$`, so `https://github.com/acme/.*` does not accept
//! `https://evil.example/?https://github.com/acme/x`. The issuer is always
//! exact.
//!
//! The signer a keyless signature is recorded under (in `plugins.lock` and
//! every trace `tool_call` entry) is `identity:<issuer>#<subject>`. An
//! OIDC issuer is a URL without a fragment, so the first `#` ends it; a
//! certificate whose issuer holds a `#` is refused.

use serde::{Deserialize, Serialize};
use x509_parser::certificate::X509Certificate;
use x509_parser::der_parser::oid::Oid;
use x509_parser::extensions::GeneralName;

/// The signer prefix of a keyless identity.
pub const SIGNER_PREFIX: &str = "identity:";

/// One accepted identity, as written in `[plugins.trust]`.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq, Serialize)]
#[serde(deny_unknown_fields)]
pub struct IdentityConfig {
    /// The certificate's subject, exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// A regular expression the whole subject must match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject_regex: Option<String>,
    /// The OIDC issuer, exactly.
    pub issuer: String,
}

/// An accepted identity, its pattern compiled.
#[derive(Clone, Debug)]
pub struct Identity {
    subject: Subject,
    issuer: String,
}

#[derive(Clone, Debug)]
enum Subject {
    Exact(String),
    Pattern(regex::Regex),
}

impl Identity {
    /// Compile one configured identity; `at` names it in errors.
    pub fn from_config(config: &IdentityConfig, at: &str) -> Result<Self, String> {
        if config.issuer.is_empty() {
            return Err(format!("{at}: an identity needs a non-empty `issuer`"));
        }
        let subject = match (&config.subject, &config.subject_regex) {
            (Some(subject), None) if !subject.is_empty() => Subject::Exact(subject.clone()),
            (None, Some(pattern)) => regex::Regex::new(&format!("^(?:{pattern})$"))
                .map(Subject::Pattern)
                .map_err(|error| format!("{at}: subject_regex `{pattern}`: {error}"))?,
            _ => {
                return Err(format!(
                    "{at}: an identity names exactly one of `subject` (non-empty) or `subject_regex`"
                ));
            }
        };
        Ok(Self { subject, issuer: config.issuer.clone() })
    }

    /// An identity accepting exactly `subject` from `issuer`.
    pub fn exact(subject: &str, issuer: &str) -> Self {
        Self { subject: Subject::Exact(subject.to_owned()), issuer: issuer.to_owned() }
    }

    /// True when the certificate's `signer` is accepted.
    pub fn accepts(&self, signer: &CertificateIdentity) -> bool {
        signer.issuer == self.issuer
            && match &self.subject {
                Subject::Exact(subject) => *subject == signer.subject,
                Subject::Pattern(pattern) => pattern.is_match(&signer.subject),
            }
    }
}

/// Who a certificate was issued to.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CertificateIdentity {
    /// Its Subject Alternative Name (email or URI).
    pub subject: String,
    /// Its OIDC issuer.
    pub issuer: String,
}

impl CertificateIdentity {
    /// The signer string: `identity:<issuer>#<subject>`.
    pub fn signer(&self) -> String {
        format!("{SIGNER_PREFIX}{}#{}", self.issuer, self.subject)
    }
}

impl std::fmt::Display for CertificateIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "subject `{}`, issuer `{}`", self.subject, self.issuer)
    }
}

/// Fulcio's OIDC issuer extension (a DER UTF8String).
const ISSUER_V2: &[u64] = &[1, 3, 6, 1, 4, 1, 57264, 1, 8];
/// The issuer extension before it (raw bytes).
const ISSUER_V1: &[u64] = &[1, 3, 6, 1, 4, 1, 57264, 1, 1];

/// Read the identity of a Fulcio certificate, or say what is missing.
pub fn of_certificate(certificate: &X509Certificate<'_>) -> Result<CertificateIdentity, String> {
    let names = certificate
        .subject_alternative_name()
        .map_err(|error| format!("its Subject Alternative Name does not parse: {error}"))?
        .ok_or("it has no Subject Alternative Name")?;
    let subjects: Vec<&str> = names
        .value
        .general_names
        .iter()
        .filter_map(|name| match name {
            GeneralName::RFC822Name(email) => Some(*email),
            GeneralName::URI(uri) => Some(*uri),
            _ => None,
        })
        .collect();
    let [subject] = subjects.as_slice() else {
        return Err(format!("it names {} email or URI subjects, not exactly one", subjects.len()));
    };
    let extension = |arcs: &[u64]| {
        let oid = Oid::from(arcs).map_err(|_| "a bad extension OID".to_owned())?;
        certificate
            .get_extension_unique(&oid)
            .map(|found| found.map(|extension| extension.value))
            .map_err(|error| format!("its extension {oid} is repeated or malformed: {error}"))
    };
    let issuer = match (extension(ISSUER_V2)?, extension(ISSUER_V1)?) {
        (Some(value), _) => {
            let (rest, text) =
                x509_parser::der_parser::der::parse_der_utf8string(value).map_err(|error| {
                    format!("its OIDC issuer (1.3.6.1.4.1.57264.1.8) is not a UTF8String: {error}")
                })?;
            if !rest.is_empty() {
                return Err("its OIDC issuer (1.3.6.1.4.1.57264.1.8) has trailing bytes".into());
            }
            text.as_str().map_err(|error| format!("its OIDC issuer is not UTF-8: {error}"))?.to_owned()
        }
        (None, Some(value)) => String::from_utf8(value.to_vec())
            .map_err(|_| "its OIDC issuer (1.3.6.1.4.1.57264.1.1) is not UTF-8".to_owned())?,
        (None, None) => {
            return Err("it names no OIDC issuer (extension 1.3.6.1.4.1.57264.1.8 or .1.1)".into());
        }
    };
    if issuer.is_empty() || issuer.contains('#') {
        return Err(format!(
            "its OIDC issuer `{issuer}` is empty or holds a `#`, which no OIDC issuer URL does"
        ));
    }
    Ok(CertificateIdentity { subject: (*subject).to_owned(), issuer })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(subject: Option<&str>, regex: Option<&str>, issuer: &str) -> IdentityConfig {
        IdentityConfig {
            subject: subject.map(str::to_owned),
            subject_regex: regex.map(str::to_owned),
            issuer: issuer.to_owned(),
        }
    }

    #[test]
    fn a_subject_pattern_must_match_the_whole_subject_and_the_issuer_exactly() {
        let issuer = "https://token.actions.githubusercontent.com";
        let rule =
            Identity::from_config(&config(None, Some("https://github.com/acme/.*"), issuer), "t").unwrap();
        let signer = |subject: &str, issuer: &str| CertificateIdentity {
            subject: subject.into(),
            issuer: issuer.into(),
        };
        assert!(rule.accepts(&signer(
            "https://github.com/acme/tools/.github/workflows/r.yml@refs/heads/main",
            issuer
        )));
        assert!(!rule.accepts(&signer("https://evil.example/?https://github.com/acme/x", issuer)));
        assert!(!rule.accepts(&signer(
            "https://github.com/acme/x",
            "https://token.actions.githubusercontent.com.evil"
        )));
        let exact = Identity::exact("ci@acme.example", issuer);
        assert!(exact.accepts(&signer("ci@acme.example", issuer)));
        assert!(!exact.accepts(&signer("ci@acme.example.evil", issuer)));
    }

    #[test]
    fn an_identity_names_one_subject_form_and_an_issuer() {
        for bad in [
            config(None, None, "i"),
            config(Some("s"), Some("s"), "i"),
            config(Some(""), None, "i"),
            config(Some("s"), None, ""),
            config(None, Some("("), "i"),
        ] {
            assert!(Identity::from_config(&bad, "rule").unwrap_err().starts_with("rule: "), "{bad:?}");
        }
    }
}
