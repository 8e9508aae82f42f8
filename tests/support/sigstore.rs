//! A fake Sigstore for keyless signatures, offline: a Fulcio CA (a P-384
//! root and intermediate, named as Sigstore's are) issuing P-256 leaf
//! certificates to an identity, a Rekor log (a P-256 key) whose signed
//! entry timestamps cover `hashedrekord` entries, and the
//! `trusted_root.json` naming both.
//!
//! [`Keyless`] is what `cosign sign` (keyless) stores in a signature
//! layer: the payload, the signature (base64, the
//! `dev.cosignproject.cosign/signature` annotation), the leaf PEM
//! (`dev.sigstore.cosign/certificate`), the chain PEM
//! (`dev.sigstore.cosign/chain`) and the bundle JSON
//! (`dev.sigstore.cosign/bundle`). Everything here is plain data (text and
//! bytes), so tests of any crate can use it without sharing its types.
//! Hostile tests change one part of it at a time.

use base64::Engine as _;
use rcgen::{
    BasicConstraints, Certificate, CertificateParams, CustomExtension, DistinguishedName, DnType,
    ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair, KeyUsagePurpose, PublicKeyData as _, SanType,
    SigningKey as _,
};
use serde_json::json;
use sha2::{Digest as _, Sha256};

/// GitHub Actions' OIDC issuer.
pub const GITHUB_ISSUER: &str = "https://token.actions.githubusercontent.com";
/// A release workflow's identity, as Fulcio names it.
pub const WORKFLOW: &str = "https://github.com/acme/tools/.github/workflows/release.yml@refs/heads/main";
/// The integrated time the fake log records by default (2026-11-01).
pub const LOGGED_AT: i64 = 1_793_491_200;

fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn time(seconds: i64) -> time::OffsetDateTime {
    time::OffsetDateTime::from_unix_timestamp(seconds).expect("a time in range")
}

fn rfc3339(seconds: i64) -> String {
    time(seconds).format(&time::format_description::well_known::Rfc3339).expect("formats")
}

/// A fake Fulcio: a root and an intermediate CA.
pub struct Fulcio {
    root: Certificate,
    intermediate_key: KeyPair,
    intermediate_params: CertificateParams,
    intermediate: Certificate,
}

fn name(common_name: &str) -> DistinguishedName {
    let mut name = DistinguishedName::new();
    name.push(DnType::OrganizationName, "sigstore.dev");
    name.push(DnType::CommonName, common_name);
    name
}

fn ca_params(common_name: &str, path_length: Option<u8>) -> CertificateParams {
    let mut params = CertificateParams::default();
    params.distinguished_name = name(common_name);
    params.is_ca =
        IsCa::Ca(path_length.map_or(BasicConstraints::Unconstrained, BasicConstraints::Constrained));
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    params.not_before = time(LOGGED_AT - 5 * 365 * 86_400);
    params.not_after = time(LOGGED_AT + 5 * 365 * 86_400);
    params
}

/// Who a leaf certificate is for, and when it is valid.
#[derive(Clone, Debug)]
pub struct LeafSpec {
    /// The subject: an email address (with `@` and no `:`) or a URI.
    pub subject: String,
    /// The OIDC issuer.
    pub issuer: String,
    /// First second of validity.
    pub not_before: i64,
    /// Last second of validity.
    pub not_after: i64,
    /// Write the issuer the old way only (extension 1.3.6.1.4.1.57264.1.1,
    /// raw bytes) instead of 1.3.6.1.4.1.57264.1.8 (a UTF8String).
    pub legacy_issuer: bool,
    /// Give the leaf the code-signing extended key usage (Fulcio does).
    pub code_signing: bool,
}

impl LeafSpec {
    /// A GitHub Actions workflow's identity, valid for ten minutes around
    /// [`LOGGED_AT`] as Fulcio issues them.
    pub fn workflow() -> Self {
        Self::of(WORKFLOW, GITHUB_ISSUER)
    }

    /// `subject` from `issuer`, valid for ten minutes around [`LOGGED_AT`].
    pub fn of(subject: &str, issuer: &str) -> Self {
        Self {
            subject: subject.to_owned(),
            issuer: issuer.to_owned(),
            not_before: LOGGED_AT - 60,
            not_after: LOGGED_AT + 540,
            legacy_issuer: false,
            code_signing: true,
        }
    }
}

/// DER of a UTF8String (what the issuer extension holds).
fn utf8_string(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut der = vec![0x0c];
    match bytes.len() {
        length @ 0..=127 => der.push(length as u8),
        length @ 128..=255 => der.extend([0x81, length as u8]),
        length => der.extend([0x82, (length >> 8) as u8, length as u8]),
    }
    der.extend_from_slice(bytes);
    der
}

