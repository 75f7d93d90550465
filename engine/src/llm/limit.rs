//! Concurrency limits over any provider: the global `parallel_subagents`
//! limit that [`connect`](super::connect) applies, and per-stage limits a
//! stage can add on top.

use std::sync::Arc;

use futures::future::BoxFuture;
use futures::FutureExt;
use tokio::sync::Semaphore;

use super::{LlmError, LlmReply, LlmRequest, Provider, Tier};

/// `provider` allowing at most `max_in_flight` calls at once (at least one);
/// further calls wait their turn in order.
pub(crate) fn limit_concurrency(provider: Arc<dyn Provider>, max_in_flight: usize) -> Arc<dyn Provider> {
    Arc::new(Limited {
        inner: provider,
        permits: Semaphore::new(max_in_flight.max(1)),
    })
}

struct Limited {
    inner: Arc<dyn Provider>,
    permits: Semaphore,
}

impl Provider for Limited {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn model(&self, tier: Tier) -> String {
        self.inner.model(tier)
    }

    fn complete<'a>(&'a self, request: &'a LlmRequest) -> BoxFuture<'a, Result<LlmReply, LlmError>> {
        async move {
            let _permit = self.permits.acquire().await.expect("the semaphore is never closed");
            self.inner.complete(request).await
        }
        .boxed()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;
    use crate::llm::Usage;

    /// Records the most calls it ever saw in flight at once.
    #[derive(Default)]
    struct Gauge {
        in_flight: AtomicUsize,
        peak: AtomicUsize,
    }

    impl Provider for Gauge {
        fn name(&self) -> &str {
            "gauge"
        }

        fn model(&self, _tier: Tier) -> String {
            "m".into()
        }

        fn complete<'a>(&'a self, _request: &'a LlmRequest) -> BoxFuture<'a, Result<LlmReply, LlmError>> {
            async move {
                let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                self.peak.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(20)).await;
                self.in_flight.fetch_sub(1, Ordering::SeqCst);
                Ok(LlmReply {
                    value: serde_json::Value::Null,
                    usage: Usage::default(),
                    retries: 0,
                    model: "m".into(),
                })
            }
            .boxed()
        }
    }

    #[tokio::test]
    async fn no_more_than_the_limit_run_at_once() {
        let gauge = Arc::new(Gauge::default());
        let limited = limit_concurrency(gauge.clone(), 3);
        let request = LlmRequest {
            stage: "s".into(),
            system: None,
            cached: None,
            user: "u".into(),
            schema: None,
            schema_name: "x".into(),
            tier: Tier::Default,
            max_tokens: None,
        };
        let calls = (0..12).map(|_| limited.complete(&request));
        for reply in futures::future::join_all(calls).await {
            reply.expect("gauge never fails");
        }
        assert_eq!(gauge.peak.load(Ordering::SeqCst), 3);
    }
}
