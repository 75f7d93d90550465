//! YAML values with minijinja inside, compiled once and evaluated per run.
//!
//! A string that is exactly one `{{ expr }}` evaluates to the expression's
//! *value* (a list stays a list); any other string with `{{`/`{%` renders to
//! a string; maps and lists are evaluated element by element. Plain dotted
//! lookups (`{{ route.sub_intents }}`) skip minijinja and read the JSON
//! directly, so passing large stage outputs around costs one clone.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use minijinja::value::Serde;
use minijinja::Environment;
use serde_json::Value;

use crate::args::Args;
use crate::Product;

/// A compiled templated value.
#[derive(Debug, Clone)]
pub(crate) enum Tmpl {
    /// A value with no template in it, kept as is.
    Literal(Value),
    /// A whole-string `{{ expr }}`; `path` is set when it is a plain dotted lookup.
    Expr {
        /// The expression, without its braces.
        source: String,
        /// The dotted path, when the expression is a plain lookup.
        path: Option<Vec<String>>,
    },
    /// A string template rendered to text.
    Text(String),
    /// A list whose items may be templated.
    List(Vec<Tmpl>),
    /// A map whose values may be templated, in written order.
    Map(Vec<(String, Tmpl)>),
}

/// A syntax error in one templated string, with its place in the YAML value.
#[derive(Debug)]
pub(crate) struct TemplateError {
    /// Dotted path below the compiled value (`with.query`).
    pub path: String,
    /// What the template engine reported.
    pub message: String,
}

/// The environment every pipeline template is evaluated in: strict about
/// undefined names so a typo fails loudly instead of rendering empty, its
/// work bounded by the default `limits.template_fuel` (the compiler sets the
/// configured one), and its `range` loops stopped by a cancelled run.
pub fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    env.set_fuel(Some(crate::io::Limits::default().template_fuel));
    env.add_function("range", cancellable_range);
    env.add_filter("shell_word", |text: String| shell_word(&text));
    // Prompt files read best with block tags on their own lines.
    if let Ok(syntax) = minijinja::syntax::SyntaxConfig::builder()
        .trim_blocks(true)
        .lstrip_blocks(true)
        .build()
    {
        env.set_syntax(syntax);
    }
    env
}

/// `text` as one word of a POSIX shell line: as it is when that is safe,
/// else in single quotes (the `shell_word` filter, for commands a line
/// suggests: `my-tool build {{ request | shell_word }}`).
pub fn shell_word(text: &str) -> String {
    let plain = |c: char| c.is_alphanumeric() || "_-./:=@%+,".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        return text.to_owned();
    }
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// minijinja's `range`, refused once the run rendering it is cancelled: a
/// nested loop makes a new range for every outer item, so Ctrl+C stops it
/// within one inner loop instead of after the whole render.
fn cancellable_range(
    lower: isize,
    upper: Option<isize>,
    step: Option<isize>,
) -> Result<minijinja::Value, minijinja::Error> {
    if crate::cancel::current_is_cancelled() {
        return Err(minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, CANCELLED));
    }
    minijinja::functions::range(lower, upper, step)
}

/// The error of a render stopped by a cancelled run.
const CANCELLED: &str = "the run was cancelled";

/// The message of a template that did more work than its fuel allows,
/// naming where `product` sets the limit.
fn out_of_fuel(product: &Product) -> String {
    format!(
        "the template did more work than `limits.template_fuel` allows (a loop that never ends?); raise the \
         limit in {} if the template is genuine",
        product.settings
    )
}

/// A prompt template rendered into the parts providers send apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompt {
    /// Instructions (the template's `system` block).
    pub system: Option<String>,
    /// The large block shared by calls of one stage, sent first for caching.
    pub cached: Option<String>,
    /// The per-call message (the `user` block, or the whole render).
    pub user: String,
}