/// A leaf certificate and its key.
pub struct Leaf {
    /// Its key (the ephemeral key cosign signs with).
    pub key: KeyPair,
    /// Its PEM.
    pub pem: String,
}

impl Leaf {
    /// Sign `payload` with the leaf's key (ECDSA P-256, SHA-256, DER).
    pub fn sign(&self, payload: &[u8]) -> Vec<u8> {
        self.key.sign(payload).expect("a signature")
    }
}

impl Default for Fulcio {
    fn default() -> Self {
        Self::new()
    }
}

impl Fulcio {
    /// A new CA, named as Sigstore's (so two fakes differ only by keys).
    pub fn new() -> Self {
        let root_key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P384_SHA384).expect("a P-384 key");
        let root_params = ca_params("sigstore", None);
        let root = root_params.self_signed(&root_key).expect("a root certificate");
        let intermediate_key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P384_SHA384).expect("a P-384 key");
        let mut intermediate_params = ca_params("sigstore-intermediate", Some(0));
        intermediate_params.extended_key_usages = vec![ExtendedKeyUsagePurpose::CodeSigning];
        let intermediate = intermediate_params
            .signed_by(&intermediate_key, &Issuer::from_params(&root_params, &root_key))
            .expect("an intermediate certificate");
        Self { root, intermediate_key, intermediate_params, intermediate }
    }

    /// A CA of its own (its intermediate named as `trusted`'s, as every
    /// fake's is) whose chain annotation names `trusted`'s root: an
    /// intermediate that does not chain to the root it claims.
    pub fn rogue_intermediate_of(trusted: &Fulcio) -> Self {
        let mut rogue = Self::new();
        rogue.root = trusted.root.clone();
        rogue
    }

    /// The root's DER.
    pub fn root_der(&self) -> Vec<u8> {
        self.root.der().to_vec()
    }

    /// The intermediate's DER.
    pub fn intermediate_der(&self) -> Vec<u8> {
        self.intermediate.der().to_vec()
    }

    /// The chain annotation: the intermediate, then the root, PEM.
    pub fn chain_pem(&self) -> String {
        format!("{}{}", self.intermediate.pem(), self.root.pem())
    }

    /// Issue a leaf certificate as Fulcio does.
    pub fn issue(&self, spec: &LeafSpec) -> Leaf {
        let key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).expect("a P-256 key");
        let mut params = CertificateParams::default();
        params.distinguished_name = DistinguishedName::new();
        let name = spec.subject.clone().try_into().expect("an IA5 subject");
        params.subject_alt_names = vec![if spec.subject.contains('@') && !spec.subject.contains(':') {
            SanType::Rfc822Name(name)
        } else {
            SanType::URI(name)
        }];
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        if spec.code_signing {
            params.extended_key_usages = vec![ExtendedKeyUsagePurpose::CodeSigning];
        }
        params.not_before = time(spec.not_before);
        params.not_after = time(spec.not_after);
        params.use_authority_key_identifier_extension = true;
        params.custom_extensions = vec![if spec.legacy_issuer {
            CustomExtension::from_oid_content(
                &[1, 3, 6, 1, 4, 1, 57264, 1, 1],
                spec.issuer.as_bytes().to_vec(),
            )
        } else {
            CustomExtension::from_oid_content(&[1, 3, 6, 1, 4, 1, 57264, 1, 8], utf8_string(&spec.issuer))
        }];
        let certificate = params
            .signed_by(&key, &Issuer::from_params(&self.intermediate_params, &self.intermediate_key))
            .expect("a leaf certificate");
        Leaf { key, pem: certificate.pem() }
    }
}

/// A fake Rekor log.
pub struct Rekor {
    key: KeyPair,
}

impl Default for Rekor {
    fn default() -> Self {
        Self::new()
    }
}

impl Rekor {
    /// A new log key.
    pub fn new() -> Self {
        Self { key: KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).expect("a P-256 key") }
    }

    /// Its key, SPKI DER.
    pub fn spki_der(&self) -> Vec<u8> {
        self.key.subject_public_key_info()
    }

    /// Its log ID: the SHA-256 of its key, hex.
    pub fn log_id(&self) -> String {
        Sha256::digest(self.spki_der()).iter().map(|byte| format!("{byte:02x}")).collect()
    }

    /// The bundle of a `hashedrekord` entry of `signature` by the
    /// certificate `certificate_pem` over `payload`, logged at
    /// `integrated_time`, as cosign stores it.
    pub fn bundle(
        &self,
        payload: &[u8],
        signature: &[u8],
        certificate_pem: &str,
        integrated_time: i64,
    ) -> String {
        let entry = json!({
            "apiVersion": "0.0.1",
            "kind": "hashedrekord",
            "spec": {
                "data": {"hash": {"algorithm": "sha256", "value": Sha256::digest(payload).iter().map(|byte| format!("{byte:02x}")).collect::<String>()}},
                "signature": {"content": base64(signature), "publicKey": {"content": base64(certificate_pem.as_bytes())}},
            },
        });
        let body = base64(&serde_json::to_vec(&entry).expect("JSON"));
        let logged = json!({"body": body, "integratedTime": integrated_time, "logIndex": 4242, "logID": self.log_id()});
        let mut canonical = Vec::new();
        let mut serializer =
            serde_json::Serializer::with_formatter(&mut canonical, olpc_cjson::CanonicalFormatter::new());
        serde::Serialize::serialize(&logged, &mut serializer).expect("canonical JSON");
        let timestamp = self.key.sign(&canonical).expect("a signed entry timestamp");
        serde_json::to_string(&json!({"SignedEntryTimestamp": base64(&timestamp), "Payload": logged}))
            .expect("JSON")
    }
}

