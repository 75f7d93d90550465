//! The provider layer's own cost per call: the anthropic and openai providers
//! against a local scripted server that answers instantly, so what is left is
//! request building, JSON encoding/decoding, HTTP on loopback, retries
//! bookkeeping and the concurrency limit. The server runs in the same process
//! (and on the same cores), so the figures are a lower bound.
//!
//! Run: `cargo bench -p engine --bench provider_overhead`; one iteration is
//! one call per worker, so criterion's throughput line is calls per second.

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use engine::llm::{connect_with_env, LlmConfig, LlmRequest, Provider, Tier};
use serde_json::json;
use test_support::llm_server::{LlmServer, Reply};

fn request() -> LlmRequest {
    LlmRequest {
        stage: "bench".into(),
        system: Some("You tag Unity assets.".into()),
        cached: Some("INDEX ".repeat(200)),
        user: "Tag: Assets/Zombies/Zombie_Walk.prefab".into(),
        schema: Some(json!({
            "type": "object",
            "properties": {"tags": {"type": "array", "items": {"type": "string"}}},
            "required": ["tags"],
        })),
        schema_name: "tags".into(),
        tier: Tier::Fast,
        max_tokens: None,
    }
}

async fn provider(kind: &str, concurrency: usize) -> (LlmServer, Arc<dyn Provider>) {
    let answer = match kind {
        "anthropic" => Reply::anthropic_tool(
            "tags",
            json!({"tags": ["zombie", "enemy"]}),
            json!({"input_tokens": 1, "output_tokens": 1}),
        ),
        _ => Reply::openai_content(
            "{\"tags\": [\"zombie\", \"enemy\"]}",
            json!({"prompt_tokens": 1, "completion_tokens": 1}),
        ),
    };
    let server = LlmServer::start(vec![answer]).await;
    let config: LlmConfig =
        serde_yaml::from_str(&format!("provider: {kind}\nbase_url: {}", server.url())).expect("bench config");
    let provider = connect_with_env(
        &config,
        concurrency,
        &engine::io::Limits::default(),
        &engine::Product::NEUTRAL,
        |_| Some("bench-key".into()),
    )
    .expect("connects")
    .expect("not builtin");
    (server, provider)
}

/// `calls_each` calls from each of `concurrency` workers; returns the wall time.
async fn run(provider: &Arc<dyn Provider>, concurrency: usize, calls_each: u64) -> Duration {
    let started = Instant::now();
    let workers = (0..concurrency).map(|_| {
        let provider = provider.clone();
        tokio::spawn(async move {
            let request = request();
            for _ in 0..calls_each {
                provider.complete(&request).await.expect("the local server answers");
            }
        })
    });
    for worker in futures::future::join_all(workers).await {
        worker.expect("worker finished");
    }
    started.elapsed()
}

fn provider_overhead(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().expect("tokio runtime");
    let mut group = c.benchmark_group("provider");
    for kind in ["anthropic", "openai"] {
        for concurrency in [1, 16] {
            let (_server, provider) = runtime.block_on(provider(kind, concurrency));
            group.throughput(Throughput::Elements(concurrency as u64));
            group.bench_function(BenchmarkId::new(kind, format!("concurrency {concurrency}")), |b| {
                b.iter_custom(|iters| runtime.block_on(run(&provider, concurrency, iters)))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, provider_overhead);
criterion_main!(benches);
