//! TLS for every request: rustls with the aws-lc-rs provider (reqwest's own default, so every
//! reqwest client in the process has a provider) and the operating system's certificate
//! verifier (native TLS is never used). Built once per fetcher and cloned per hop.

use rustls::ClientConfig;
use std::sync::Arc;

/// A client configuration for HTTP/1.1 over TLS 1.2 and 1.3.
///
/// # Errors
/// When the platform verifier cannot be set up (no usable certificate store).
pub fn client_config() -> Result<ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let verifier = rustls_platform_verifier::Verifier::new(Arc::clone(&provider))
        .map_err(|err| format!("TLS certificate verification cannot be set up: {err}"))?;
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|err| format!("TLS cannot be set up: {err}"))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}
