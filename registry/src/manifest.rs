//! The parts of an OCI image manifest this crate reads, and the one it
//! writes for a component (the CNCF Wasm OCI artifact layout: config media
//! type [`WASM_CONFIG_MEDIA_TYPE`], one layer of [`WASM_LAYER_MEDIA_TYPE`]).

use crate::RegistryError;
use crate::digest::Digest;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// An OCI image manifest.
pub const OCI_MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// The Wasm artifact config.
pub const WASM_CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v0+json";
/// A WebAssembly component layer.
pub const WASM_LAYER_MEDIA_TYPE: &str = "application/wasm";
/// An OCI image config (cosign's signature manifests use it).
pub const OCI_CONFIG_MEDIA_TYPE: &str = "application/vnd.oci.image.config.v1+json";
/// Largest manifest accepted (the limit the OCI distribution spec
/// recommends registries enforce).
pub const MAX_MANIFEST_BYTES: u64 = 4 * 1024 * 1024;

/// A content descriptor.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Descriptor {
    /// Its media type.
    pub media_type: String,
    /// Its digest.
    pub digest: String,
    /// Its size in bytes.
    pub size: i64,
    /// Other places to fetch it from: never followed here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub urls: Option<Vec<String>>,
    /// Annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
}

impl Descriptor {
    /// A descriptor of `bytes`.
    pub fn of(media_type: &str, bytes: &[u8]) -> Self {
        Self {
            media_type: media_type.to_owned(),
            digest: Digest::of(bytes).to_string(),
            size: bytes.len() as i64,
            urls: None,
            annotations: None,
        }
    }
}

/// An OCI image manifest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// Always 2.
    pub schema_version: u32,
    /// The manifest's media type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// The artifact type, when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_type: Option<String>,
    /// The config blob.
    pub config: Descriptor,
    /// The layers.
    pub layers: Vec<Descriptor>,
}

impl Manifest {
    /// Parse manifest bytes (already bounded and digest-checked).
    pub fn parse(bytes: &[u8]) -> Result<Self, RegistryError> {
        let manifest: Self = serde_json::from_slice(bytes)
            .map_err(|error| RegistryError::BadManifest(format!("not an OCI image manifest: {error}")))?;
        if manifest.schema_version != 2 {
            return Err(RegistryError::BadManifest(format!("schemaVersion {}", manifest.schema_version)));
        }
        Ok(manifest)
    }

    /// The single component layer: its digest and size. Layers with
    /// external `urls` are refused (they would be fetched from another
    /// host).
    pub fn component_layer(&self) -> Result<(Digest, u64), RegistryError> {
        let mut wasm = self.layers.iter().filter(|layer| layer.media_type == WASM_LAYER_MEDIA_TYPE);
        let (Some(layer), None) = (wasm.next(), wasm.next()) else {
            return Err(RegistryError::BadManifest(format!(
                "a plugin manifest has exactly one `{WASM_LAYER_MEDIA_TYPE}` layer"
            )));
        };
        if layer.urls.as_ref().is_some_and(|urls| !urls.is_empty()) {
            return Err(RegistryError::BadManifest("the component layer names external urls".into()));
        }
        let size = u64::try_from(layer.size)
            .map_err(|_| RegistryError::BadManifest(format!("negative layer size {}", layer.size)))?;
        Ok((Digest::parse(&layer.digest)?, size))
    }

    /// The manifest of a component: its config and its one layer.
    pub fn for_component(config: &[u8], component: &[u8]) -> Self {
        Self {
            schema_version: 2,
            media_type: Some(OCI_MANIFEST_MEDIA_TYPE.into()),
            artifact_type: None,
            config: Descriptor::of(WASM_CONFIG_MEDIA_TYPE, config),
            layers: vec![Descriptor::of(WASM_LAYER_MEDIA_TYPE, component)],
        }
    }

    /// Serialized, as pushed (its digest is the digest of these bytes).
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }
}

/// The Wasm artifact config for a component.
pub fn wasm_config(component: &[u8]) -> Vec<u8> {
    let value = serde_json::json!({
        "architecture": "wasm",
        "os": "wasip2",
        "layerDigests": [Digest::of(component).as_str()],
    });
    serde_json::to_vec(&value).unwrap_or_default()
}
