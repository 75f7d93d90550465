//! Native code the pipelines call by name: `fn:` stages and the `builtin:`
//! implementations of `llm` stages.
//!
//! The engine knows nothing of any domain. A product registers its functions
//! here once at start-up; the compiler checks every name a pipeline uses
//! against this registry, and the executor calls through it.

use std::any::Any;
use std::collections::BTreeMap;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::args::Args;
use crate::mcp::CallGuard;
use crate::output::Output;

/// What a native call gets besides its arguments.
#[derive(Clone)]
pub struct CallContext {
    /// The folder the run works in (`--project`); relative paths resolve here.
    pub workdir: PathBuf,
    /// Where user-facing lines go (stdout in the CLI, a buffer in tests).
    pub output: Output,
    /// The stage making the call, for messages.
    pub stage: String,
    /// The run's resources, so data files (`data/...`) honour overrides.
    pub resources: crate::resources::Resources,
    /// Size limits on what the call reads.
    pub limits: crate::io::Limits,
    /// The product the run is for (where its limits are raised).
    pub product: crate::Product,
    /// What the call keeps for the rest of the run its stage belongs to.
    pub holdings: RunHoldings,
    /// Where a long call shows how far it is (none when nothing is shown).
    pub progress: Option<Arc<dyn crate::Progress>>,
    /// `pipeline: stage`, the label its progress is shown under.
    pub label: String,
}

/// What native calls keep for the rest of the pipeline run their stage
/// belongs to (a lock, say): dropped once that run has ended, however it
/// ended — finished, exited, failed or dropped — and no stage it started is
/// still at work. A sub-pipeline (`run:`) is a run of its own.
#[derive(Clone, Default)]
pub struct RunHoldings(Arc<Mutex<Vec<Box<dyn Any + Send>>>>);

impl RunHoldings {
    /// Keep `value` until the run ends.
    pub fn keep(&self, value: impl Any + Send) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Box::new(value));
    }
}

impl CallContext {
    /// A bar of `total` items under this stage's label, for a call whose work
    /// is long and countable; `None` when nothing is shown.
    pub fn count(&self, total: usize) -> Option<Box<dyn crate::Tick>> {
        self.progress.as_ref().map(|p| p.begin(&self.label, total))
    }

    /// A path an argument names, relative to the workdir and confined to it.
    pub fn path(&self, rel: &std::path::Path) -> Result<PathBuf, crate::io::ConfineError> {
        crate::io::confine(&self.workdir, &rel.to_string_lossy())
    }

    /// A confined file's text, within `limits.file_mb`.
    pub fn read_text(&self, rel: &std::path::Path) -> Result<String, crate::io::ConfineError> {
        crate::io::read_text_limited(
            &self.path(rel)?,
            self.limits.file_bytes,
            crate::io::FILE_KEY,
            &self.product,
        )
    }
}

/// The error a registered function returns: any error, boxed, so `?` takes
/// an `io::Error`, an `anyhow::Error` or a message (`Err("…".into())`).
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Why a native call failed, naming the function.
#[derive(Debug, thiserror::Error)]
pub enum NativeError {
    /// The stage's `with:` does not fit the function's arguments.
    #[error("bad arguments for `{function}`: {source}")]
    Arguments {
        /// The function called.
        function: Arc<str>,
        /// Where the arguments and the function's type disagree.
        source: serde_json::Error,
    },
    /// The function's result cannot be turned into JSON.
    #[error("`{function}` returned unserialisable output: {source}")]
    Output {
        /// The function called.
        function: Arc<str>,
        /// Why the result is not JSON.
        source: serde_json::Error,
    },
    /// The function panicked (a bug in it, not in the pipeline).
    #[error("native function `{function}` panicked: {message}")]
    Panicked {
        /// The function called.
        function: Arc<str>,
        /// The panic, as tokio reports it.
        message: String,
    },
    /// The function returned an error: its whole chain is the message.
    #[error("{}", Chain(source.as_ref()))]
    Failed {
        /// The function called.
        function: Arc<str>,
        /// Its error.
        source: BoxError,
    },
}

impl NativeError {
    /// The function that failed.
    pub fn function(&self) -> &str {
        match self {
            Self::Arguments { function, .. }
            | Self::Output { function, .. }
            | Self::Panicked { function, .. }
            | Self::Failed { function, .. } => function,
        }
    }
}

/// An error and its sources, `outer: inner`, as anyhow's `{:#}` prints them
/// (a boxed `anyhow::Error` shows only its outermost context by itself).
struct Chain<'a>(&'a (dyn std::error::Error + 'static));

impl std::fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)?;
        let mut next = self.0.source();
        while let Some(cause) = next {
            write!(f, ": {cause}")?;
            next = cause.source();
        }
        Ok(())
    }
}

