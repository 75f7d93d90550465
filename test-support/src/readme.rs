//! The README's shell lines, as a newcomer would copy them: tests run them
//! or parse them, so the README cannot drift from what works.

/// One line of a `sh` block: the command (its ` #` comment cut off), the
/// comment, and whether a `cd` came before it in its block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellLine {
    pub command: String,
    pub comment: String,
    pub after_cd: bool,
}

/// Every line of the `sh` blocks of `markdown`, in order.
pub fn shell_lines(markdown: &str) -> Vec<ShellLine> {
    let mut lines = vec![];
    let mut in_block = false;
    let mut moved = false;
    for line in markdown.lines() {
        if line.starts_with("```") {
            in_block = line == "```sh";
            moved = false;
            continue;
        }
        if in_block {
            let (command, comment) = line.split_once(" #").unwrap_or((line, ""));
            let command = command.trim();
            moved |= command.starts_with("cd ");
            lines.push(ShellLine {
                command: command.to_owned(),
                comment: comment.trim().to_owned(),
                after_cd: moved,
            });
        }
    }
    lines
}

/// The `sh` lines of one `## heading` section of `markdown`.
pub fn section_lines(markdown: &str, heading: &str) -> Vec<ShellLine> {
    let start = markdown
        .find(&format!("\n## {heading}\n"))
        .unwrap_or_else(|| panic!("README: no section `## {heading}`"));
    let rest = &markdown[start + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |i| i + 3);
    shell_lines(&rest[..end])
}

/// Shell words: spaces split, double quotes group (the README quotes no other way).
pub fn split(line: &str) -> Vec<String> {
    let mut words = vec![];
    let mut word = String::new();
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ' ' if !quoted => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// A test whose prerequisite (a program, a file) is missing: skipped with
/// the reason printed, except under CI (`CI=true`), which installs every
/// prerequisite, so there a missing one fails the test.
pub fn skip_unless_ci(reason: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("CI=true, yet {reason} (.ci/run installs it)");
    }
    eprintln!("skipped: {reason} (.ci/run installs it)");
}
