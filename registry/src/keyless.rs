//! Keyless (Fulcio) cosign signatures, verified offline against a
//! [`TrustedRoot`].
//!
//! `cosign sign` without a key signs with an ephemeral key whose Fulcio
//! certificate names the signer's OIDC identity, logs the signature in
//! Rekor, and stores beside the usual signature annotation the leaf
//! certificate ([`CERTIFICATE_ANNOTATION`], PEM), its chain
//! ([`CHAIN_ANNOTATION`], intermediates and root, PEM) and the Rekor
//! bundle ([`crate::rekor::BUNDLE_ANNOTATION`]). Such a signature counts
//! only when all of this holds, checked in this order:
//!
//! 1. it has a bundle, and its signed entry timestamp verifies with a log
//!    key of the trusted root, the log named by the bundle's `logID`, at an
//!    integrated time inside that key's `validFor` ([`crate::rekor`]);
//! 2. the leaf chains (`rustls-webpki`, intermediates from the chain
//!    annotation and from the trusted root) to the root certificate of a
//!    Fulcio CA of the trusted root, every certificate of the path valid
//!    **at the integrated time** (Fulcio certificates live ten minutes: the
//!    log's timestamp is what proves the signature was made while the
//!    certificate was valid), and that CA's `validFor` holds that time;
//! 3. the leaf's extended key usage includes code signing
//!    (1.3.6.1.5.5.7.3.3; a CA certificate's EKU, when it has one, must
//!    allow it too);
//! 4. the logged entry is a `hashedrekord` of exactly this signature, by
//!    exactly this certificate, over the SHA-256 of exactly this payload;
//! 5. the signature verifies over the payload with the leaf's key (ECDSA
//!    P-256 with SHA-256, or P-384 with SHA-384);
//! 6. the leaf's identity (subject and OIDC issuer, [`crate::identity`])
//!    is one the trust rule accepts.
//!
//! Not checked: the certificate's embedded certificate-transparency
//! timestamp (SCT; `cosign verify` checks it against the trust root's
//! `ctlogs`), and signatures with a timestamp authority instead of a
//! Rekor bundle (refused: no bundle).
//!
//! The payload's digest is then checked by the caller, as for a key
//! signature. Steps 1 to 5 depend only on the bytes and the trust root, so
//! a process remembers their verdict by the SHA-256 of the trust root's
//! bytes, the certificate, chain, bundle, payload and signature (at most
//! [`REMEMBERED`]); step 6 and the digest are checked every time. Any
//! changed byte, of the signature or of the trust root, is checked afresh.

use crate::identity::{self, CertificateIdentity, Identity};
use crate::rekor::{Bundle, BundleRefusal};
use crate::trusted_root::TrustedRoot;
use rustls_pki_types::{CertificateDer, UnixTime};

/// The layer annotation holding the leaf certificate (PEM).
pub const CERTIFICATE_ANNOTATION: &str = "dev.sigstore.cosign/certificate";
/// The layer annotation holding the certificate chain (PEM, intermediates
/// then root).
pub const CHAIN_ANNOTATION: &str = "dev.sigstore.cosign/chain";
/// Largest certificate, chain or bundle annotation read.
pub const MAX_ANNOTATION_BYTES: usize = 64 * 1024;
/// The most verified keyless signatures a process remembers.
pub const REMEMBERED: usize = 1024;

/// Code signing, 1.3.6.1.5.5.7.3.3, as DER OID content.
const CODE_SIGNING: &[u8] = &[0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03, 0x03];