/// Render prompt `name` of `env` with `ctx` into its `system`, `cached` and
/// `user` blocks (each trimmed; empty ones are absent). A template without
/// blocks is all `user`. A render over its fuel names where `product` sets it.
pub(crate) fn render_prompt(
    env: &Environment<'static>,
    name: &str,
    ctx: std::collections::BTreeMap<String, minijinja::Value>,
    product: &Product,
) -> Result<Prompt, String> {
    let template = env.get_template(name).map_err(|e| e.to_string())?;
    let mut captured = template
        .render_captured(minijinja::Value::from(ctx))
        .map_err(|e| match e.kind() {
            minijinja::ErrorKind::OutOfFuel => format!("prompt {name}: {}", out_of_fuel(product)),
            _ => format!("prompt {name}: {e}"),
        })?;
    let whole = captured.output().to_owned();
    let mut block = |block: &str| {
        captured
            .with_state_mut(|s| s.render_block(block))
            .ok()
            .map(|t| t.trim().to_owned())
            .filter(|t| !t.is_empty())
    };
    let system = block("system");
    let cached = block("cached");
    match block("user") {
        Some(user) => Ok(Prompt { system, cached, user }),
        None if system.is_none() && cached.is_none() => Ok(Prompt {
            system: None,
            cached: None,
            user: whole.trim().to_owned(),
        }),
        None => Err(format!("prompt {name} defines blocks but no `user` block")),
    }
}

/// `render_prompt` with the variables as one JSON object, for callers
/// (tests, tools) that hold plain JSON; run for no product.
pub fn render_prompt_json(env: &Environment<'static>, name: &str, vars: Value) -> Result<Prompt, String> {
    let ctx = match vars {
        Value::Object(map) => map.into_iter().map(|(k, v)| (k, json_view(Arc::new(v)))).collect(),
        _ => Default::default(),
    };
    render_prompt(env, name, ctx, &Product::NEUTRAL)
}

impl Tmpl {
    /// Compile `value`, reporting every syntax error found below it.
    pub fn compile(env: &Environment<'static>, value: &Value, errors: &mut Vec<TemplateError>) -> Tmpl {
        compile_at(env, value, "", errors)
    }

    /// Every variable path this value reads (`inputs.query`, `route`), with
    /// the dotted place inside the value where it is read.
    pub fn references(&self, env: &Environment<'static>) -> Vec<(String, String)> {
        let mut out = Vec::new();
        self.collect_refs(env, "", &mut out);
        out
    }

    fn collect_refs(&self, env: &Environment<'static>, at: &str, out: &mut Vec<(String, String)>) {
        match self {
            Tmpl::Literal(_) => {}
            Tmpl::Expr { source, path } => match path {
                Some(p) => out.push((p.join("."), at.to_owned())),
                None => {
                    if let Ok(expr) = env.compile_expression(source) {
                        out.extend(
                            sorted(expr.undeclared_variables(true))
                                .into_iter()
                                .map(|v| (v, at.to_owned())),
                        );
                    }
                }
            },
            Tmpl::Text(source) => {
                if let Ok(t) = env.template_from_str(source) {
                    out.extend(
                        sorted(t.undeclared_variables(true))
                            .into_iter()
                            .map(|v| (v, at.to_owned())),
                    );
                }
            }
            Tmpl::List(items) => {
                for (i, t) in items.iter().enumerate() {
                    t.collect_refs(env, &join(at, &i.to_string()), out);
                }
            }
            Tmpl::Map(entries) => {
                for (k, t) in entries {
                    t.collect_refs(env, &join(at, k), out);
                }
            }
        }
    }

    /// Evaluate against a scope; a render its run cancels stops early and
    /// fails.
    pub fn eval(&self, env: &Environment<'static>, scope: &Scope) -> Result<Value, String> {
        cancellable(scope, || self.eval_entered(env, scope))
    }

