//! The README is the newcomer's front door: short, every link leading
//! somewhere, and every command it shows one the binary accepts, runnable
//! as written from the folder it says.

use std::path::{Path, PathBuf};

use clap::error::ErrorKind;
use clap::Parser;
use unity_assets::cli::Cli;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_readme_stays_a_front_door() {
    let lines = read(&repo().join("README.md")).lines().count();
    assert!(lines <= 300, "README.md has {lines} lines; move details to docs/");
}

/// GitHub's anchor of a heading: lower case, spaces to `-`, punctuation dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The `](target)` links of a Markdown text, outside code.
fn links(text: &str) -> Vec<String> {
    let mut found = vec![];
    let mut in_fence = false;
    for line in text.lines() {
        if line.starts_with("```") {
            in_fence = !in_fence;
        }
        if in_fence {
            continue;
        }
        for piece in line.split("](").skip(1) {
            if let Some(end) = piece.find(')') {
                found.push(piece[..end].to_owned());
            }
        }
    }
    found
}

#[test]
fn every_link_of_the_readme_and_the_docs_leads_somewhere() {
    let mut pages = vec![repo().join("README.md"), repo().join("ARCHITECTURE.md")];
    for entry in std::fs::read_dir(repo().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path);
        }
    }
    for page in &pages {
        for link in links(&read(page)) {
            if link.starts_with("http://") || link.starts_with("https://") {
                continue;
            }
            let (file, fragment) = link.split_once('#').unwrap_or((&link, ""));
            let target = if file.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(file)
            };
            assert!(target.exists(), "{}: {link} leads nowhere", page.display());
            if !fragment.is_empty() {
                let headings: Vec<String> = read(&target)
                    .lines()
                    .filter_map(|l| l.strip_prefix('#'))
                    .map(|h| anchor(h.trim_start_matches('#')))
                    .collect();
                assert!(
                    headings.contains(&fragment.to_owned()),
                    "{}: no heading for {link}",
                    page.display()
                );
            }
        }
    }
}

#[test]
fn every_command_the_readme_shows_is_accepted_and_names_its_project() {
    let readme = read(&repo().join("README.md"));
    let mut seen = 0;
    for shell in test_support::readme::shell_lines(&readme) {
        let (line, after_cd) = (shell.command.as_str(), shell.after_cd);
        let Some(args) = line.strip_prefix("unity-assets ") else {
            continue;
        };
        seen += 1;
        let words: Vec<String> = std::iter::once("unity-assets".to_owned())
            .chain(test_support::readme::split(args))
            .collect();
        if let Err(e) = Cli::try_parse_from(&words) {
            // `--version` and `--help` end the parse by printing, as they should.
            let printed = [ErrorKind::DisplayVersion, ErrorKind::DisplayHelp].contains(&e.kind());
            assert!(printed, "README: `{line}` is not a command the binary accepts:\n{e}");
        }
        // From the repo root (where the README's other lines run), a command
        // without --project works on the repo itself, which is no Unity project
        // (`model` manages a per-user cache and names none).
        let needs_project = !["--version", "--help", "completions", "man", "model"]
            .iter()
            .any(|w| args.starts_with(w));
        assert!(
            !needs_project || after_cd || args.contains("--project "),
            "README: `{line}` runs on the current folder without saying which project"
        );
    }
    assert!(
        seen >= 5,
        "only {seen} commands found: did the README's blocks change shape?"
    );
}