/// What a native function returns: its JSON result, later.
pub type NativeFuture = Pin<Box<dyn Future<Output = Result<Value, NativeError>> + Send>>;

/// A registered native function: arguments ([`Args`], JSON that may share
/// earlier outputs) in, JSON result out.
pub type NativeFn = Arc<dyn Fn(Args, CallContext) -> NativeFuture + Send + Sync>;

/// What a native function can reach beyond computing on its arguments and
/// the run's files: declared where the product registers it, so a review of
/// a pipeline (before it is trusted) lists every stage calling such a
/// function from this declaration rather than from a list of names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reach {
    /// Starts a program (a command, an MCP server over stdio).
    pub programs: bool,
    /// Opens a network connection.
    pub network: bool,
    /// Chooses which credential (an environment variable's value) goes where.
    pub credentials: bool,
}

impl Reach {
    /// Computes on its arguments and the run's files only.
    pub const NONE: Self = Self {
        programs: false,
        network: false,
        credentials: false,
    };
    /// Opens connections.
    pub const NETWORK: Self = Self {
        network: true,
        ..Self::NONE
    };
    /// Starts programs, opens connections and chooses credentials.
    pub const ALL: Self = Self {
        programs: true,
        network: true,
        credentials: true,
    };

    /// Whether it reaches anything at all.
    pub fn any(self) -> bool {
        self != Self::NONE
    }

    /// "runs programs, opens connections, chooses credentials", for a review.
    pub fn describe(self) -> String {
        let parts: Vec<&str> = [
            (self.programs, "runs programs"),
            (self.network, "opens connections"),
            (self.credentials, "chooses credentials"),
        ]
        .into_iter()
        .filter_map(|(on, what)| on.then_some(what))
        .collect();
        parts.join(", ")
    }
}

/// One registered entry with the one-line summary `graph` and `validate` show.
#[derive(Clone)]
pub struct Native {
    /// One line saying what it does.
    pub summary: &'static str,
    /// What it can reach (declared at its registration: [`Registry::function`]).
    pub reach: Reach,
    /// The function itself.
    pub call: NativeFn,
}

