//! `unity-assets`: natural-language asset search and scene building for
//! Unity projects, every step a declarative pipeline run by `engine`.

use clap::{CommandFactory, Parser};

use unity_assets::cli::{Cli, Command, ProvidersCommand, Shell};
use unity_assets::commands;
use unity_assets::exit::Outcome;
use unity_assets::invocation::{self, Invocation};
use unity_assets::project::{Opener, Project};
use unity_assets::{color, exit, mcp_server};

/// Search and index move many small JSON values between stages; mimalloc
/// keeps that allocation cheap across threads (glibc's malloc was a fifth
/// of a search's time).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    without_huge_pages();
    return_freed_memory_soon();
    let cli = Cli::parse();
    color::init(cli.color.forced());
    init_tracing(cli.verbose, cli.quiet);
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            std::process::exit(exit::FAILED);
        }
    };
    // A step an error suggests names the project the command was on.
    let rewrite = cli.project.as_deref().and_then(unity_assets::runnable::rewrite_for);
    let outcome = runtime.block_on(dispatch(cli));
    if let Some(msg) = &outcome.message {
        let msg = rewrite.as_ref().map_or_else(|| msg.clone(), |r| r(msg));
        eprintln!("{}", paint_error(&msg));
    }
    // Let blocking tasks of a cancelled run finish their cleanup briefly.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    std::process::exit(outcome.code);
}

/// mimalloc asks for transparent huge pages on its arenas, and the kernel
/// then zeroes 2 MiB wherever a thread first touches one: an index of
/// FPSSample spent half its CPU time clearing pages and peaked at twice the
/// memory it uses. Small pages it is, for this process and its children.
fn without_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes plain integers and touches no memory of ours.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

/// mimalloc keeps freed memory for a second before giving it back: when an
/// index stage of 10^6 assets ended, its gigabyte stayed while the next
/// stage read `assets.jsonl`, and the peak grew by that much (3.25 GB;
/// 2.88 GB when it goes back after 10 ms).
fn return_freed_memory_soon() {
    /// `mi_option_purge_delay` in mimalloc.h's option enum (milliseconds).
    const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
    // SAFETY: sets a plain option before any other thread exists.
    unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, 10) }
}

async fn dispatch(cli: Cli) -> Outcome {
    let model = cli.command.model();
    let provider = model.provider.map(Into::into);
    match &cli.command {
        Command::Completions { shell } => return completions(*shell),
        Command::Man => return man_page(),
        Command::Model { command } => return commands::model::command(command, cli.quiet).await,
        // The server opens the project on every call, so it starts even
        // while the project's config is broken (each call then says why).
        Command::Mcp { http, watch, .. } => {
            let options = mcp_server::ServerOptions {
                root: cli.project.clone(),
                provider,
                model: model.model.clone(),
                trust: cli.trust,
            };
            let watcher = match (
                watch,
                cli.project.clone().map_or_else(mcp_server::project_before_any_call, Ok),
            ) {
                (false, _) => None,
                (true, Ok(root)) => Some(tokio::spawn(commands::watch::beside_mcp(
                    root,
                    provider,
                    model.model.clone(),
                    cli.trust,
                ))),
                (true, Err(why)) => {
                    eprintln!("[unity-assets:mcp] --watch: {why}");
                    None
                }
            };
            let served = serve_mcp(options, http.as_deref()).await;
            watcher.inspect(tokio::task::JoinHandle::abort);
            return served;
        }
        _ => {}
    }
    // The pipeline runs: one typed invocation, as the MCP server runs its tools.
    let invocation = match Invocation::from_command(&cli.command) {
        Some(Ok(invocation)) => Some(invocation),
        Some(Err(message)) => return Outcome::invalid(message),
        None => None,
    };
    // Doctor runs on a missing folder or a broken config, to report them.
    let open: Opener = invocation.as_ref().map_or(Project::open, |(i, _)| i.opener());
    // Without --project: the current folder, or the project it is in (as the MCP server finds it).
    let project_dir = cli.project.clone().unwrap_or_else(|| {
        let here = std::path::Path::new(".");
        match std::env::current_dir() {
            Ok(cwd) if !here.join("Assets").is_dir() => {
                unity_assets::project::enclosing(&cwd).unwrap_or_else(|| here.into())
            }
            _ => here.into(),
        }
    });
    let mut project = match open(&project_dir, provider, model.model.as_deref()) {
        Ok(p) => p,
        Err(d) => return Outcome::invalid(d),
    };
    project.quiet = cli.quiet;
    if let Some((invocation, run)) = invocation {
        if matches!(cli.command, Command::Index { watch: true, .. }) {
            return commands::watch::index_watch(&project, &invocation, cli.trust, run).await;
        }
        return commands::run_pipeline(&project, &invocation, cli.trust, run).await;
    }
    // The other commands that use the project's providers pass the same trust check.
    let uses_project = matches!(cli.command, Command::Eval { .. } | Command::Providers { .. });
    let gate = unity_assets::trust::Gate::check(&project.root, &project.resources, &project.registry, None, cli.trust);
    if let Some(refusal) = gate.refusal(&project.root).filter(|_| uses_project) {
        return Outcome {
            code: exit::UNTRUSTED,
            message: Some(refusal),
        };
    }
    match cli.command {
        Command::Eval {
            golden,
            name_lookup,
            json,
            retrievers,
            features,
            ..
        } => match (golden, name_lookup) {
            (_, Some(n)) => commands::eval::name_lookup(&project, n, json).await,
            (Some(golden), None) => {
                commands::eval::command(&project, &golden, json, retrievers, features.as_deref()).await
            }
            (None, None) => Outcome::invalid("eval needs a query set or --name-lookup N".to_owned()),
        },
        Command::Run {
            name,
            inputs: flags,
            run,
            ..
        } => match invocation::inputs_from_flags(&flags) {
            Ok(i) => commands::dry_run(&project, &name, i, &run),
            Err(message) => Outcome::invalid(message),
        },
        Command::Validate { names } => commands::validate(&project, &names),
        Command::Graph { name, format } => commands::graph(&project, &name, &format),
        Command::Eject { force } => commands::eject::eject(&project, force),
        Command::Trust { show, revoke } => {
            match unity_assets::trust::command(&project.root, &project.resources, &project.registry, show, revoke) {
                Ok(text) => {
                    unity_assets::outln!("{text}");
                    Outcome::ok()
                }
                Err(e) => Outcome::failed(format!("trust: {e}")),
            }
        }
        Command::Providers {
            command: ProvidersCommand::Check { .. },
        } => commands::providers::providers_check(&project).await,
        Command::Completions { .. }
        | Command::Man
        | Command::Model { .. }
        | Command::Mcp { .. }
        | Command::Search { .. }
        | Command::WebSearch { .. }
        | Command::Pick { .. }
        | Command::Refs(_)
        | Command::Deps(_)
        | Command::Unused { .. }
        | Command::Build { .. }
        | Command::Index { .. }
        | Command::Reindex { .. }
        | Command::Doctor { .. } => unreachable!("handled before"),
    }
}

