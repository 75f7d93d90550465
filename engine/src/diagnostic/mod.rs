//! Compile errors that point at `file:line:col` and suggest a fix, and the
//! [`SourceMap`] those positions are read from.

mod source_map;

use std::fmt;

pub use source_map::SourceMap;

/// 1-based line and column.
pub type Pos = (usize, usize);

/// One problem found in a pipeline, template, schema or config file, or in
/// something that is not a file (a `--set` flag, a pipeline name).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Diagnostic {
    /// The file, or what the problem is about when it is not a file.
    pub file: String,
    /// Where in `file`; `None` when no real position exists (a flag, a name,
    /// a whole file), so none is made up.
    pub at: Option<Pos>,
    /// What is wrong.
    pub message: String,
    /// How to fix it; a "did you mean" for misspelt names.
    pub help: Option<String>,
}

impl Diagnostic {
    /// `at`: a position, or `None` (see [`Diagnostic::at`]).
    pub fn new(file: impl Into<String>, at: impl Into<Option<Pos>>, message: impl Into<String>) -> Self {
        Self {
            file: file.into(),
            at: at.into(),
            message: message.into(),
            help: None,
        }
    }

    /// A problem about `what` as a whole: a flag (`--set key`), a name, a file.
    pub fn about(what: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(what, None, message)
    }

    /// Add how to fix it.
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// `help` unless the diagnostic already says how to fix it.
    pub fn help_if_none(self, help: impl Into<String>) -> Self {
        if self.help.is_some() {
            self
        } else {
            self.help(help)
        }
    }

    /// Adds "did you mean `x`?" when a candidate is close to `name`.
    pub fn suggest<'a>(self, name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Self {
        match did_you_mean(name, candidates) {
            Some(best) => self.help(format!("did you mean `{best}`?")),
            None => self,
        }
    }

    /// "did you mean `x`?" when a candidate is close, else the whole (short) list.
    pub fn suggest_or_list(self, name: &str, candidates: &[&str]) -> Self {
        match did_you_mean(name, candidates.iter().copied()) {
            Some(best) => self.help(format!("did you mean `{best}`?")),
            None => self.help(format!("expected one of: {}", candidates.join(", "))),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.at {
            Some((line, col)) => write!(f, "{}:{line}:{col}: error: {}", self.file, self.message)?,
            None => write!(f, "{}: error: {}", self.file, self.message)?,
        }
        if let Some(help) = &self.help {
            write!(f, "\n  help: {help}")?;
        }
        Ok(())
    }
}

/// Every problem found in one compile, in file order.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    /// Add one problem.
    pub fn push(&mut self, d: Diagnostic) {
        self.0.push(d);
    }
    /// True when no problem was found.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// How many problems were found.
    pub fn len(&self) -> usize {
        self.0.len()
    }
    /// Add every problem of `other`.
    pub fn extend(&mut self, other: Diagnostics) {
        self.0.extend(other.0);
    }
    /// Put problems in file and position order, dropping exact repeats.
    pub fn sort(&mut self) {
        self.0.sort_by(|a, b| (&a.file, a.at).cmp(&(&b.file, b.at)));
        self.0.dedup();
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for d in &self.0 {
            writeln!(f, "{d}")?;
        }
        let n = self.0.len();
        write!(f, "{n} error{}", if n == 1 { "" } else { "s" })
    }
}

impl std::error::Error for Diagnostics {}

/// The closest candidate to a misspelt name, if it is close enough to help.
pub fn did_you_mean<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(name, c), c))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        assert_eq!(did_you_mean("promt", ["prompt", "builtin"]), Some("prompt"));
        assert_eq!(did_you_mean("zzz", ["prompt", "builtin"]), None);
    }

    #[test]
    fn a_position_is_shown_only_when_there_is_one() {
        assert_eq!(
            Diagnostic::new("a.yaml", (3, 7), "bad").to_string(),
            "a.yaml:3:7: error: bad"
        );
        assert_eq!(
            Diagnostic::about("--set search.asset_top_k", "not an integer").to_string(),
            "--set search.asset_top_k: error: not an integer"
        );
    }
}