/// Why a keyless signature does not count.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum KeylessRefusal {
    /// No trust root is configured.
    #[error("it is a keyless signature and no trusted root is configured (plugins.trust.trusted_root)")]
    NoTrustedRoot,
    /// The bundle is missing.
    #[error(
        "it is a keyless signature without its Rekor bundle (dev.sigstore.cosign/bundle), never accepted offline"
    )]
    NoBundle,
    /// The bundle does not vouch for it.
    #[error("{0}")]
    Bundle(BundleRefusal),
    /// The certificate or chain does not parse.
    #[error("its Fulcio certificate is malformed: {0}")]
    BadCertificate(String),
    /// The chain ends nowhere trusted.
    #[error("its certificate does not chain to a Fulcio CA of the trusted root: {0}")]
    UntrustedCa(String),
    /// A certificate of the chain was not valid when logged.
    #[error("its certificate chain was not valid at the Rekor integrated time {integrated_time}: {reason}")]
    NotValidThen {
        /// The Rekor integrated time.
        integrated_time: i64,
        /// webpki's word.
        reason: String,
    },
    /// It chains to a CA whose `validFor` excludes the integrated time.
    #[error(
        "its certificate chains to a Fulcio CA of the trusted root that was not valid at the Rekor integrated time {integrated_time}"
    )]
    CaNotValidThen {
        /// The Rekor integrated time.
        integrated_time: i64,
    },
    /// The leaf is not for code signing.
    #[error("its certificate is not for code signing (extended key usage 1.3.6.1.5.5.7.3.3)")]
    NotCodeSigning,
    /// The signature does not verify with the certificate's key.
    #[error("its signature does not verify with its certificate's key")]
    BadSignature,
    /// The certificate names no usable identity.
    #[error("its certificate names no usable identity: {0}")]
    NoIdentity(String),
    /// The identity is not trusted here.
    #[error("it is signed by {identity}, not an identity trusted for it")]
    UntrustedIdentity {
        /// Who the certificate names.
        identity: CertificateIdentity,
    },
}

/// One keyless signature's parts, as read from the layer annotations.
pub struct KeylessSignature<'a> {
    /// The payload bytes.
    pub payload: &'a [u8],
    /// The raw signature.
    pub signature: &'a [u8],
    /// The leaf certificate, PEM.
    pub certificate: &'a str,
    /// The chain, PEM (may be empty).
    pub chain: &'a str,
    /// The bundle, JSON.
    pub bundle: Option<&'a str>,
}

fn remembered() -> &'static std::sync::Mutex<std::collections::HashMap<[u8; 32], CertificateIdentity>> {
    static VERIFIED: std::sync::OnceLock<
        std::sync::Mutex<std::collections::HashMap<[u8; 32], CertificateIdentity>>,
    > = std::sync::OnceLock::new();
    VERIFIED.get_or_init(Default::default)
}

fn fingerprint(root: &TrustedRoot, signature: &KeylessSignature<'_>) -> [u8; 32] {
    use sha2::Digest as _;
    let mut hasher = sha2::Sha256::new();
    let bundle = signature.bundle.unwrap_or_default();
    for part in [
        root.fingerprint.as_bytes(),
        signature.certificate.as_bytes(),
        signature.chain.as_bytes(),
        bundle.as_bytes(),
        signature.payload,
        signature.signature,
    ] {
        hasher.update((part.len() as u64).to_be_bytes());
        hasher.update(part);
    }
    hasher.finalize().into()
}

/// The identity of a keyless signature `trusted` accepts, or why not.
pub fn verify(
    signature: &KeylessSignature<'_>,
    root: Option<&TrustedRoot>,
    trusted: &[Identity],
) -> Result<CertificateIdentity, KeylessRefusal> {
    let root = root.ok_or(KeylessRefusal::NoTrustedRoot)?;
    let key = fingerprint(root, signature);
    let known = remembered().lock().ok().and_then(|seen| seen.get(&key).cloned());
    let identity = match known {
        Some(identity) => identity,
        None => {
            let identity = verify_bytes(signature, root)?;
            if let Ok(mut seen) = remembered().lock() {
                if seen.len() >= REMEMBERED {
                    seen.clear();
                }
                seen.insert(key, identity.clone());
            }
            identity
        }
    };
    if trusted.iter().any(|accepted| accepted.accepts(&identity)) {
        Ok(identity)
    } else {
        Err(KeylessRefusal::UntrustedIdentity { identity })
    }
}