    fn eval_entered(&self, env: &Environment<'static>, scope: &Scope) -> Result<Value, String> {
        match self {
            Tmpl::Literal(v) => Ok(v.clone()),
            Tmpl::Expr { source, path } => {
                if let Some(path) = path {
                    if let Some(v) = scope.lookup(path) {
                        return Ok(v);
                    }
                }
                let expr = env.compile_expression(source).map_err(|e| scope.describe(&e))?;
                let value = expr
                    .eval(scope.context(&expr.undeclared_variables(false)))
                    .map_err(|e| scope.describe(&e))?;
                to_json(&value)
            }
            Tmpl::Text(source) => {
                let t = env.template_from_str(source).map_err(|e| scope.describe(&e))?;
                let ctx = scope.context(&t.undeclared_variables(false));
                t.render(ctx).map(Value::String).map_err(|e| scope.describe(&e))
            }
            Tmpl::List(items) => items
                .iter()
                .map(|t| t.eval_entered(env, scope))
                .collect::<Result<_, _>>()
                .map(Value::Array),
            Tmpl::Map(entries) => {
                let mut map = serde_json::Map::with_capacity(entries.len());
                for (k, t) in entries {
                    map.insert(k.clone(), t.eval_entered(env, scope)?);
                }
                Ok(Value::Object(map))
            }
        }
    }

    /// Evaluate for a native function's arguments: a value read whole from
    /// a variable (`{{ scan }}`, `{{ inputs.batch.assets }}`) is shared, not
    /// copied ([`Args`]).
    pub fn eval_args(&self, env: &Environment<'static>, scope: &Scope) -> Result<Args, String> {
        cancellable(scope, || self.args_entered(env, scope))
    }

    fn args_entered(&self, env: &Environment<'static>, scope: &Scope) -> Result<Args, String> {
        match self {
            Tmpl::Expr { path: Some(path), .. } => match scope.shared(path) {
                Some(shared) => Ok(shared),
                None => self.eval_entered(env, scope).map(Args::Value),
            },
            Tmpl::List(items) => items
                .iter()
                .map(|t| t.args_entered(env, scope))
                .collect::<Result<_, _>>()
                .map(Args::List),
            Tmpl::Map(entries) => entries
                .iter()
                .map(|(k, t)| Ok((k.clone(), t.args_entered(env, scope)?)))
                .collect::<Result<_, String>>()
                .map(Args::Map),
            _ => self.eval_entered(env, scope).map(Args::Value),
        }
    }

    /// Evaluate a condition: JSON truthiness (null, false, 0, "", [] and {} are false).
    pub fn eval_bool(&self, env: &Environment<'static>, scope: &Scope) -> Result<bool, String> {
        Ok(truthy(&self.eval(env, scope)?))
    }
}

/// JSON truthiness: null, false, 0, "", [] and {} are false.
pub(crate) fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty() && s != "false",
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

fn sorted(set: std::collections::HashSet<String>) -> Vec<String> {
    let mut v: Vec<_> = set.into_iter().collect();
    v.sort();
    v
}

/// Run `render` inside the scope's cancellation: a render the run cancels
/// stops early and fails.
fn cancellable<T>(scope: &Scope, render: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    let _entered = scope.cancel.enter();
    let rendered = render();
    if scope.cancel.is_cancelled() {
        return Err(CANCELLED.to_owned());
    }
    rendered
}

/// A template error as a message; running out of fuel names the setting
/// (and where `product` sets it).
fn describe_for(e: &minijinja::Error, product: &Product) -> String {
    if e.kind() == minijinja::ErrorKind::OutOfFuel {
        return out_of_fuel(product);
    }
    describe(e)
}

/// A template error as a message: its kind and detail.
fn describe(e: &minijinja::Error) -> String {
    let mut msg = e.kind().to_string();
    if let Some(detail) = e.detail() {
        msg.push_str(": ");
        msg.push_str(detail);
    }
    msg
}

fn to_json(v: &minijinja::Value) -> Result<Value, String> {
    if v.is_undefined() {
        return Ok(Value::Null);
    }
    serde_json::to_value(v).map_err(|e| format!("expression result is not JSON: {e}"))
}

fn join(base: &str, part: &str) -> String {
    if base.is_empty() {
        part.to_owned()
    } else {
        format!("{base}.{part}")
    }
}

