//! The broker's certificate authority: made when the broker starts, its key in this process's
//! memory only (never written anywhere), its certificate given to the panes whose secrets are
//! brokered. It signs one certificate per broker host, on first need, kept for the broker's
//! life.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::ServerConfig;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum AuthorityError {
    #[error("cannot make the broker's certificates: {0}")]
    Certificate(#[from] rcgen::Error),
    #[error("cannot set up TLS for the broker: {0}")]
    Tls(#[from] rustls::Error),
}

/// How long the authority and its certificates are valid, from an hour before it was made
/// (clocks inside and outside a lock are the same clock, but a client may check loosely).
const VALID_FOR: Duration = Duration::from_secs(398 * 24 * 3600);

pub struct Authority {
    issuer: Issuer<'static, KeyPair>,
    certificate: CertificateDer<'static>,
    pem: String,
    not_before: time::OffsetDateTime,
    not_after: time::OffsetDateTime,
    /// The TLS setup for each broker host, made on first need.
    hosts: Mutex<HashMap<String, Arc<ServerConfig>>>,
}

impl Authority {
    /// A new authority, with a new key (P-256).
    pub fn generate() -> Result<Authority, AuthorityError> {
        let now = time::OffsetDateTime::now_utc();
        let not_before = now - time::Duration::hours(1);
        let not_after = now + VALID_FOR;
        let mut params = CertificateParams::default();
        let mut name = DistinguishedName::new();
        name.push(
            DnType::CommonName,
            format!("paddock secret broker (pid {})", std::process::id()),
        );
        name.push(DnType::OrganizationName, "paddock");
        params.distinguished_name = name;
        params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        params.not_before = not_before;
        params.not_after = not_after;
        let key = KeyPair::generate()?;
        let certificate = params.self_signed(&key)?;
        Ok(Authority {
            pem: certificate.pem(),
            certificate: certificate.der().clone(),
            issuer: Issuer::new(params, key),
            not_before,
            not_after,
            hosts: Mutex::new(HashMap::new()),
        })
    }

    /// The authority's certificate, PEM-encoded.
    pub fn certificate_pem(&self) -> &str {
        &self.pem
    }

    pub fn certificate_der(&self) -> &CertificateDer<'static> {
        &self.certificate
    }

    /// The TLS setup that answers as `host` (a name or an address), offering HTTP/2 and
    /// HTTP/1.1.
    pub fn server_config(&self, host: &str) -> Result<Arc<ServerConfig>, AuthorityError> {
        let mut hosts = self.hosts.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(config) = hosts.get(host) {
            return Ok(config.clone());
        }
        let mut params = CertificateParams::new(vec![host.to_owned()])?;
        params.distinguished_name.push(DnType::CommonName, host);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.not_before = self.not_before;
        params.not_after = self.not_after;
        params.use_authority_key_identifier_extension = true;
        let key = KeyPair::generate()?;
        let certificate = params.signed_by(&key, &self.issuer)?;
        let private = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_single_cert(vec![certificate.der().clone(), self.certificate.clone()], private)?;
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        let config = Arc::new(config);
        hosts.insert(host.to_owned(), config.clone());
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client that trusts only the authority accepts the certificate it made for a host,
    /// and refuses it for any other name.
    #[test]
    fn a_host_certificate_verifies_against_the_authority_for_that_name_only() {
        let authority = Authority::generate().expect("authority");
        assert!(authority.certificate_pem().starts_with("-----BEGIN CERTIFICATE-----"));
        let config = authority.server_config("api.example.com").expect("config");
        assert!(Arc::ptr_eq(&config, &authority.server_config("api.example.com").expect("again")));
        let mut roots = rustls::RootCertStore::empty();
        roots.add(authority.certificate_der().clone()).expect("root");
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let client = Arc::new(
            rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .expect("versions")
                .with_root_certificates(roots)
                .with_no_client_auth(),
        );
        let handshake = |name: &str| -> Result<(), rustls::Error> {
            let server_name = rustls::pki_types::ServerName::try_from(name.to_owned()).unwrap();
            let mut client = rustls::ClientConnection::new(client.clone(), server_name)?;
            let mut server = rustls::ServerConnection::new(config.clone())?;
            for _ in 0..10 {
                let mut wire = Vec::new();
                client.write_tls(&mut wire).expect("client writes");
                server.read_tls(&mut wire.as_slice()).expect("server reads");
                server.process_new_packets()?;
                let mut wire = Vec::new();
                server.write_tls(&mut wire).expect("server writes");
                client.read_tls(&mut wire.as_slice()).expect("client reads");
                client.process_new_packets()?;
                if !client.is_handshaking() && !server.is_handshaking() {
                    return Ok(());
                }
            }
            panic!("the handshake did not end");
        };
        handshake("api.example.com").expect("the authority's certificate for this host");
        let error = handshake("evil.example.com").expect_err("another name");
        assert!(error.to_string().contains("certificate"), "{error}");
    }
}
