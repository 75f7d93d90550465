//! Transport retries shared by every provider: a per-attempt timeout, and
//! exponential backoff with jitter on failures another attempt may fix
//! (timeouts, connection errors, 429, 5xx), honouring a server's
//! `retry-after`. Anything else (other 4xx, malformed answers) fails at once:
//! repeating the same request would fail the same way.

use std::future::Future;
use std::time::Duration;

use rand::RngExt;

use super::LlmError;

/// The first backoff delay; each retry doubles it.
const BASE_DELAY: Duration = Duration::from_millis(500);
/// No computed backoff exceeds this.
const MAX_DELAY: Duration = Duration::from_secs(60);

/// How one provider retries.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RetryPolicy {
    /// Retries after the first attempt.
    pub retries: u32,
    /// The limit of each attempt, from sending the request to the last byte.
    pub timeout: Duration,
    /// The longest `retry-after` honoured (`llm.retry_after_max_s`): a
    /// server asking for more is treated as refusing, not stalled on.
    pub max_wait: Duration,
}

/// Why one attempt failed, and whether another attempt may succeed.
#[derive(Debug)]
pub(crate) struct Failure {
    pub error: LlmError,
    pub retry: Retry,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Retry {
    Never,
    /// After the exponential backoff delay.
    Backoff,
    /// After the delay the server named (`retry-after`).
    After(Duration),
}

impl Failure {
    pub(crate) fn fatal(error: LlmError) -> Self {
        Self {
            error,
            retry: Retry::Never,
        }
    }

    pub(crate) fn transient(error: LlmError) -> Self {
        Self {
            error,
            retry: Retry::Backoff,
        }
    }
}

/// Runs `attempt` until it succeeds or its failure is final; returns the value
/// and the number of retries spent. An error after retries is
/// [`LlmError::GaveUp`], so the run report can count them.
///
/// The errors in `Failure`s must already be scrubbed of keys: they are logged.
pub(crate) async fn with_retries<T, F, Fut>(
    provider: &str,
    policy: RetryPolicy,
    mut attempt: F,
) -> Result<(T, u32), LlmError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, Failure>>,
{
    let mut retries = 0;
    loop {
        let failure = match tokio::time::timeout(policy.timeout, attempt()).await {
            Ok(Ok(value)) => return Ok((value, retries)),
            Ok(Err(failure)) => failure,
            Err(_elapsed) => Failure::transient(LlmError::Timeout {
                provider: provider.to_owned(),
                after: policy.timeout,
            }),
        };
        let delay = match failure.retry {
            Retry::Never => None,
            Retry::Backoff => Some(backoff(retries)),
            Retry::After(asked) if asked <= policy.max_wait => Some(asked),
            Retry::After(asked) => {
                return Err(too_long(failure.error, asked, policy.max_wait));
            }
        };
        match delay {
            Some(delay) if retries < policy.retries => {
                tracing::warn!(
                    provider,
                    retry = retries + 1,
                    delay_ms = delay.as_millis() as u64,
                    error = %failure.error,
                    "retrying LLM call"
                );
                tokio::time::sleep(delay).await;
                retries += 1;
            }
            _ if retries == 0 => return Err(failure.error),
            _ => {
                return Err(LlmError::GaveUp {
                    retries,
                    last: Box::new(failure.error),
                })
            }
        }
    }
}

/// `error` saying why it was not retried: the wait asked for is over the cap.
fn too_long(error: LlmError, asked: Duration, cap: Duration) -> LlmError {
    let why = format!(
        "; the server asked to wait {}s (Retry-After), longer than llm.retry_after_max_s ({}s), so it was not retried",
        asked.as_secs(),
        cap.as_secs()
    );
    match error {
        LlmError::Http {
            provider,
            status,
            message,
        } => LlmError::Http {
            provider,
            status,
            message: message + &why,
        },
        other => other,
    }
}

/// `BASE_DELAY · 2^retry`, capped, scaled by a random factor in [0.5, 1] so
/// many concurrent callers that failed together do not retry together.
fn backoff(retry: u32) -> Duration {
    let exponential = BASE_DELAY.saturating_mul(2u32.saturating_pow(retry)).min(MAX_DELAY);
    exponential.mul_f64(rand::rng().random_range(0.5..=1.0))
}

/// Parses `retry-after` in its delay-seconds form; the HTTP-date form is
/// ignored (plain backoff applies), as no LLM vendor sends it.
pub(crate) fn parse_retry_after(value: &str) -> Option<Duration> {
    let seconds: f64 = value.trim().parse().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;

    fn policy(retries: u32) -> RetryPolicy {
        RetryPolicy {
            retries,
            timeout: Duration::from_millis(200),
            max_wait: Duration::from_secs(60),
        }
    }

    fn server_error() -> LlmError {
        LlmError::Http {
            provider: "test".into(),
            status: 503,
            message: "overloaded".into(),
        }
    }

    #[test]
    fn backoff_doubles_within_jitter_and_is_capped() {
        for retry in 0..4 {
            let full = BASE_DELAY * 2u32.pow(retry);
            let delay = backoff(retry);
            assert!(delay >= full / 2 && delay <= full, "retry {retry}: {delay:?}");
        }
        assert!(backoff(40) <= MAX_DELAY);
    }

    #[test]
    fn retry_after_accepts_seconds_only() {
        assert_eq!(parse_retry_after(" 2 "), Some(Duration::from_secs(2)));
        assert_eq!(parse_retry_after("0.5"), Some(Duration::from_millis(500)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(parse_retry_after("-1"), None);
    }

    #[tokio::test]
    async fn transient_failures_are_retried_and_counted() {
        let calls = AtomicU32::new(0);
        let (value, retries) = with_retries("test", policy(3), || async {
            match calls.fetch_add(1, Ordering::SeqCst) {
                0 => Err(Failure {
                    error: server_error(),
                    retry: Retry::After(Duration::ZERO),
                }),
                _ => Ok("done"),
            }
        })
        .await
        .expect("second attempt succeeds");
        assert_eq!((value, retries), ("done", 1));
    }

    #[tokio::test]
    async fn fatal_failures_are_not_retried() {
        let calls = AtomicU32::new(0);
        let error = with_retries("test", policy(3), || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err::<(), _>(Failure::fatal(server_error()))
        })
        .await
        .unwrap_err();
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert_eq!(error.retries(), 0);
    }

    #[tokio::test]
    async fn exhausted_retries_report_their_count_and_timeouts_are_transient() {
        let error = with_retries(
            "test",
            RetryPolicy {
                retries: 1,
                ..policy(0)
            },
            || async {
                tokio::time::sleep(Duration::from_secs(5)).await;
                Ok(())
            },
        )
        .await
        .unwrap_err();
        assert_eq!(error.retries(), 1);
        assert!(matches!(error, LlmError::GaveUp { ref last, .. } if matches!(**last, LlmError::Timeout { .. })));
    }

    #[tokio::test]
    async fn a_wait_longer_than_the_cap_is_not_honoured() {
        let calls = AtomicU32::new(0);
        let error = with_retries("test", policy(3), || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err::<(), _>(Failure {
                error: server_error(),
                retry: Retry::After(Duration::from_secs(120)),
            })
        })
        .await
        .unwrap_err();
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert_eq!(
            error.to_string(),
            "test: HTTP 503: overloaded; the server asked to wait 120s (Retry-After), longer than llm.retry_after_max_s (60s), so it was not retried"
        );
    }
}