fn compile_at(env: &Environment<'static>, value: &Value, at: &str, errors: &mut Vec<TemplateError>) -> Tmpl {
    match value {
        Value::String(s) if s.contains("{{") || s.contains("{%") => {
            if let Some(expr) = whole_expression(s) {
                match env.compile_expression(expr) {
                    Ok(_) => Tmpl::Expr {
                        source: expr.to_owned(),
                        path: dotted_path(expr),
                    },
                    Err(e) => {
                        errors.push(TemplateError {
                            path: at.to_owned(),
                            message: describe(&e),
                        });
                        Tmpl::Literal(Value::Null)
                    }
                }
            } else {
                match env.template_from_str(s) {
                    Ok(_) => Tmpl::Text(s.clone()),
                    Err(e) => {
                        errors.push(TemplateError {
                            path: at.to_owned(),
                            message: describe(&e),
                        });
                        Tmpl::Literal(Value::Null)
                    }
                }
            }
        }
        Value::Array(items) if contains_template(value) => Tmpl::List(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| compile_at(env, v, &join(at, &i.to_string()), errors))
                .collect(),
        ),
        Value::Object(map) if contains_template(value) => Tmpl::Map(
            map.iter()
                .map(|(k, v)| (k.clone(), compile_at(env, v, &join(at, k), errors)))
                .collect(),
        ),
        other => Tmpl::Literal(other.clone()),
    }
}

fn contains_template(v: &Value) -> bool {
    match v {
        Value::String(s) => s.contains("{{") || s.contains("{%"),
        Value::Array(a) => a.iter().any(contains_template),
        Value::Object(o) => o.values().any(contains_template),
        _ => false,
    }
}

/// `"{{ a.b }}"` → `Some("a.b")`; anything with text around it → None.
fn whole_expression(s: &str) -> Option<&str> {
    let t = s.trim();
    let inner = t.strip_prefix("{{")?.strip_suffix("}}")?;
    if inner.contains("{{") || inner.contains("}}") || inner.contains("{%") {
        return None;
    }
    Some(inner.trim())
}

/// `a.b.c` (identifiers only) → its segments.
fn dotted_path(expr: &str) -> Option<Vec<String>> {
    let parts: Vec<String> = expr.split('.').map(str::to_owned).collect();
    let ident = |p: &String| {
        let mut c = p.chars();
        c.next().is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
            && c.all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    parts.iter().all(ident).then_some(parts)
}

/// The variables a template can see, by root name, and the cancel flag
/// and product of the run evaluating it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Scope {
    roots: HashMap<String, Arc<Value>>,
    cancel: crate::cancel::Cancel,
    product: Product,
}

impl Scope {
    /// An empty scope of a run for `product` that `cancel` stops.
    pub fn of_run(cancel: crate::cancel::Cancel, product: Product) -> Self {
        Self {
            roots: HashMap::new(),
            cancel,
            product,
        }
    }

    /// A template error met evaluating in this scope, as a message.
    fn describe(&self, e: &minijinja::Error) -> String {
        describe_for(e, &self.product)
    }

    /// Set the variable `name`, replacing any of that name.
    pub fn set(&mut self, name: impl Into<String>, value: Arc<Value>) {
        self.roots.insert(name.into(), value);
    }

    /// A copy with one more variable (loop variables).
    pub fn with(&self, name: &str, value: Arc<Value>) -> Scope {
        let mut s = self.clone();
        s.set(name, value);
        s
    }

    /// The variable `name`, if set.
    pub fn get(&self, name: &str) -> Option<&Arc<Value>> {
        self.roots.get(name)
    }

    /// A dotted lookup; None when any segment is missing (then the caller
    /// falls back to minijinja, which produces the proper undefined error).
    fn lookup(&self, path: &[String]) -> Option<Value> {
        let mut v: &Value = self.roots.get(path.first()?)?;
        for seg in &path[1..] {
            v = match v {
                Value::Object(m) => m.get(seg)?,
                _ => return None,
            };
        }
        Some(v.clone())
    }

    /// [`Scope::lookup`] without the copy: the root and the path.
    fn shared(&self, path: &[String]) -> Option<Args> {
        let root = self.roots.get(path.first()?)?;
        let rest = &path[1..];
        rest.iter().try_fold(&**root, |v, seg| v.as_object()?.get(seg))?;
        Some(Args::Shared {
            root: Arc::clone(root),
            path: rest.to_vec(),
        })
    }