async fn serve_mcp(options: mcp_server::ServerOptions, http: Option<&str>) -> Outcome {
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

fn completions(shell: Shell) -> Outcome {
    use clap_complete::{generate, shells};
    let mut command = Cli::command();
    let mut script = Vec::new();
    match shell {
        Shell::Bash => generate(shells::Bash, &mut command, "unity-assets", &mut script),
        Shell::Zsh => generate(shells::Zsh, &mut command, "unity-assets", &mut script),
        Shell::Fish => generate(shells::Fish, &mut command, "unity-assets", &mut script),
        Shell::Powershell => generate(shells::PowerShell, &mut command, "unity-assets", &mut script),
        Shell::Elvish => generate(shells::Elvish, &mut command, "unity-assets", &mut script),
    }
    print_bytes(&script)
}

fn man_page() -> Outcome {
    let mut page = Vec::new();
    match clap_mangen::Man::new(Cli::command()).render(&mut page) {
        Ok(()) => print_bytes(&page),
        Err(e) => Outcome::failed(format!("cannot render the manual page: {e}")),
    }
}

/// Generated text to stdout; a reader that stopped early (`| head`) is fine.
fn print_bytes(bytes: &[u8]) -> Outcome {
    use std::io::Write;
    match std::io::stdout().lock().write_all(bytes) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Outcome::failed(format!("cannot write to stdout: {e}")),
        _ => Outcome::ok(),
    }
}

/// Logs go to stderr: warnings by default, `-v` stage spans, `-vv` all;
/// `RUST_LOG` wins.
fn init_tracing(verbose: u8, quiet: bool) {
    use tracing_subscriber::EnvFilter;
    let level = match (quiet, verbose) {
        (true, _) => "error",
        // `notify` warns of watches it lost to a removed folder, which
        // `index --watch` sets again itself.
        (false, 0) => "warn,notify=error",
        (false, 1) => "info,engine=debug,notify=error",
        (false, _) => "debug",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(color::enabled())
        .with_target(false)
        .without_time()
        .init();
}

fn paint_error(msg: &str) -> String {
    if color::enabled() {
        msg.replace(": error:", ": \x1b[1;31merror\x1b[0m:")
            .replace("\n  help:", "\n  \x1b[1;36mhelp\x1b[0m:")
    } else {
        msg.to_owned()
    }
}
