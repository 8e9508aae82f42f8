//! Which layers of a cosign signature manifest (`sha256-<hex>.sig`) a pull
//! reads, so that nobody who can attach a signature can block a pull.
//!
//! Anyone allowed to push to a repository can add layers to its signature
//! manifests, and nothing in a layer is trusted before its signature
//! verified. So a layer is read leniently, one at a time: one that is not a
//! descriptor, names no sha256 digest, carries no signature annotation or
//! declares a payload past [`MAX_PAYLOAD_BYTES`] is skipped with its
//! reason (the pull warns, naming the layer), never failing the pull; the
//! other layers are still examined, and the component is accepted when any
//! of their signatures verifies with a trusted key or identity. Layers of
//! other media types are not signatures and are passed over silently.
//!
//! The work is bounded: at most [`MAX_SIGNATURE_LAYERS`] signature layers
//! are examined, in the manifest's order (the rest are counted, not read),
//! each payload is at most [`MAX_PAYLOAD_BYTES`], so a pull reads at most
//! 64 × 64 KiB = 4 MiB of signature payloads, from a manifest itself at
//! most [`crate::manifest::MAX_MANIFEST_BYTES`]; and at most
//! [`MAX_REPORTED`] skipped layers are named one by one.
//!
//! What this cannot do: someone who can rewrite the signature manifest can
//! also remove the trusted signature from it (or bury it past the bound),
//! which no reader can undo; the bound keeps a flood from costing more
//! than it, and a malformed or untrusted layer from hiding a trusted one
//! within it.

use crate::RegistryError;
use crate::cosign::{MAX_PAYLOAD_BYTES, SIGNATURE_ANNOTATION, SIMPLE_SIGNING_MEDIA_TYPE};
use crate::digest::Digest;
use crate::manifest::Descriptor;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;

/// Most signature layers examined for one digest.
pub const MAX_SIGNATURE_LAYERS: usize = 64;
/// Most skipped layers named one by one (the rest are counted).
pub const MAX_REPORTED: usize = 16;

/// A signature layer worth reading: its payload's digest and declared size,
/// and the annotations holding the signature (and, keyless, the
/// certificate, chain and Rekor bundle).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignatureLayer {
    /// Its position among the manifest's layers, from 1.
    pub position: usize,
    /// The payload's digest.
    pub payload: Digest,
    /// The payload's declared size (at most [`MAX_PAYLOAD_BYTES`]).
    pub size: u64,
    /// Its annotations.
    pub annotations: BTreeMap<String, String>,
}

/// A layer passed over, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// Its position among the manifest's layers, from 1.
    pub position: usize,
    /// Why.
    pub reason: String,
}

impl fmt::Display for Skipped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "layer {}: {}", self.position, self.reason)
    }
}

/// What a signature manifest offers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Examined {
    /// The layers to read, at most [`MAX_SIGNATURE_LAYERS`], in order.
    pub layers: Vec<SignatureLayer>,
    /// The first [`MAX_REPORTED`] layers skipped.
    pub skipped: Vec<Skipped>,
    /// How many more were skipped than `skipped` names.
    pub more_skipped: usize,
    /// Signature layers past [`MAX_SIGNATURE_LAYERS`], not examined.
    pub left_out: usize,
}

impl Examined {
    fn skip(&mut self, position: usize, reason: String) {
        if self.skipped.len() < MAX_REPORTED {
            self.skipped.push(Skipped { position, reason });
        } else {
            self.more_skipped += 1;
        }
    }
}

/// The parts of a signature manifest read here: its layers, each as any
/// JSON, so one malformed layer spoils only itself.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Layers {
    schema_version: u32,
    #[serde(default)]
    layers: Vec<Value>,
}

/// The layers of signature manifest `bytes` worth reading (see the module
/// docs). Bytes that are not an image manifest at all are an error.
pub fn examined(bytes: &[u8]) -> Result<Examined, RegistryError> {
    let manifest: Layers = serde_json::from_slice(bytes).map_err(|error| {
        RegistryError::BadManifest(format!("the signature manifest is not an OCI image manifest: {error}"))
    })?;
    if manifest.schema_version != 2 {
        return Err(RegistryError::BadManifest(format!(
            "the signature manifest has schemaVersion {}",
            manifest.schema_version
        )));
    }
    let mut examined = Examined::default();
    for (index, layer) in manifest.layers.into_iter().enumerate() {
        let position = index + 1;
        match layer.get("mediaType") {
            Some(Value::String(media_type)) if media_type != SIMPLE_SIGNING_MEDIA_TYPE => continue,
            _ => {}
        }
        if examined.layers.len() == MAX_SIGNATURE_LAYERS {
            examined.left_out += 1;
            continue;
        }
        match signature_layer(position, layer) {
            Ok(layer) => examined.layers.push(layer),
            Err(reason) => examined.skip(position, reason),
        }
    }
    Ok(examined)
}

