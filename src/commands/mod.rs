//! One function per command. The product commands (search, pick, build,
//! index, doctor) are pipeline runs with their inputs filled from flags.

pub mod eject;
pub mod eval;
pub mod model;
pub mod providers;
pub mod watch;

use engine::render::{render, Format};
use engine::Output;
use serde_json::{Map, Value};

use crate::cli::RunOptions;
use crate::exit::{self, Outcome};
use crate::invocation::Invocation;
use crate::project::Project;

/// A pipeline run from the command line: its lines on stdout (stderr with
/// `--json`, whose document then goes to stdout), `--report`, Ctrl+C.
pub async fn run_pipeline(project: &Project, invocation: &Invocation, trust: bool, opts: &RunOptions) -> Outcome {
    let lines = match (opts.json, project.quiet) {
        (false, _) => Output::stdout(),
        (true, false) => Output::stderr(),
        // `-q --json`: the document alone, and on stderr only errors.
        (true, true) => Output::discard(),
    };
    run_pipeline_to(project, invocation, trust, opts, lines).await
}

/// [`run_pipeline`], its lines going to `lines`.
pub(crate) async fn run_pipeline_to(
    project: &Project,
    invocation: &Invocation,
    trust: bool,
    opts: &RunOptions,
    mut lines: Output,
) -> Outcome {
    if let Some(problem) = opts.report.as_deref().and_then(report_folder_problem) {
        return Outcome::invalid(problem);
    }
    // A step a line suggests names the project this run is on.
    if let Some(rewrite) = crate::runnable::rewrite_for(&project.root) {
        lines = lines.rewriting(rewrite);
    }
    let rt = match project.runtime(lines) {
        Ok(rt) => rt,
        Err(e) => return Outcome::failed(e),
    };
    // Ctrl+C is watched on a task of its own and cancels the run: a stage
    // stuck in a template holds the task that runs this function, and only
    // the cancel flag reaches the render.
    let cancel = rt.cancel().clone();
    let watcher = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            cancel.cancel();
        }
    });
    let interrupted = || Outcome {
        code: exit::INTERRUPTED,
        message: Some("interrupted".into()),
    };
    let finished = tokio::select! {
        finished = invocation.run(project, trust, &rt) => finished,
        () = rt.cancel().cancelled() => return interrupted(),
    };
    watcher.abort();
    if rt.cancel().is_cancelled() {
        return interrupted();
    }
    if let Some(report) = &finished.report {
        let costs = match crate::usage::Prices::load(&project.resources) {
            Ok(prices) => crate::usage::costs(report, &prices),
            Err(e) => {
                tracing::warn!("cannot price the run's model calls: {e}");
                vec![]
            }
        };
        if let Some(line) = crate::usage::summary_line(&costs, report.cache_hits()) {
            tracing::info!("{line}");
        }
        if let Some(path) = &opts.report {
            let mut report = serde_json::to_value(report).unwrap_or_default();
            report["llm_usage"] = serde_json::to_value(&costs).unwrap_or_default();
            // What the run produced (index warnings with their files, search groups…).
            if let Some(document) = &finished.document {
                report["output"] = document.clone();
            }
            let json = serde_json::to_vec_pretty(&report).unwrap_or_default();
            if let Err(e) = engine::io::write_atomic(path, &json) {
                return Outcome::failed(format!("cannot write the report {}: {e}", path.display()));
            }
        }
    }
    if let (true, Some(document)) = (opts.json, &finished.document) {
        crate::outln!("{}", serde_json::to_string_pretty(document).unwrap_or_default());
    }
    Outcome {
        code: finished.code,
        message: finished.message,
    }
}

/// `--report FILE` goes into an existing folder: checked before the run, so
/// a typo does not cost the run nor create folders nobody asked for.
fn report_folder_problem(path: &std::path::Path) -> Option<String> {
    let folder = path.parent().filter(|p| !p.as_os_str().is_empty())?;
    (!folder.is_dir()).then(|| {
        format!(
            "--report {}: the folder {} does not exist\n  help: create it first, or write the report elsewhere",
            path.display(),
            folder.display()
        )
    })
}

/// `--dry-run`: the plan, without calling any provider or writing anything.
/// The inputs are checked as a real run would check them.
pub fn dry_run(project: &Project, name: &str, inputs: Map<String, Value>, opts: &RunOptions) -> Outcome {
    let pipeline = match project.compile(name, &opts.sets) {
        Ok(p) => p,
        Err(d) => return Outcome::invalid(d),
    };
    let inputs = match pipeline.bind_inputs(inputs) {
        Ok(v) => v,
        Err(e) => return Outcome::invalid(e),
    };
    crate::outln!("{}", render(&pipeline.graph(), Format::Ascii).trim_end());
    crate::outln!();
    crate::outln!("provider: {}", project.config.llm.provider.name());
    crate::outln!("inputs:");
    for (k, v) in inputs.as_object().into_iter().flatten() {
        crate::outln!("  {k} = {v}");
    }
    crate::outln!("params:");
    for p in pipeline.resolved_params() {
        crate::outln!("  {} = {}   ({})", p.key, p.value, p.source);
    }
    Outcome::ok()
}

/// `validate`: compile pipelines, print every problem.
pub fn validate(project: &Project, names: &[String]) -> Outcome {
    let (count, errors) = project.validate(names);
    if errors.is_empty() {
        crate::outln!("{count} pipeline{} valid", if count == 1 { "" } else { "s" });
        Outcome::ok()
    } else {
        Outcome::invalid(errors)
    }
}

/// `graph`: draw a pipeline.
pub fn graph(project: &Project, name: &str, format: &str) -> Outcome {
    let format: Format = match format.parse() {
        Ok(f) => f,
        Err(e) => return Outcome::invalid(e),
    };
    match project.compile(name, &[]) {
        Ok(p) => {
            crate::out!("{}", render(&p.graph(), format));
            Outcome::ok()
        }
        Err(d) => Outcome::invalid(d),
    }
}