fn pem_certificates(text: &str) -> Result<Vec<Vec<u8>>, KeylessRefusal> {
    let mut out = Vec::new();
    for pem in x509_parser::pem::Pem::iter_from_buffer(text.as_bytes()) {
        let pem = pem.map_err(|error| KeylessRefusal::BadCertificate(format!("bad PEM: {error}")))?;
        if pem.label != "CERTIFICATE" {
            return Err(KeylessRefusal::BadCertificate(format!("a PEM `{}`, not a CERTIFICATE", pem.label)));
        }
        out.push(pem.contents);
    }
    Ok(out)
}

/// Steps 1 to 5: the identity the certificate names, when everything
/// but the identity rule holds.
fn verify_bytes(
    signature: &KeylessSignature<'_>,
    root: &TrustedRoot,
) -> Result<CertificateIdentity, KeylessRefusal> {
    if [signature.certificate, signature.chain, signature.bundle.unwrap_or_default()]
        .iter()
        .any(|part| part.len() > MAX_ANNOTATION_BYTES)
    {
        return Err(KeylessRefusal::BadCertificate(format!(
            "an annotation larger than {MAX_ANNOTATION_BYTES} bytes"
        )));
    }
    let [leaf] = <[Vec<u8>; 1]>::try_from(pem_certificates(signature.certificate)?).map_err(|found| {
        KeylessRefusal::BadCertificate(format!("{} certificates where one leaf was expected", found.len()))
    })?;
    let chain = pem_certificates(signature.chain)?;
    let (_, parsed) = x509_parser::parse_x509_certificate(&leaf)
        .map_err(|error| KeylessRefusal::BadCertificate(error.to_string()))?;

    // 1. The log vouches for a time.
    let bundle =
        Bundle::parse(signature.bundle.ok_or(KeylessRefusal::NoBundle)?).map_err(KeylessRefusal::Bundle)?;
    let integrated_time = bundle.verify_timestamp(root).map_err(KeylessRefusal::Bundle)?;

    // 2. The leaf chains to a trusted CA, valid then.
    check_chain(&leaf, &chain, root, integrated_time)?;

    // 3. For code signing.
    let code_signing = parsed
        .extended_key_usage()
        .map_err(|error| KeylessRefusal::BadCertificate(error.to_string()))?
        .is_some_and(|usage| usage.value.code_signing);
    if !code_signing {
        return Err(KeylessRefusal::NotCodeSigning);
    }

    // 4. The logged entry is this signature.
    bundle.verify_entry(signature.payload, signature.signature, &leaf).map_err(KeylessRefusal::Bundle)?;

    // 5. The signature, with the leaf's key.
    let der = CertificateDer::from(leaf.as_slice());
    let end_entity = webpki::EndEntityCert::try_from(&der)
        .map_err(|error| KeylessRefusal::BadCertificate(error.to_string()))?;
    let verified =
        [webpki::ring::ECDSA_P256_SHA256, webpki::ring::ECDSA_P384_SHA384].iter().any(|algorithm| {
            end_entity.verify_signature(*algorithm, signature.payload, signature.signature).is_ok()
        });
    if !verified {
        return Err(KeylessRefusal::BadSignature);
    }

    // 6 is the caller's: the identity the certificate names.
    identity::of_certificate(&parsed).map_err(KeylessRefusal::NoIdentity)
}

