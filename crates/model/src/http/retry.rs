//! Attempts with backoff: up to `max_attempts` tries of one request, waiting between them either
//! what the service asked for (`retry-after-ms`, `Retry-After` in seconds or as an HTTP date) or
//! an exponential backoff with full jitter, never longer than `max_backoff`.

use std::future::Future;
use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;

use super::HttpSettings;
use super::errors::AttemptError;
use crate::ModelError;

/// Runs `attempt` (given the attempt's number, from 1) until it succeeds, fails for good, or
/// `settings.max_attempts` attempts have been made.
pub(crate) async fn with_retries<T, F, Fut>(
    settings: &HttpSettings,
    mut attempt: F,
) -> Result<T, ModelError>
where
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = Result<T, AttemptError>>,
{
    let attempts = settings.max_attempts.max(1);
    let mut number = 1;
    loop {
        match attempt(number).await {
            Ok(value) => return Ok(value),
            Err(AttemptError::Fatal(error)) => return Err(error),
            Err(AttemptError::Retryable {
                message,
                retry_after,
            }) => {
                if number >= attempts {
                    let tries = if attempts == 1 {
                        "1 attempt".to_owned()
                    } else {
                        format!("{attempts} attempts")
                    };
                    return Err(ModelError::Service(format!(
                        "{message} (gave up after {tries})"
                    )));
                }
                let wait = match retry_after {
                    Some(wait) => wait.min(settings.max_backoff),
                    None => backoff(settings, number - 1),
                };
                tokio::time::sleep(wait).await;
                number += 1;
            }
        }
    }
}

/// The wait before retry number `retry` (from 0): a random time up to
/// `initial_backoff * 2^retry`, capped at `max_backoff` ("full jitter").
pub(crate) fn backoff(settings: &HttpSettings, retry: u32) -> Duration {
    let factor = 1u32.checked_shl(retry).unwrap_or(u32::MAX);
    let ceiling = settings
        .initial_backoff
        .saturating_mul(factor)
        .min(settings.max_backoff);
    ceiling.mul_f64(fastrand::f64())
}

/// The wait the service asked for: `retry-after-ms` (milliseconds), else `Retry-After` as
/// seconds or as an HTTP date.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let value = header("retry-after")?;
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(
        when.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use reqwest::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn retry_after_forms() {
        let in_a_minute = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(61));
        let from_date = retry_after(&headers(&[("retry-after", &in_a_minute)])).unwrap();
        assert!(
            from_date > Duration::from_secs(55) && from_date <= Duration::from_secs(61),
            "{from_date:?}"
        );
        let actual = vec![
            retry_after(&headers(&[("retry-after", "0")])),
            retry_after(&headers(&[("retry-after", "7")])),
            retry_after(&headers(&[("retry-after-ms", "250"), ("retry-after", "7")])),
            retry_after(&headers(&[(
                "retry-after",
                "Sun, 06 Nov 1994 08:49:37 GMT",
            )])),
            retry_after(&headers(&[("retry-after", "soon")])),
            retry_after(&headers(&[])),
        ];
        let expected = vec![
            Some(Duration::ZERO),
            Some(Duration::from_secs(7)),
            Some(Duration::from_millis(250)),
            Some(Duration::ZERO),
            None,
            None,
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn backoff_doubles_and_caps() {
        let mut settings = HttpSettings::new("http://x", "m");
        settings.initial_backoff = Duration::from_millis(100);
        settings.max_backoff = Duration::from_millis(350);
        for _ in 0..200 {
            assert!(backoff(&settings, 0) <= Duration::from_millis(100));
            assert!(backoff(&settings, 1) <= Duration::from_millis(200));
            assert!(backoff(&settings, 2) <= Duration::from_millis(350));
            assert!(backoff(&settings, 40) <= Duration::from_millis(350));
        }
    }

    #[tokio::test]
    async fn gives_up_after_max_attempts() {
        let mut settings = HttpSettings::new("http://x", "m");
        settings.initial_backoff = Duration::from_millis(1);
        let mut seen = Vec::new();
        let result: Result<(), ModelError> = with_retries(&settings, |n| {
            seen.push(n);
            async move { Err(AttemptError::retryable(format!("boom {n}"))) }
        })
        .await;
        assert_eq!(seen, vec![1, 2, 3]);
        assert_eq!(
            result.unwrap_err().to_string(),
            "the model service failed: boom 3 (gave up after 3 attempts)"
        );
    }
}
