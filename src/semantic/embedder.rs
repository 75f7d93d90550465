//! The embedder a project uses: the builtin encoder (in-process, offline) or
//! an OpenAI-compatible embeddings server, chosen by `embeddings:`.

use std::sync::{Arc, OnceLock};

use engine::io::Limits;
use engine::llm::EmbeddingsClient;

use super::config::{EmbeddingsConfig, EmbeddingsProvider};

/// Turns texts into unit vectors.
pub enum Embedder {
    /// The in-process sentence encoder.
    Builtin(Arc<encoder::Encoder>),
    /// An OpenAI-compatible embeddings server.
    Remote(Box<EmbeddingsClient>),
}

/// Why a project has no embedder: said once where it matters (doctor,
/// a search that could use meaning), never an error for `auto`.
#[derive(Debug, Clone)]
pub struct Unavailable(pub String);

impl Embedder {
    /// The embedder `config` selects; `Ok(Err(..))` when there is none to
    /// use (`off`, or `auto` without the model), `Err` when the config asks
    /// for one that cannot be set up (`builtin` without the model, a bad
    /// `openai` section).
    pub fn open(config: &EmbeddingsConfig, limits: &Limits) -> anyhow::Result<Result<Self, Unavailable>> {
        match config.provider {
            EmbeddingsProvider::Off => Ok(Err(Unavailable("embeddings.provider is off".into()))),
            EmbeddingsProvider::Auto | EmbeddingsProvider::Builtin => {
                let Some(path) = crate::model::installed_builtin_model() else {
                    let why =
                        "the builtin model is not installed (`unity-assets model install` turns on search by meaning)";
                    if config.provider == EmbeddingsProvider::Builtin {
                        anyhow::bail!("embeddings.provider is builtin, but {why}");
                    }
                    return Ok(Err(Unavailable(why.into())));
                };
                let encoder = encoder::Encoder::open(&path)
                    .map_err(|e| anyhow::anyhow!("cannot open the builtin model {}: {e}", path.display()))?;
                Ok(Ok(Self::Builtin(Arc::new(encoder))))
            }
            EmbeddingsProvider::Openai => {
                let missing =
                    |key: &str| anyhow::anyhow!("embeddings.provider is openai, but embeddings.{key} is not set");
                let settings = &config.server;
                settings.base_url.as_ref().ok_or_else(|| missing("base_url"))?;
                settings.model.as_ref().ok_or_else(|| missing("model"))?;
                let client = EmbeddingsClient::connect(settings, limits.http_bytes, &crate::PRODUCT, |name| {
                    std::env::var(name).ok()
                })?;
                Ok(Ok(Self::Remote(Box::new(client))))
            }
        }
    }

    /// Names the vectors' space: vectors of two ids are never compared, and
    /// an index whose vectors carry another id is re-embedded.
    pub fn id(&self) -> String {
        match self {
            Self::Builtin(encoder) => format!("builtin:{}", encoder.model_id()),
            Self::Remote(client) => format!("openai:{}", client.model()),
        }
    }

    /// One unit vector per text, in order.
    pub async fn embed(&self, texts: &[String]) -> anyhow::Result<Vec<Vec<f32>>> {
        let mut vectors = match self {
            Self::Builtin(encoder) => {
                let encoder = Arc::clone(encoder);
                let texts = texts.to_vec();
                tokio::task::spawn_blocking(move || {
                    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
                    let embed = || encoder.embed(&refs).into_iter().map(|v| v.to_vec()).collect::<Vec<_>>();
                    let threads = (refs.len() >= OWN_THREADS_FROM).then(encoder_threads).flatten();
                    match threads {
                        Some(pool) => pool.install(embed),
                        None => embed(),
                    }
                })
                .await?
            }
            Self::Remote(client) => client.embed(texts).await?,
        };
        vectors.iter_mut().for_each(|v| normalize(v));
        Ok(vectors)
    }
}

/// Calls of this many texts (an index run's) go to the encoder's threads;
/// a search's few texts are embedded where they are, no thread started.
const OWN_THREADS_FROM: usize = 64;

/// The encoder's own threads. In the shared pool a thread that waits for
/// its stolen half of an encoder call runs other work meanwhile, on its own
/// stack: a long task of another stage (the search index's dictionary,
/// built beside the vectors) then holds the call's end, and embedding
/// stalled for seconds with a core idle. `None` when the threads cannot be
/// started: the shared pool serves.
fn encoder_threads() -> Option<&'static rayon::ThreadPool> {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .thread_name(|i| format!("encoder-{i}"))
            .build()
            .ok()
    })
    .as_ref()
}

/// Scale `v` to unit length (a zero vector stays zero).
pub fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}