/// The namespaces a pipeline can call into.
#[derive(Clone, Default)]
pub struct Registry {
    functions: BTreeMap<String, Native>,
    builtins: BTreeMap<String, Native>,
    guards: BTreeMap<String, Arc<dyn CallGuard>>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Register a `fn:` function whose work is synchronous (CPU or file I/O),
    /// with what it can `reach` beyond the project ([`Reach::NONE`]: nothing;
    /// the trust review lists a project pipeline calling one that reaches
    /// more). It runs on tokio's blocking pool so it never stalls the scheduler.
    pub fn function<A, R, F>(&mut self, name: &str, reach: Reach, summary: &'static str, f: F) -> &mut Self
    where
        A: DeserializeOwned + Send + 'static,
        R: Serialize + Send + 'static,
        F: Fn(A, &CallContext) -> Result<R, BoxError> + Send + Sync + 'static,
    {
        let native = blocking(name, summary, f);
        self.insert_function(name, reach, native)
    }

    /// Register a `fn:` function that is itself asynchronous (network,
    /// timers), with what it can `reach` (as [`Registry::function`]).
    pub fn async_function<A, R, F, Fut>(&mut self, name: &str, reach: Reach, summary: &'static str, f: F) -> &mut Self
    where
        A: DeserializeOwned + Send + 'static,
        R: Serialize + Send + 'static,
        F: Fn(A, CallContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, BoxError>> + Send + 'static,
    {
        let native = asynchronous(name, summary, f);
        self.insert_function(name, reach, native)
    }

    fn insert_function(&mut self, name: &str, reach: Reach, native: Native) -> &mut Self {
        self.functions.insert(name.to_owned(), Native { reach, ..native });
        self
    }

    /// What the `fn:` function `name` can reach ([`Reach::NONE`] when unknown:
    /// a pipeline naming an unknown function does not compile).
    pub fn reach(&self, name: &str) -> Reach {
        self.functions.get(name).map_or(Reach::NONE, |n| n.reach)
    }

    /// Register the native implementation of an `llm` stage (`builtin:`),
    /// what the offline `builtin` provider runs instead of a model.
    pub fn builtin<A, R, F>(&mut self, name: &str, summary: &'static str, f: F) -> &mut Self
    where
        A: DeserializeOwned + Send + 'static,
        R: Serialize + Send + 'static,
        F: Fn(A, &CallContext) -> Result<R, BoxError> + Send + Sync + 'static,
    {
        let native = blocking(name, summary, f);
        self.builtins.insert(name.to_owned(), native);
        self
    }

    /// Register an asynchronous builtin (used by tests and benchmarks that
    /// need a task which waits without holding a thread).
    pub fn async_builtin<A, R, F, Fut>(&mut self, name: &str, summary: &'static str, f: F) -> &mut Self
    where
        A: DeserializeOwned + Send + 'static,
        R: Serialize + Send + 'static,
        F: Fn(A, CallContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, BoxError>> + Send + 'static,
    {
        let native = asynchronous(name, summary, f);
        self.builtins.insert(name.to_owned(), native);
        self
    }

    /// Register a scope guard `mcp` stages name in `guard:`.
    pub fn guard(&mut self, name: &str, guard: Arc<dyn CallGuard>) -> &mut Self {
        self.guards.insert(name.to_owned(), guard);
        self
    }

    /// The guard registered as `name`.
    pub fn get_guard(&self, name: &str) -> Option<&Arc<dyn CallGuard>> {
        self.guards.get(name)
    }

    /// Names of the registered guards, sorted.
    pub fn guard_names(&self) -> impl Iterator<Item = &str> {
        self.guards.keys().map(String::as_str)
    }

    /// The `fn:` function registered as `name`.
    pub fn get_function(&self, name: &str) -> Option<&Native> {
        self.functions.get(name)
    }

    /// The `builtin:` registered as `name`.
    pub fn get_builtin(&self, name: &str) -> Option<&Native> {
        self.builtins.get(name)
    }

    /// Names of the registered `fn:` functions, sorted.
    pub fn function_names(&self) -> impl Iterator<Item = &str> {
        self.functions.keys().map(String::as_str)
    }

    /// Names of the registered builtins, sorted.
    pub fn builtin_names(&self) -> impl Iterator<Item = &str> {
        self.builtins.keys().map(String::as_str)
    }
}

/// A synchronous function, run on tokio's blocking pool.
fn blocking<A, R, F>(name: &str, summary: &'static str, f: F) -> Native
where
    A: DeserializeOwned + Send + 'static,
    R: Serialize + Send + 'static,
    F: Fn(A, &CallContext) -> Result<R, BoxError> + Send + Sync + 'static,
{
    let f = Arc::new(f);
    native(name, summary, move |args: A, ctx: CallContext, function: Arc<str>| {
        let f = Arc::clone(&f);
        async move {
            match tokio::task::spawn_blocking(move || f(args, &ctx)).await {
                Ok(result) => result.map_err(|source| NativeError::Failed { function, source }),
                Err(e) => Err(NativeError::Panicked {
                    function,
                    message: e.to_string(),
                }),
            }
        }
    })
}

fn asynchronous<A, R, F, Fut>(name: &str, summary: &'static str, f: F) -> Native
where
    A: DeserializeOwned + Send + 'static,
    R: Serialize + Send + 'static,
    F: Fn(A, CallContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, BoxError>> + Send + 'static,
{
    native(name, summary, move |args: A, ctx: CallContext, function: Arc<str>| {
        let called = f(args, ctx);
        async move { called.await.map_err(|source| NativeError::Failed { function, source }) }
    })
}

/// JSON in and out around a typed function, each failure naming the function.
fn native<A, R, F, Fut>(name: &str, summary: &'static str, f: F) -> Native
where
    A: DeserializeOwned + Send + 'static,
    R: Serialize + Send + 'static,
    F: Fn(A, CallContext, Arc<str>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, NativeError>> + Send + 'static,
{
    let f = Arc::new(f);
    let name: Arc<str> = name.into();
    let call: NativeFn = Arc::new(move |args, ctx| {
        let f = Arc::clone(&f);
        let function = Arc::clone(&name);
        Box::pin(async move {
            let typed = A::deserialize(&args).map_err(|source| NativeError::Arguments {
                function: Arc::clone(&function),
                source,
            })?;
            // What the arguments share of earlier outputs is let go before
            // the call: the run drops an output once its last reader starts.
            drop(args);
            let result = f(typed, ctx, Arc::clone(&function)).await?;
            serde_json::to_value(result).map_err(|source| NativeError::Output { function, source })
        })
    });
    Native {
        summary,
        reach: Reach::NONE,
        call,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reach_is_declared_with_each_function() {
        let mut registry = Registry::new();
        registry
            .function("p.pure", Reach::NONE, "", |a: Value, _| Ok(a))
            .async_function("p.fetch", Reach::NETWORK, "", |a: Value, _| async move { Ok(a) })
            .function("p.after", Reach::NONE, "", |a: Value, _| Ok(a));
        assert_eq!(registry.reach("p.fetch"), Reach::NETWORK);
        assert_eq!(registry.reach("p.pure"), Reach::NONE);
        assert_eq!(registry.reach("p.after"), Reach::NONE);
        assert_eq!(registry.reach("p.unknown"), Reach::NONE);
        assert_eq!(
            Reach::ALL.describe(),
            "runs programs, opens connections, chooses credentials"
        );
        assert!(!Reach::NONE.any() && Reach::NETWORK.any());
    }
}
