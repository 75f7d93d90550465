//! `unity-assets`: natural-language asset search and scene building for
//! Unity projects, every step a declarative pipeline run by `engine`.

use std::io::IsTerminal;

use clap::Parser;
use serde_json::{json, Map, Value};

use unity_assets::cli::{Cli, Command, ProvidersCommand};
use unity_assets::commands::{self, Outcome};
use unity_assets::exit;
use unity_assets::mcp_server;
use unity_assets::project::Project;

/// Search and index move many small JSON values between stages; mimalloc
/// keeps that allocation cheap across threads (glibc's malloc was a fifth
/// of a search's time).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let cli = Cli::parse();
    init_tracing(cli.verbose, cli.quiet);
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            std::process::exit(exit::FAILED);
        }
    };
    let outcome = runtime.block_on(dispatch(cli));
    if let Some(msg) = &outcome.message {
        eprintln!("{}", paint_error(msg));
    }
    // Let blocking tasks of a cancelled run finish their cleanup briefly.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    std::process::exit(outcome.code);
}

async fn dispatch(cli: Cli) -> Outcome {
    if let Command::Mcp { http } = &cli.command {
        return serve_mcp(&cli, http.as_deref()).await;
    }
    let mut project = match Project::open(&cli.project, cli.provider, cli.model.as_deref()) {
        Ok(p) => p,
        Err(d) => return Outcome::invalid(d),
    };
    project.show_progress = !cli.quiet;
    let inputs = |pairs: Value| -> Map<String, Value> { pairs.as_object().cloned().unwrap_or_default() };
    match cli.command {
        Command::Search { query, reindex, run } => {
            // --json: the search-result document on stdout, every other line on stderr.
            let fields = json!({"query": query, "reindex": reindex, "json": run.json});
            commands::run_pipeline(&project, "search", inputs(fields), &run).await
        }
        Command::Pick { index, run } => {
            commands::run_pipeline(&project, "pick", inputs(json!({"index": index})), &run).await
        }
        Command::Build {
            request,
            yes,
            choose,
            non_interactive,
            run,
        } => {
            let fields = json!({"request": request, "yes": yes, "choose": choose, "non_interactive": non_interactive});
            commands::run_pipeline(&project, "build", inputs(fields), &run).await
        }
        Command::Index { run } => {
            commands::run_pipeline(&project, "index", inputs(json!({"force": false})), &run).await
        }
        Command::Reindex { run } => {
            commands::run_pipeline(&project, "index", inputs(json!({"force": true})), &run).await
        }
        Command::Doctor { offline, run } => {
            commands::run_pipeline(&project, "doctor", inputs(json!({"offline": offline})), &run).await
        }
        Command::Eval { golden, json } => commands::eval::command(&project, &golden, json).await,
        Command::Run {
            name,
            inputs: flags,
            dry_run,
            run,
        } => {
            if dry_run {
                return commands::dry_run(&project, &name, &run);
            }
            match commands::inputs_from_flags(&flags) {
                Ok(i) => commands::run_pipeline(&project, &name, i, &run).await,
                Err(o) => o,
            }
        }
        Command::Validate { names } => commands::validate(&project, &names),
        Command::Graph { name, format } => commands::graph(&project, &name, &format),
        Command::Eject { force } => commands::eject::eject(&project, force),
        Command::Providers {
            command: ProvidersCommand::Check,
        } => commands::providers::providers_check(&project).await,
        Command::Mcp { .. } => unreachable!("served before the project is opened"),
    }
}

/// `mcp`: the server opens the project on every call, so it starts even
/// while the project's config is broken (each call then reports why).
async fn serve_mcp(cli: &Cli, http: Option<&str>) -> Outcome {
    let options = mcp_server::ServerOptions {
        root: cli.project.clone(),
        provider: cli.provider,
        model: cli.model.clone(),
    };
    let served = match http {
        None => mcp_server::serve_stdio(options).await,
        Some(addr) => match mcp_server::parse_addr(addr) {
            Ok(addr) => mcp_server::serve_http(options, addr).await,
            Err(e) => return Outcome::invalid(e),
        },
    };
    match served {
        Ok(()) => Outcome::ok(),
        Err(e) => Outcome::failed(format!("unity-assets mcp: {e}")),
    }
}

/// Logs go to stderr: warnings by default, `-v` stage spans, `-vv` all;
/// `RUST_LOG` wins. Colour only on a terminal and without `NO_COLOR`.
fn init_tracing(verbose: u8, quiet: bool) {
    use tracing_subscriber::EnvFilter;
    let level = match (quiet, verbose) {
        (true, _) => "error",
        (false, 0) => "warn",
        (false, 1) => "info,engine=debug",
        (false, _) => "debug",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(use_color())
        .with_target(false)
        .without_time()
        .init();
}

fn use_color() -> bool {
    std::env::var_os("NO_COLOR").is_none() && std::io::stderr().is_terminal()
}

fn paint_error(msg: &str) -> String {
    if use_color() {
        msg.replace(": error:", ": \x1b[1;31merror\x1b[0m:")
            .replace("\n  help:", "\n  \x1b[1;36mhelp\x1b[0m:")
    } else {
        msg.to_owned()
    }
}