    /// A minijinja context holding only the roots a template reads, each a
    /// lazy view: only what the template touches is converted.
    fn context(&self, names: &std::collections::HashSet<String>) -> minijinja::Value {
        let map: BTreeMap<String, minijinja::Value> = names
            .iter()
            .filter_map(|n| self.roots.get(n).map(|v| (n.clone(), json_view(Arc::clone(v)))))
            .collect();
        minijinja::Value::from(map)
    }
}

/// A JSON value as minijinja sees it, without converting it: maps and lists
/// stay views of a shared root, scalars convert when read, so
/// `{{ inputs.flag }}` costs nothing however large the rest of `inputs` is.
pub fn json_view(root: Arc<Value>) -> minijinja::Value {
    JsonView::wrap(root, Vec::new())
}

#[derive(Debug)]
struct JsonView {
    root: Arc<Value>,
    path: Vec<PathSegment>,
}

#[derive(Debug, Clone)]
enum PathSegment {
    Key(String),
    Index(usize),
}

impl JsonView {
    fn wrap(root: Arc<Value>, path: Vec<PathSegment>) -> minijinja::Value {
        match Self::resolve(&root, &path) {
            Some(Value::Object(_) | Value::Array(_)) => minijinja::Value::from_object(JsonView { root, path }),
            Some(scalar) => minijinja::Value::from(Serde(scalar)),
            None => minijinja::Value::UNDEFINED,
        }
    }

    fn resolve<'a>(root: &'a Value, path: &[PathSegment]) -> Option<&'a Value> {
        path.iter().try_fold(root, |v, seg| match seg {
            PathSegment::Key(k) => v.as_object()?.get(k),
            PathSegment::Index(i) => v.as_array()?.get(*i),
        })
    }

    fn node(&self) -> &Value {
        Self::resolve(&self.root, &self.path).unwrap_or(&Value::Null)
    }

    fn child(&self, seg: PathSegment) -> minijinja::Value {
        let mut path = self.path.clone();
        path.push(seg);
        Self::wrap(Arc::clone(&self.root), path)
    }
}

impl minijinja::value::Object for JsonView {
    fn repr(self: &Arc<Self>) -> minijinja::value::ObjectRepr {
        match self.node() {
            Value::Array(_) => minijinja::value::ObjectRepr::Seq,
            _ => minijinja::value::ObjectRepr::Map,
        }
    }

    fn get_value(self: &Arc<Self>, key: &minijinja::Value) -> Option<minijinja::Value> {
        match self.node() {
            Value::Object(m) => {
                let k = key.as_str()?;
                m.contains_key(k).then(|| self.child(PathSegment::Key(k.to_owned())))
            }
            Value::Array(a) => {
                let i = key.as_i64()?;
                let i = if i < 0 {
                    a.len().checked_sub(i.unsigned_abs() as usize)?
                } else {
                    i as usize
                };
                (i < a.len()).then(|| self.child(PathSegment::Index(i)))
            }
            _ => None,
        }
    }

