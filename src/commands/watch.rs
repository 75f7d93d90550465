//! `index --watch` and `mcp --watch`: index, then index again after each
//! change, until Ctrl+C or the server ends.
//!
//! Each run is the `index` pipeline run as `index` runs it (its lines, its
//! lock, its trust check); the watch (`crate::index::watch`) only says
//! when to run, and vouches between runs that nothing changed.

use std::future::Future;
use std::path::PathBuf;

use engine::llm::ProviderKind;
use engine::Output;
use serde_json::Map;

use crate::cli::RunOptions;
use crate::exit::{self, Outcome};
use crate::index::watch::Watch;
use crate::invocation::{Door, Invocation};
use crate::project::Project;

/// Watch `project` and run `invocation` (the `index` pipeline) whenever its
/// asset folders have changed and gone quiet, until Ctrl+C: exit 130, as
/// for any interrupted command (a run it interrupts leaves its files as
/// they were).
pub async fn index_watch(project: &Project, invocation: &Invocation, trust: bool, opts: &RunOptions) -> Outcome {
    let run = || super::run_pipeline(project, invocation, trust, opts);
    watch(project, invocation, trust, run, tokio::signal::ctrl_c()).await
}

/// `mcp --watch`: the index of the project at `root` kept fresh beside the
/// server, its lines on stderr,
/// until the server ends and drops it. A watch that cannot start says why on
/// stderr and leaves the server serving. Unless `provider` names one, the
/// watcher tags with the builtin tagger: it runs unasked, so it spends no
/// model tokens.
pub async fn beside_mcp(root: PathBuf, provider: Option<ProviderKind>, model: Option<String>, trust: bool) {
    let say = |message: &str| eprintln!("[unity-assets:mcp] --watch: {message}");
    let provider = provider.unwrap_or(ProviderKind::Builtin);
    let project = match Project::open(&root, Some(provider), model.as_deref()) {
        Ok(project) => project,
        Err(diagnostic) => return say(&format!("{diagnostic}")),
    };
    let invocation = match Invocation::new(Door::Mcp, "index", Map::new(), vec![]) {
        Ok(invocation) => invocation,
        Err(message) => return say(&message),
    };
    let opts = RunOptions::default();
    let run = || super::run_pipeline_to(&project, &invocation, trust, &opts, Output::stderr());
    let outcome = watch(&project, &invocation, trust, run, std::future::pending::<()>()).await;
    if let Some(message) = outcome.message {
        say(&message);
    }
}

/// The watch loop: `run` once the folders are quiet, again after each
/// change, until `stop` (exit 130) or a run ends in anything but success or
/// failure. A failed run is reported and the watch goes on: the next change
/// may mend it (a locked file, a bad row).
async fn watch<F, R, S, T>(project: &Project, invocation: &Invocation, trust: bool, run: F, stop: S) -> Outcome
where
    F: Fn() -> R,
    R: Future<Output = Outcome>,
    S: Future<Output = T>,
{
    // Nothing is written into an untrusted project, the watcher's lock included.
    if let Some(refusal) = invocation.refused(project, trust) {
        return refusal;
    }
    let watch = match Watch::start(&project.root) {
        Ok(watch) => watch,
        Err(e) => return Outcome::failed(format!("index --watch: {e:#}")),
    };
    if !project.quiet {
        eprintln!("[unity-assets:index] watching Assets/ and Packages/ for changes; Ctrl+C stops");
    }
    // One listener for the whole watch: a stop between two waits is not lost.
    tokio::pin!(stop);
    let stopped = || Outcome {
        code: exit::INTERRUPTED,
        message: None,
    };
    loop {
        tokio::select! {
            quiet = watch.quiet() => if let Err(e) = quiet {
                return Outcome::failed(format!("index --watch: {e:#}"));
            },
            _ = &mut stop => return stopped(),
        }
        let outcome = run().await;
        match outcome.code {
            exit::OK => {}
            exit::FAILED => {
                if let Some(message) = &outcome.message {
                    eprintln!("{message}");
                }
            }
            _ => return outcome,
        }
        tokio::select! {
            () = watch.changed() => {}
            _ = &mut stop => return stopped(),
        }
    }
}