/// The window the trust root declares its CAs and logs valid for: from
/// five years before [`LOGGED_AT`], open-ended.
pub fn default_window() -> (i64, Option<i64>) {
    (LOGGED_AT - 5 * 365 * 86_400, None)
}

/// A Sigstore `trusted_root.json` naming `fulcio`'s chain, valid for
/// `ca_window` (start, optional end), and `rekor`'s key, valid for
/// `log_window`.
pub fn trusted_root(
    fulcio: &Fulcio,
    rekor: &Rekor,
    ca_window: (i64, Option<i64>),
    log_window: (i64, Option<i64>),
) -> String {
    let valid_for = |(start, end): (i64, Option<i64>)| match end {
        Some(end) => json!({"start": rfc3339(start), "end": rfc3339(end)}),
        None => json!({"start": rfc3339(start)}),
    };
    let log_id = Sha256::digest(rekor.spki_der());
    serde_json::to_string_pretty(&json!({
        "mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
        "tlogs": [{
            "baseUrl": "https://rekor.example",
            "hashAlgorithm": "SHA2_256",
            "publicKey": {"rawBytes": base64(&rekor.spki_der()), "keyDetails": "PKIX_ECDSA_P256_SHA_256", "validFor": valid_for(log_window)},
            "logId": {"keyId": base64(&log_id)},
        }],
        "certificateAuthorities": [{
            "subject": {"organization": "sigstore.dev", "commonName": "sigstore"},
            "uri": "https://fulcio.example",
            "certChain": {"certificates": [{"rawBytes": base64(&fulcio.intermediate_der())}, {"rawBytes": base64(&fulcio.root_der())}]},
            "validFor": valid_for(ca_window),
        }],
        "ctlogs": [],
        "timestampAuthorities": [],
    }))
    .expect("JSON")
}

/// A keyless signature as cosign stores it in a signature layer.
#[derive(Clone, Debug)]
pub struct Keyless {
    /// The payload bytes.
    pub payload: Vec<u8>,
    /// The signature, base64 (`dev.cosignproject.cosign/signature`).
    pub signature: String,
    /// The leaf, PEM (`dev.sigstore.cosign/certificate`).
    pub certificate: String,
    /// The chain, PEM (`dev.sigstore.cosign/chain`).
    pub chain: String,
    /// The bundle, JSON (`dev.sigstore.cosign/bundle`), when there is one.
    pub bundle: Option<String>,
}

impl Keyless {
    /// Sign `payload` as `cosign sign` does without a key: a leaf for
    /// `spec` from `fulcio`, the signature with its key, logged in `rekor`
    /// at `integrated_time`.
    pub fn sign(
        fulcio: &Fulcio,
        rekor: &Rekor,
        spec: &LeafSpec,
        payload: &[u8],
        integrated_time: i64,
    ) -> Self {
        let leaf = fulcio.issue(spec);
        let signature = leaf.sign(payload);
        let bundle = rekor.bundle(payload, &signature, &leaf.pem, integrated_time);
        Self {
            payload: payload.to_vec(),
            signature: base64(&signature),
            certificate: leaf.pem,
            chain: fulcio.chain_pem(),
            bundle: Some(bundle),
        }
    }

    /// The layer annotations cosign writes for it.
    pub fn annotations(&self) -> std::collections::BTreeMap<String, String> {
        let mut annotations = std::collections::BTreeMap::from([
            ("dev.cosignproject.cosign/signature".to_owned(), self.signature.clone()),
            ("dev.sigstore.cosign/certificate".to_owned(), self.certificate.clone()),
            ("dev.sigstore.cosign/chain".to_owned(), self.chain.clone()),
        ]);
        if let Some(bundle) = &self.bundle {
            annotations.insert("dev.sigstore.cosign/bundle".to_owned(), bundle.clone());
        }
        annotations
    }
}