    fn enumerate(self: &Arc<Self>) -> minijinja::value::Enumerator {
        match self.node() {
            Value::Object(m) => {
                minijinja::value::Enumerator::Values(m.keys().map(|k| minijinja::Value::from(k.as_str())).collect())
            }
            // A loop over a list ends early once the run is cancelled.
            Value::Array(_) if crate::cancel::current_is_cancelled() => minijinja::value::Enumerator::Empty,
            Value::Array(a) => minijinja::value::Enumerator::Seq(a.len()),
            _ => minijinja::value::Enumerator::Empty,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(shell_word("examples/zombie-survival"), "examples/zombie-survival");
        assert_eq!(shell_word("좀비"), "좀비");
        assert_eq!(shell_word("좀비 서바이벌"), "'좀비 서바이벌'");
        assert_eq!(shell_word("it's $HOME"), r"'it'\''s $HOME'");
        assert_eq!(shell_word(""), "''");
        let env = environment();
        let line = env.render_str("build {{ r | shell_word }}", minijinja::context! {r => "a b"});
        assert_eq!(line.unwrap(), "build 'a b'");
    }

    fn eval(v: Value, scope: &Scope) -> Value {
        let env = environment();
        let mut errs = vec![];
        let t = Tmpl::compile(&env, &v, &mut errs);
        assert!(errs.is_empty(), "{errs:?}");
        t.eval(&env, scope).unwrap()
    }

    #[test]
    fn whole_expressions_keep_their_type() {
        let mut s = Scope::default();
        s.set("route", Arc::new(json!({"sub_intents": [1, 2]})));
        assert_eq!(eval(json!("{{ route.sub_intents }}"), &s), json!([1, 2]));
        assert_eq!(eval(json!("{{ route.sub_intents | length > 1 }}"), &s), json!(true));
        assert_eq!(eval(json!("n={{ route.sub_intents | length }}"), &s), json!("n=2"));
        assert_eq!(
            eval(json!({"a": ["{{ route.sub_intents[0] }}", 3]}), &s),
            json!({"a": [1, 3]})
        );
    }

    #[test]
    fn reports_syntax_errors_by_path() {
        let env = environment();
        let mut errs = vec![];
        Tmpl::compile(&env, &json!({"a": {"b": "{{ x | }}"}}), &mut errs);
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].path, "a.b");
    }

    #[test]
    fn collects_references() {
        let env = environment();
        let mut errs = vec![];
        let t = Tmpl::compile(
            &env,
            &json!({"q": "{{ inputs.query }}", "n": "{% if route.ok %}{{ params.k }}{% endif %}"}),
            &mut errs,
        );
        let mut paths: Vec<(String, String)> = t.references(&env);
        paths.sort();
        assert_eq!(
            paths,
            [("inputs.query", "q"), ("params.k", "n"), ("route.ok", "n")].map(|(p, at)| (p.to_owned(), at.to_owned()))
        );
    }

    /// Nested loops of 10⁸ iterations: minutes of one core without a bound.
    const SPIN: &str = "{% for i in range(10000) %}{% for j in range(10000) %}{% endfor %}{% endfor %}done";

    #[test]
    fn a_loop_that_does_not_end_runs_out_of_fuel_naming_the_key() {
        let mut env = environment();
        env.set_fuel(Some(100_000));
        let mut errs = vec![];
        let t = Tmpl::compile(&env, &json!(SPIN), &mut errs);
        let err = t.eval(&env, &Scope::default()).unwrap_err();
        assert!(err.contains("limits.template_fuel"), "{err}");
        assert!(err.contains("raise the limit in the settings file"), "{err}");
        let acme = Scope::of_run(crate::cancel::Cancel::new(), Product::new("acme", ".acme/settings.yml"));
        let err = t.eval(&env, &acme).unwrap_err();
        assert!(
            err.contains("raise the limit in .acme/settings.yml if the template"),
            "{err}"
        );
    }

    #[test]
    fn a_cancelled_run_stops_range_and_list_loops_inside_a_render() {
        // Fuel enough for minutes: only the cancel can end these in time.
        let mut env = environment();
        env.set_fuel(Some(10_000_000_000));
        let cancel = crate::cancel::Cancel::new();
        let mut scope = Scope::of_run(cancel.clone(), Product::NEUTRAL);
        scope.set("rows", Arc::new(json!((0..10_000).collect::<Vec<_>>())));
        let nested_lists = "{% for a in rows %}{% for b in rows %}{% endfor %}{% endfor %}done";
        for source in [SPIN, nested_lists] {
            let mut errs = vec![];
            let t = Tmpl::compile(&env, &json!(source), &mut errs);
            let stopper = cancel.clone();
            let started = std::time::Instant::now();
            let result = std::thread::scope(|s| {
                s.spawn(move || {
                    std::thread::sleep(std::time::Duration::from_millis(100));
                    stopper.cancel();
                });
                t.eval(&env, &scope)
            });
            assert_eq!(result.unwrap_err(), CANCELLED, "{source}");
            // Well under the default fuel's run time (seconds): stopped by the flag.
            assert!(
                started.elapsed() < std::time::Duration::from_secs(5),
                "{source}: {:?}",
                started.elapsed()
            );
        }
    }
}
