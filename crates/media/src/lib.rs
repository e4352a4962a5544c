//! # kun-media
//!
//! Media generation for kun-rs, on ports only: `generate_image`, `generate_speech`,
//! `generate_music` and `generate_video` ([`tool`]), each over a
//! [`MediaBackend`](kun_ports::MediaBackend) — here the OpenAI-compatible one
//! ([`OpenAiMediaBackend`]: `/images/generations` with `b64_json`, `/audio/speech`, `/videos`
//! create → poll → download) — and storing what it makes in the
//! [`ArtifactStore`](kun_ports::ArtifactStore).
//!
//! Each kind has its own provider ([`MediaProvider`]): unconfigured, it is unavailable with
//! the reason and its tool is not listed.
//!
//! ```
//! use std::sync::Arc;
//! use kun_media::{Endpoint, MediaProvider, OpenAiMediaBackend, http_client};
//! use kun_ports::{MediaKind, ProviderKind, ToolProvider};
//! # struct Mem;
//! # impl kun_ports::ArtifactStore for Mem {
//! #     fn put(&self, _: &str, b: &[u8]) -> Result<kun_ports::ArtifactRef, kun_ports::ArtifactError> {
//! #         Ok(kun_ports::ArtifactRef { id: "a".into(), path: None, byte_size: b.len() as u64 })
//! #     }
//! #     fn get(&self, _: &str) -> Result<Vec<u8>, kun_ports::ArtifactError> { Ok(vec![]) }
//! # }
//! let endpoint = Endpoint::new("http://127.0.0.1:8080/v1", "gpt-image-1");
//! let backend = OpenAiMediaBackend::new(MediaKind::Image, endpoint, http_client().unwrap());
//! let provider = MediaProvider::ready(MediaKind::Image, Arc::new(backend), Arc::new(Mem), "gpt-image-1");
//! assert_eq!(provider.kind(), ProviderKind::Image);
//! assert_eq!(provider.tools()[0].spec().name, "generate_image");
//! ```

pub mod endpoint;
pub mod openai;
pub mod provider;
pub mod tool;

pub use endpoint::{Endpoint, http_client};
pub use openai::OpenAiMediaBackend;
pub use provider::MediaProvider;
pub use tool::{GenerateMedia, MediaOutput};
