//! Tenants' model keys at rest: sealed with XChaCha20-Poly1305 under the operator's secret key
//! (32 bytes, from the environment or a file, never in the database), with the tenant and the
//! provider as associated data, so a sealed key copied to another tenant's row does not open.
//! A key leaves the store only as a [`ModelKey`], whose `Debug` hides it.

use chacha20poly1305::aead::{Aead as _, KeyInit as _, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};

use crate::error::{Result, StoreError};

/// The providers a tenant may bring a key for: the hosted ones plumb talks to.
pub const MODEL_KEY_PROVIDERS: [&str; 3] = ["openai", "anthropic", "openai-compat"];

/// The longest key taken.
const MAX_KEY_BYTES: usize = 4096;

/// The operator's secret key that seals tenants' model keys.
#[derive(Clone)]
pub struct SecretKey([u8; 32]);

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretKey(…)")
    }
}

impl SecretKey {
    /// 64 hexadecimal digits (`openssl rand -hex 32`); `origin` names where they came from in the
    /// message of a refusal.
    pub fn parse(text: &str, origin: &str) -> Result<SecretKey, String> {
        let text = text.trim();
        let refuse = || {
            format!(
                "{origin} does not hold a secret key: give 64 hexadecimal digits (make one with \
                 `openssl rand -hex 32`)"
            )
        };
        if text.len() != 64 {
            return Err(refuse());
        }
        let mut key = [0_u8; 32];
        for (byte, pair) in key.iter_mut().zip(text.as_bytes().chunks(2)) {
            let pair = std::str::from_utf8(pair).map_err(|_| refuse())?;
            *byte = u8::from_str_radix(pair, 16).map_err(|_| refuse())?;
        }
        Ok(SecretKey(key))
    }

    fn cipher(&self) -> XChaCha20Poly1305 {
        XChaCha20Poly1305::new((&self.0).into())
    }

    /// `key` sealed for `tenant`'s `provider`: the nonce and the ciphertext.
    pub(crate) fn seal(
        &self,
        tenant: &str,
        provider: &str,
        key: &str,
    ) -> Result<(Vec<u8>, Vec<u8>)> {
        let mut nonce = [0_u8; 24];
        getrandom::fill(&mut nonce).map_err(|error| {
            StoreError::System(format!("no randomness from the system: {error}"))
        })?;
        let aad = associated(tenant, provider);
        let sealed = self
            .cipher()
            .encrypt(
                XNonce::from_slice(&nonce),
                Payload {
                    msg: key.as_bytes(),
                    aad: &aad,
                },
            )
            .map_err(|_| StoreError::System("sealing a model key failed".to_owned()))?;
        Ok((nonce.to_vec(), sealed))
    }

    /// The key sealed for `tenant`'s `provider`; refused when it was sealed under another secret
    /// key or for another row.
    pub(crate) fn open(
        &self,
        tenant: &str,
        provider: &str,
        nonce: &[u8],
        sealed: &[u8],
    ) -> Result<ModelKey> {
        let refused = || {
            StoreError::Invalid(format!(
                "tenant {tenant}'s {provider} key does not open with this secret key: the \
                 server and every worker must use the secret key it was stored with (or the \
                 tenant sets the key again)"
            ))
        };
        if nonce.len() != 24 {
            return Err(refused());
        }
        let aad = associated(tenant, provider);
        let plain = self
            .cipher()
            .decrypt(
                XNonce::from_slice(nonce),
                Payload {
                    msg: sealed,
                    aad: &aad,
                },
            )
            .map_err(|_| refused())?;
        String::from_utf8(plain)
            .map(ModelKey)
            .map_err(|_| refused())
    }
}

fn associated(tenant: &str, provider: &str) -> Vec<u8> {
    format!("plumb model key v1\0{tenant}\0{provider}").into_bytes()
}

/// A tenant's key for a provider, opened for a run: it goes into the provider's header only.
#[derive(Clone, PartialEq, Eq)]
pub struct ModelKey(String);

impl ModelKey {
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ModelKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ModelKey(…)")
    }
}

/// A provider name a key may be set for.
pub fn check_provider(provider: &str) -> Result<(), String> {
    if MODEL_KEY_PROVIDERS.contains(&provider) {
        Ok(())
    } else {
        Err(format!(
            "provider {provider:?} takes no key: use one of {}",
            MODEL_KEY_PROVIDERS.join(", ")
        ))
    }
}

/// A key as a header can carry it: 1–4096 visible ASCII characters, no spaces.
pub fn check_model_key(key: &str) -> Result<(), String> {
    if key.is_empty() || key.len() > MAX_KEY_BYTES || !key.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(format!(
            "key must be 1-{MAX_KEY_BYTES} visible ASCII characters with no spaces, as the \
             provider issued it"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(digit: char) -> SecretKey {
        SecretKey::parse(&digit.to_string().repeat(64), "test").unwrap()
    }

    #[test]
    fn a_sealed_key_opens_only_with_its_secret_and_for_its_row() {
        let (nonce, sealed) = secret('a').seal("acme", "openai", "sk-live-1234").unwrap();
        assert!(
            !sealed.windows(4).any(|w| w == b"1234"),
            "stored in the clear"
        );
        let opened = secret('a').open("acme", "openai", &nonce, &sealed).unwrap();
        assert_eq!(opened.expose(), "sk-live-1234");
        assert_eq!(format!("{opened:?}"), "ModelKey(…)");
        assert!(secret('b').open("acme", "openai", &nonce, &sealed).is_err());
        assert!(
            secret('a')
                .open("globex", "openai", &nonce, &sealed)
                .is_err()
        );
        assert!(
            secret('a')
                .open("acme", "anthropic", &nonce, &sealed)
                .is_err()
        );
    }

    #[test]
    fn a_secret_key_is_64_hex_digits_and_a_key_is_header_safe() {
        assert!(
            SecretKey::parse("abc", "PLUMB_SECRET_KEY")
                .unwrap_err()
                .contains("PLUMB_SECRET_KEY")
        );
        assert!(SecretKey::parse(&"g".repeat(64), "x").is_err());
        assert!(SecretKey::parse(&format!("{}\n", "0f".repeat(32)), "x").is_ok());
        assert!(check_model_key("sk-abc").is_ok());
        assert!(check_model_key("sk abc").is_err());
        assert!(check_model_key("sk\r\nX-Evil: 1").is_err());
        assert!(check_model_key("").is_err());
        assert!(check_provider("ollama").is_err());
    }
}
