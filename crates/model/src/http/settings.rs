//! Settings shared by the HTTP providers, and the API key wrapper that keeps the key out of logs.

use std::fmt;
use std::time::Duration;

use crate::price::Price;

/// A provider's API key. It is only ever put in a request header: `Debug` and `Display` print
/// `ApiKey(***)`, and no error message or request body contains it.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    /// The key itself, for the one header that carries it.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl From<String> for ApiKey {
    fn from(key: String) -> Self {
        Self(key)
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

/// Where an HTTP provider lives and how hard to try. Build with [`HttpSettings::new`] and change
/// the fields that differ from the defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpSettings {
    /// The API root without the endpoint, e.g. `https://api.openai.com/v1` or
    /// `http://127.0.0.1:11434/v1`. A trailing `/` is ignored.
    pub base_url: String,
    /// The model name the service expects.
    pub model: String,
    /// Sent as a header when set; local servers need none.
    pub api_key: Option<ApiKey>,
    /// Attempts in total for one request, the first one included.
    pub max_attempts: u32,
    /// The backoff before the second attempt; it doubles with every further attempt.
    pub initial_backoff: Duration,
    /// No wait between attempts is longer than this, `Retry-After` included.
    pub max_backoff: Duration,
    pub connect_timeout: Duration,
    /// No bytes from the service for this long (before the headers or between stream chunks)
    /// ends the attempt.
    pub idle_timeout: Duration,
    pub max_output_tokens: u32,
    /// When set, each reply's `usage.usd` is its cost at this price; otherwise 0.
    pub price: Option<Price>,
}

impl HttpSettings {
    /// Settings with the defaults: 3 attempts, backoff from 1 s up to 30 s, 10 s to connect,
    /// 60 s of silence allowed, 4096 output tokens, no key, no price.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            max_attempts: 3,
            initial_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_output_tokens: 4096,
            price: None,
        }
    }

    /// The same settings with `key` as the API key.
    pub fn with_api_key(mut self, key: ApiKey) -> Self {
        self.api_key = Some(key);
        self
    }

    /// `{base_url}/{path}` with exactly one `/` between them.
    pub(crate) fn endpoint(&self, path: &str) -> String {
        format!("{}/{path}", self.base_url.trim_end_matches('/'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_never_prints() {
        let settings =
            HttpSettings::new("http://x/v1/", "m").with_api_key(ApiKey::new("sk-secret"));
        let debug = format!(
            "{settings:?} {} {:?}",
            ApiKey::new("sk-secret"),
            settings.api_key
        );
        assert!(!debug.contains("sk-secret"), "{debug}");
        assert!(debug.contains("ApiKey(***)"), "{debug}");
        assert_eq!(
            settings.endpoint("chat/completions"),
            "http://x/v1/chat/completions"
        );
    }
}
