//! `index --watch`: index, then index again after each change, until Ctrl+C.
//!
//! Each run is the `index` pipeline run as `index` runs it (its lines, its
//! lock, its trust check); the watch ([`crate::index::watch`]) only says
//! when to run, and vouches between runs that nothing changed.

use crate::cli::RunOptions;
use crate::exit::{self, Outcome};
use crate::index::watch::Watch;
use crate::invocation::Invocation;
use crate::project::Project;

/// Watch `project` and run `invocation` (the `index` pipeline) whenever its
/// asset folders have changed and gone quiet, until Ctrl+C: exit 130, as
/// for any interrupted command (a run it interrupts leaves its files as
/// they were).
pub async fn index_watch(project: &Project, invocation: &Invocation, trust: bool, opts: &RunOptions) -> Outcome {
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
    // One listener for the whole watch: a Ctrl+C between two waits is not lost.
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    let stopped = || Outcome {
        code: exit::INTERRUPTED,
        message: None,
    };
    loop {
        tokio::select! {
            quiet = watch.quiet() => if let Err(e) = quiet {
                return Outcome::failed(format!("index --watch: {e:#}"));
            },
            _ = &mut ctrl_c => return stopped(),
        }
        let outcome = super::run_pipeline(project, invocation, trust, opts).await;
        match outcome.code {
            exit::OK => {}
            // The next change may mend a failed run (a locked file, a bad row).
            exit::FAILED => {
                if let Some(message) = &outcome.message {
                    eprintln!("{message}");
                }
            }
            _ => return outcome,
        }
        tokio::select! {
            () = watch.changed() => {}
            _ = &mut ctrl_c => return stopped(),
        }
    }
}
