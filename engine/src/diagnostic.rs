//! Compile errors that point at `file:line:col` and suggest a fix.

use std::fmt;

/// One problem found in a pipeline, template, schema or config file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Diagnostic {
    pub file: String,
    pub line: usize,
    pub col: usize,
    pub message: String,
    /// How to fix it; a "did you mean" for misspelt names.
    pub help: Option<String>,
}

impl Diagnostic {
    pub fn new(file: impl Into<String>, (line, col): (usize, usize), message: impl Into<String>) -> Self {
        Self {
            file: file.into(),
            line,
            col,
            message: message.into(),
            help: None,
        }
    }

    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
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
        write!(f, "{}:{}:{}: error: {}", self.file, self.line, self.col, self.message)?;
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
    pub fn push(&mut self, d: Diagnostic) {
        self.0.push(d);
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn extend(&mut self, other: Diagnostics) {
        self.0.extend(other.0);
    }
    pub fn sort(&mut self) {
        self.0
            .sort_by(|a, b| (&a.file, a.line, a.col).cmp(&(&b.file, b.line, b.col)));
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
}