/// One layer read as a signature, or why it is not one.
fn signature_layer(position: usize, layer: Value) -> Result<SignatureLayer, String> {
    let descriptor: Descriptor =
        serde_json::from_value(layer).map_err(|error| format!("not a descriptor: {error}"))?;
    let annotations = descriptor
        .annotations
        .filter(|notes| notes.contains_key(SIGNATURE_ANNOTATION))
        .ok_or_else(|| format!("no `{SIGNATURE_ANNOTATION}` annotation"))?;
    let payload = Digest::parse(&descriptor.digest).map_err(|error| error.to_string())?;
    let size = u64::try_from(descriptor.size)
        .map_err(|_| format!("its payload {payload} declares a negative size {}", descriptor.size))?;
    if size > MAX_PAYLOAD_BYTES {
        return Err(format!(
            "its payload {payload} declares {size} bytes, past the bound of {MAX_PAYLOAD_BYTES} bytes"
        ));
    }
    Ok(SignatureLayer { position, payload, size, annotations })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn layer(digest: &str, size: i64) -> Value {
        json!({"mediaType": SIMPLE_SIGNING_MEDIA_TYPE, "digest": digest, "size": size,
               "annotations": {SIGNATURE_ANNOTATION: "c2ln"}})
    }

    fn manifest(layers: Vec<Value>) -> Vec<u8> {
        serde_json::to_vec(&json!({"schemaVersion": 2, "config": {}, "layers": layers})).unwrap()
    }

    /// Hostile: malformed layers of every kind ahead of a good one. Each
    /// is skipped with its reason and position; the good one is examined.
    #[test]
    fn a_malformed_layer_is_skipped_with_its_reason_and_the_rest_examined() {
        let good = Digest::of(b"payload");
        let found = examined(&manifest(vec![
            json!({"mediaType": 5, "digest": ["x"]}),
            json!("not even an object"),
            layer("sha256:zz", 10),
            layer(good.as_str(), -1),
            layer(good.as_str(), 1 << 40),
            json!({"mediaType": SIMPLE_SIGNING_MEDIA_TYPE, "digest": good.as_str(), "size": 7}),
            json!({"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": "sha256:zz", "size": 1}),
            layer(good.as_str(), 7),
        ]))
        .unwrap();
        assert_eq!(found.layers.len(), 1);
        assert_eq!((found.layers[0].position, &found.layers[0].payload, found.layers[0].size), (8, &good, 7));
        let reasons: Vec<String> = found.skipped.iter().map(ToString::to_string).collect();
        assert_eq!(reasons.len(), 6, "{reasons:?}");
        for (at, expected) in [
            (0, "layer 1: not a descriptor"),
            (1, "layer 2: not a descriptor"),
            (2, "layer 3: `sha256:zz` is not a sha256 digest"),
            (3, "negative size -1"),
            (4, "declares 1099511627776 bytes, past the bound of 65536 bytes"),
            (5, "layer 6: no `dev.cosignproject.cosign/signature` annotation"),
        ] {
            assert!(reasons[at].contains(expected), "{}: {expected}", reasons[at]);
        }
        assert_eq!((found.more_skipped, found.left_out), (0, 0));
    }

    /// Hostile: a flood of layers. At most `MAX_SIGNATURE_LAYERS` are
    /// examined, the rest counted; at most `MAX_REPORTED` skipped layers
    /// are named, the rest counted.
    #[test]
    fn the_work_is_bounded_however_many_layers_a_manifest_holds() {
        let good = Digest::of(b"payload");
        let mut layers = vec![layer("sha256:zz", 1); MAX_REPORTED + 5];
        layers.extend(vec![layer(good.as_str(), 7); MAX_SIGNATURE_LAYERS + 9]);
        let found = examined(&manifest(layers)).unwrap();
        assert_eq!(found.layers.len(), MAX_SIGNATURE_LAYERS);
        assert_eq!(found.left_out, 9);
        assert_eq!((found.skipped.len(), found.more_skipped), (MAX_REPORTED, 5));
    }

    #[test]
    fn bytes_that_are_not_a_manifest_are_a_typed_error() {
        for bytes in [&b"not json"[..], br#"{"schemaVersion": 1, "layers": []}"#, br#"{"layers": 5}"#] {
            assert!(matches!(examined(bytes), Err(RegistryError::BadManifest(_))));
        }
        assert_eq!(examined(br#"{"schemaVersion": 2}"#).unwrap(), Examined::default());
    }
}