fn check_chain(
    leaf: &[u8],
    chain: &[Vec<u8>],
    root: &TrustedRoot,
    integrated_time: i64,
) -> Result<(), KeylessRefusal> {
    let leaf = CertificateDer::from(leaf);
    let end_entity = webpki::EndEntityCert::try_from(&leaf)
        .map_err(|error| KeylessRefusal::BadCertificate(error.to_string()))?;
    let seconds = u64::try_from(integrated_time)
        .map_err(|_| KeylessRefusal::NotValidThen { integrated_time, reason: "a time before 1970".into() })?;
    let time = UnixTime::since_unix_epoch(std::time::Duration::from_secs(seconds));
    let mut not_valid_then = None;
    let mut untrusted = Vec::new();
    for authority in &root.authorities {
        let anchor_der = CertificateDer::from(authority.root());
        let Ok(anchor) = webpki::anchor_from_trusted_cert(&anchor_der) else {
            continue;
        };
        let intermediates: Vec<CertificateDer<'_>> = authority
            .intermediates()
            .iter()
            .chain(chain)
            .map(|der| CertificateDer::from(der.as_slice()))
            .collect();
        let anchors = [anchor];
        let path = end_entity.verify_for_usage(
            webpki::ALL_VERIFICATION_ALGS,
            &anchors,
            &intermediates,
            time,
            webpki::KeyUsage::required_if_present(CODE_SIGNING),
            None,
            None,
        );
        match path {
            Ok(_) if authority.valid.contains(integrated_time) => return Ok(()),
            Ok(_) => {
                not_valid_then.get_or_insert(KeylessRefusal::CaNotValidThen { integrated_time });
            }
            Err(error @ (webpki::Error::CertExpired { .. } | webpki::Error::CertNotValidYet { .. })) => {
                not_valid_then.get_or_insert(KeylessRefusal::NotValidThen {
                    integrated_time,
                    reason: error.to_string(),
                });
            }
            Err(error) => untrusted.push(error.to_string()),
        }
    }
    Err(not_valid_then.unwrap_or_else(|| {
        untrusted.dedup();
        KeylessRefusal::UntrustedCa(if untrusted.is_empty() { "no CA".into() } else { untrusted.join("; ") })
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cosign::{self, Refusal, StoredSignature, Trusted};
    use crate::digest::Digest;
    use crate::rekor::BundleRefusal;
    use harmonia_testkit::sigstore::{
        self, Fulcio, GITHUB_ISSUER, Keyless, LOGGED_AT, LeafSpec, Rekor, WORKFLOW, default_window,
    };

    /// A trusted Fulcio and Rekor, and the trust root naming them.
    struct World {
        fulcio: Fulcio,
        rekor: Rekor,
        root: TrustedRoot,
    }

    fn world() -> World {
        let (fulcio, rekor) = (Fulcio::new(), Rekor::new());
        let json = sigstore::trusted_root(&fulcio, &rekor, default_window(), default_window());
        let root = TrustedRoot::from_json(json.as_bytes()).unwrap();
        World { fulcio, rekor, root }
    }

    fn digest() -> Digest {
        Digest::of(b"a keyless manifest")
    }

    fn payload(digest: &Digest) -> Vec<u8> {
        cosign::payload("127.0.0.1:5000/tools/t", digest)
    }

    fn stored(keyless: &Keyless) -> StoredSignature {
        StoredSignature {
            certificate: Some(keyless.certificate.clone()),
            chain: Some(keyless.chain.clone()),
            bundle: keyless.bundle.clone(),
            ..StoredSignature::new(&keyless.payload, &keyless.signature)
        }
    }

    fn workflow() -> Vec<Identity> {
        vec![Identity::exact(WORKFLOW, GITHUB_ISSUER)]
    }

    fn check(root: &TrustedRoot, keyless: &Keyless, identities: &[Identity]) -> Result<String, Refusal> {
        let trusted = Trusted { keys: &[], identities, root: Some(root) };
        cosign::verify_trusted(&[stored(keyless)], &digest(), &trusted)
    }

    fn signed(world: &World, spec: &LeafSpec) -> Keyless {
        Keyless::sign(&world.fulcio, &world.rekor, spec, &payload(&digest()), LOGGED_AT)
    }

    fn keyless_refusal(result: Result<String, Refusal>) -> KeylessRefusal {
        match result {
            Err(Refusal::Keyless(reason)) => reason,
            other => panic!("expected a keyless refusal, got {other:?}"),
        }
    }

    #[test]
    fn a_keyless_signature_by_a_trusted_identity_names_it_as_the_signer() {
        let world = world();
        let keyless = signed(&world, &LeafSpec::workflow());
        assert_eq!(
            check(&world.root, &keyless, &workflow()),
            Ok(format!("identity:{GITHUB_ISSUER}#{WORKFLOW}"))
        );
    }

    #[test]
    fn the_issuer_is_read_from_either_fulcio_extension_and_the_subject_may_be_an_email() {
        let world = world();
        let spec = LeafSpec {
            legacy_issuer: true,
            ..LeafSpec::of("ci@acme.example", "https://accounts.google.com")
        };
        let keyless = signed(&world, &spec);
        let trusted = [Identity::exact("ci@acme.example", "https://accounts.google.com")];
        assert_eq!(
            check(&world.root, &keyless, &trusted),
            Ok("identity:https://accounts.google.com#ci@acme.example".into())
        );
    }

    /// Hostile: a leaf issued by another CA (named exactly as the trusted
    /// one) and logged in the trusted log. Held by the webpki chain check.
    #[test]
    fn a_leaf_from_a_ca_not_in_the_trusted_root_is_refused() {
        let world = world();
        let stranger = Fulcio::new();
        let keyless =
            Keyless::sign(&stranger, &world.rekor, &LeafSpec::workflow(), &payload(&digest()), LOGGED_AT);
        assert!(matches!(
            keyless_refusal(check(&world.root, &keyless, &workflow())),
            KeylessRefusal::UntrustedCa(_)
        ));
    }

    /// Hostile: the leaf's intermediate claims the trusted root in the
    /// chain annotation but was signed by another root.
    #[test]
    fn a_chain_through_an_intermediate_not_chaining_to_the_root_is_refused() {
        let world = world();
        let rogue = Fulcio::rogue_intermediate_of(&world.fulcio);
        let keyless =
            Keyless::sign(&rogue, &world.rekor, &LeafSpec::workflow(), &payload(&digest()), LOGGED_AT);
        assert!(matches!(
            keyless_refusal(check(&world.root, &keyless, &workflow())),
            KeylessRefusal::UntrustedCa(_)
        ));
    }

    /// Hostile: a valid signature by someone else, or by the right subject
    /// from another issuer; the refusal shows who signed.
    #[test]
    fn an_identity_that_does_not_match_is_refused_showing_the_certificates() {
        let world = world();
        for spec in [
            LeafSpec::of(
                "https://github.com/evil/tools/.github/workflows/release.yml@refs/heads/main",
                GITHUB_ISSUER,
            ),
            LeafSpec::of(WORKFLOW, "https://token.actions.githubusercontent.com.evil.example"),
        ] {
            let keyless = signed(&world, &spec);
            let refusal = keyless_refusal(check(&world.root, &keyless, &workflow()));
            assert_eq!(
                refusal,
                KeylessRefusal::UntrustedIdentity {
                    identity: identity::CertificateIdentity {
                        subject: spec.subject.clone(),
                        issuer: spec.issuer.clone()
                    }
                }
            );
            assert!(
                refusal.to_string().contains(&spec.subject) && refusal.to_string().contains(&spec.issuer)
            );
        }
    }

    /// Hostile: the log recorded the signature after the leaf expired, or
    /// before it was valid. Held by webpki checking the path at the
    /// integrated time.
    #[test]
    fn a_leaf_not_valid_at_the_integrated_time_is_refused() {
        let world = world();
        for (not_before, not_after) in
            [(LOGGED_AT - 1200, LOGGED_AT - 600), (LOGGED_AT + 60, LOGGED_AT + 660)]
        {
            let spec = LeafSpec { not_before, not_after, ..LeafSpec::workflow() };
            let keyless = signed(&world, &spec);
            assert!(matches!(
                keyless_refusal(check(&world.root, &keyless, &workflow())),
                KeylessRefusal::NotValidThen { integrated_time: LOGGED_AT, .. }
            ));
        }
    }

    /// Hostile: the trust root says the CA, or the log's key, was not
    /// valid when the entry was logged.
    #[test]
    fn a_ca_or_log_outside_its_validity_in_the_trusted_root_is_refused() {
        let world = world();
        let keyless = signed(&world, &LeafSpec::workflow());
        let ended = (LOGGED_AT - 86_400, Some(LOGGED_AT - 1));
        let ca_ended = sigstore::trusted_root(&world.fulcio, &world.rekor, ended, default_window());
        let ca_ended = TrustedRoot::from_json(ca_ended.as_bytes()).unwrap();
        assert_eq!(
            keyless_refusal(check(&ca_ended, &keyless, &workflow())),
            KeylessRefusal::CaNotValidThen { integrated_time: LOGGED_AT }
        );
        let log_ended = sigstore::trusted_root(&world.fulcio, &world.rekor, default_window(), ended);
        let log_ended = TrustedRoot::from_json(log_ended.as_bytes()).unwrap();
        assert!(matches!(
            keyless_refusal(check(&log_ended, &keyless, &workflow())),
            KeylessRefusal::Bundle(BundleRefusal::LogNotValidThen { integrated_time: LOGGED_AT, .. })
        ));
    }

    /// Hostile: a bundle signed by a log the trust root does not name, and
    /// one whose time was changed after the log signed it.
    #[test]
    fn a_signed_entry_timestamp_by_an_unknown_log_or_altered_is_refused() {
        let world = world();
        let keyless = Keyless::sign(
            &world.fulcio,
            &Rekor::new(),
            &LeafSpec::workflow(),
            &payload(&digest()),
            LOGGED_AT,
        );
        assert!(matches!(
            keyless_refusal(check(&world.root, &keyless, &workflow())),
            KeylessRefusal::Bundle(BundleRefusal::UnknownLog { .. })
        ));
        let mut altered = signed(&world, &LeafSpec::workflow());
        let bundle = altered.bundle.take().unwrap();
        altered.bundle = Some(bundle.replace(
            &format!("\"integratedTime\":{LOGGED_AT}"),
            &format!("\"integratedTime\":{}", LOGGED_AT + 1),
        ));
        assert_ne!(altered.bundle.as_deref(), Some(bundle.as_str()));
        assert!(matches!(
            keyless_refusal(check(&world.root, &altered, &workflow())),
            KeylessRefusal::Bundle(BundleRefusal::BadTimestamp { .. })
        ));
    }

    /// Hostile: a genuine bundle, logged for another signature, moved onto
    /// this one. Held by the entry binding (signature, certificate, hash).
    #[test]
    fn a_valid_bundle_replayed_onto_another_signature_is_refused() {
        let world = world();
        let logged = signed(&world, &LeafSpec::workflow());
        let mut replayed = signed(&world, &LeafSpec::workflow());
        replayed.bundle = logged.bundle.clone();
        assert!(matches!(
            keyless_refusal(check(&world.root, &replayed, &workflow())),
            KeylessRefusal::Bundle(BundleRefusal::OtherSignature(_))
        ));
        // The same signature and certificate, logged over another payload's hash.
        let leaf = world.fulcio.issue(&LeafSpec::workflow());
        let payload = payload(&digest());
        let signature = leaf.sign(&payload);
        let other = world.rekor.bundle(b"another payload", &signature, &leaf.pem, LOGGED_AT);
        let keyless = Keyless {
            payload,
            signature: base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &signature),
            certificate: leaf.pem,
            chain: world.fulcio.chain_pem(),
            bundle: Some(other),
        };
        assert!(matches!(
            keyless_refusal(check(&world.root, &keyless, &workflow())),
            KeylessRefusal::Bundle(BundleRefusal::OtherSignature(reason)) if reason.contains("payload hash")
        ));
    }

    /// Hostile: a keyless signature with no transparency-log proof.
    #[test]
    fn a_keyless_signature_without_a_bundle_is_refused() {
        let world = world();
        let mut keyless = signed(&world, &LeafSpec::workflow());
        keyless.bundle = None;
        assert_eq!(keyless_refusal(check(&world.root, &keyless, &workflow())), KeylessRefusal::NoBundle);
    }

    /// Hostile: a signature the leaf's key did not make, logged as if it had.
    #[test]
    fn a_signature_not_made_with_the_leafs_key_is_refused() {
        let world = world();
        let leaf = world.fulcio.issue(&LeafSpec::workflow());
        let payload = payload(&digest());
        let stranger = world.fulcio.issue(&LeafSpec::workflow());
        let signature = stranger.sign(&payload);
        let bundle = world.rekor.bundle(&payload, &signature, &leaf.pem, LOGGED_AT);
        let keyless = Keyless {
            payload,
            signature: base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &signature),
            certificate: leaf.pem,
            chain: world.fulcio.chain_pem(),
            bundle: Some(bundle),
        };
        assert_eq!(keyless_refusal(check(&world.root, &keyless, &workflow())), KeylessRefusal::BadSignature);
    }

    /// Hostile: a certificate not issued for code signing.
    #[test]
    fn a_leaf_without_the_code_signing_usage_is_refused() {
        let world = world();
        let keyless = signed(&world, &LeafSpec { code_signing: false, ..LeafSpec::workflow() });
        assert_eq!(
            keyless_refusal(check(&world.root, &keyless, &workflow())),
            KeylessRefusal::NotCodeSigning
        );
    }

    /// Hostile: a trusted identity's valid keyless signature over another
    /// manifest.
    #[test]
    fn a_keyless_signature_over_another_digest_is_refused() {
        let world = world();
        let other = Digest::of(b"another manifest");
        let keyless =
            Keyless::sign(&world.fulcio, &world.rekor, &LeafSpec::workflow(), &payload(&other), LOGGED_AT);
        assert_eq!(
            check(&world.root, &keyless, &workflow()),
            Err(Refusal::OtherDigest {
                signer: format!("identity:{GITHUB_ISSUER}#{WORKFLOW}"),
                signed: other.to_string(),
                expected: digest().to_string(),
            })
        );
    }

    /// Hostile: once a keyless signature verified (and is remembered), a
    /// changed byte of it, another trust root, or another rule's
    /// identities are checked afresh.
    #[test]
    fn a_remembered_keyless_signature_vouches_for_nothing_else() {
        let world = world();
        let keyless = signed(&world, &LeafSpec::workflow());
        for _ in 0..2 {
            assert!(check(&world.root, &keyless, &workflow()).is_ok());
        }
        let other = TrustedRoot::from_json(
            sigstore::trusted_root(&Fulcio::new(), &world.rekor, default_window(), default_window())
                .as_bytes(),
        )
        .unwrap();
        assert!(matches!(
            keyless_refusal(check(&other, &keyless, &workflow())),
            KeylessRefusal::UntrustedCa(_)
        ));
        let mut without_bundle = keyless.clone();
        without_bundle.bundle = None;
        assert_eq!(
            keyless_refusal(check(&world.root, &without_bundle, &workflow())),
            KeylessRefusal::NoBundle
        );
        let someone = [Identity::exact("someone@example.org", GITHUB_ISSUER)];
        assert!(matches!(
            keyless_refusal(check(&world.root, &keyless, &someone)),
            KeylessRefusal::UntrustedIdentity { .. }
        ));
    }

    /// A key signature and a keyless one side by side: a rule trusting
    /// only keys ignores the certificate, one trusting only identities
    /// ignores keys, and either kind counts where it is trusted.
    #[test]
    fn a_component_is_trusted_by_a_key_or_an_identity() {
        use crate::keys::{Algorithm, PrivateKey};
        let world = world();
        let keyless = stored(&signed(&world, &LeafSpec::workflow()));
        let key = PrivateKey::generate(Algorithm::EcdsaP256).unwrap();
        let payload = payload(&digest());
        let keyed = StoredSignature::new(
            &payload,
            &base64::Engine::encode(&base64::engine::general_purpose::STANDARD, key.sign(&payload)),
        );
        let keys = [key.public().clone()];
        let identities = workflow();
        let only_keys = Trusted { keys: &keys, identities: &[], root: Some(&world.root) };
        let only_identities = Trusted { keys: &[], identities: &identities, root: Some(&world.root) };
        assert_eq!(
            cosign::verify_trusted(std::slice::from_ref(&keyless), &digest(), &only_keys),
            Err(Refusal::UntrustedKey { count: 1 })
        );
        assert_eq!(
            cosign::verify_trusted(&[keyless.clone(), keyed.clone()], &digest(), &only_keys).as_deref(),
            Ok(key.public().fingerprint())
        );
        assert_eq!(
            cosign::verify_trusted(&[keyed.clone(), keyless.clone()], &digest(), &only_identities),
            Ok(format!("identity:{GITHUB_ISSUER}#{WORKFLOW}"))
        );
        assert_eq!(
            cosign::verify_trusted(&[keyed], &digest(), &only_identities),
            Err(Refusal::UntrustedKey { count: 1 })
        );
    }
}
