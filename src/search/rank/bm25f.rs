//! BM25F over the fields of a record: one streaming pass tokenises every
//! field and looks each term up in the queries' term table; the coverage
//! of each concept feeds the calibration in [`super`].

use std::collections::HashMap;

use super::super::query::Concept;
use super::super::query::Query;
use super::super::records::{AssetRow, PackageRow};
use super::super::text::{for_each_term, for_each_term_where, Scratch};

/// The fields a record is scored on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// The file's name.
    Name,
    /// The tagger's tags.
    Tags,
    /// Curated and `.meta` labels.
    Labels,
    /// What the file's name says of it (`filename_signals`).
    Signals,
    /// The Unity type and its subtype.
    Type,
    /// The folders of its path.
    Path,
    /// The tagger's one-sentence summary.
    Summary,
    /// What the taxonomy says it is for.
    UseCases,
    /// A package's asset vocabulary (`PackageRow::asset_vocabulary`).
    Contents,
    /// The content facts of an asset (`docs/indexing.md#content-facts`):
    /// what it is made of, evidence weaker than what it is called.
    /// A prefab's or scene's component classes.
    Components,
    /// A ScriptableObject's script class: what kind of data it holds.
    Script,
    /// GameObject names inside a prefab or scene.
    Children,
    /// A material's shader.
    Shader,
    /// The textures a material uses.
    Textures,
    /// An animator controller's states.
    States,
    /// A material's saved properties (rich depth).
    Properties,
}

/// Sixteen at most: a concept's fields are a `u16` mask (`Scored::found_in`).
pub const FIELDS: usize = 16;

impl Field {
    /// BM25F boost, length-normalisation `b`, and coverage credit.
    pub(super) const fn params(self) -> (f32, f32, f32) {
        match self {
            Field::Name => (3.0, 0.3, 1.0),
            Field::Tags => (2.0, 0.3, 1.0),
            Field::Labels => (2.0, 0.3, 1.0),
            Field::Signals => (1.5, 0.3, 0.9),
            Field::Type => (1.5, 0.3, 0.9),
            Field::Path => (1.0, 0.75, 0.7),
            Field::Summary => (1.0, 0.75, 0.85),
            Field::UseCases => (0.8, 0.75, 0.8),
            // Words of some asset inside, not of the package itself: the
            // package holds a match, but a whole package rarely is one.
            Field::Contents => (1.5, 0.3, 0.9),
            // Evidence of what the asset is made of, weaker than what it is
            // called: a script class says what data an asset holds, a
            // component what a prefab does (a `PlayerController`), a state
            // what a controller animates; a child, shader or texture name
            // is one part among many, and a property name is the shader's.
            Field::Script => (1.5, 0.3, 0.85),
            Field::Components => (1.2, 0.5, 0.8),
            Field::States => (1.0, 0.5, 0.8),
            Field::Shader => (0.8, 0.3, 0.7),
            Field::Textures => (0.6, 0.5, 0.7),
            Field::Children => (0.6, 0.75, 0.7),
            Field::Properties => (0.4, 0.5, 0.5),
        }
    }

    pub(super) fn label(self) -> &'static str {
        match self {
            Field::Name => "name",
            Field::Tags => "tags",
            Field::Labels => "labels",
            Field::Signals => "filename signals",
            Field::Type => "type",
            Field::Path => "path",
            Field::Summary => "summary",
            Field::UseCases => "use cases",
            Field::Contents => "its assets",
            Field::Components => "components",
            Field::Script => "script class",
            Field::Children => "child objects",
            Field::Shader => "shader",
            Field::Textures => "textures",
            Field::States => "animator states",
            Field::Properties => "shader properties",
        }
    }

    /// A field naming a part of the asset (a child object, a texture, a
    /// shader property): a match says the asset holds the thing, not that
    /// it is one — a spawner with an `Imp` child is no imp.
    pub(super) fn names_a_part(self) -> bool {
        matches!(self, Field::Children | Field::Textures | Field::Properties)
    }

    /// A content fact's field: reasoning names the value that matched
    /// ("has component PlayerController") rather than the field alone.
    pub(super) fn is_content_fact(self) -> bool {
        matches!(
            self,
            Field::Components
                | Field::Script
                | Field::Children
                | Field::Shader
                | Field::Textures
                | Field::States
                | Field::Properties
        )
    }

    /// How reasoning names a matched value of this field.
    pub(super) fn evidence(self, value: &str) -> String {
        match self {
            Field::Components => format!("has component {value}"),
            Field::Script => format!("script {value}"),
            Field::Children => format!("child '{value}'"),
            Field::Shader => format!("shader {value}"),
            Field::Textures => format!("texture {value}"),
            Field::States => format!("state {value}"),
            _ => format!("shader property {value}"),
        }
    }

    pub(super) const ALL: [Field; FIELDS] = [
        Field::Name,
        Field::Tags,
        Field::Labels,
        Field::Signals,
        Field::Type,
        Field::Path,
        Field::Summary,
        Field::UseCases,
        Field::Contents,
        Field::Components,
        Field::Script,
        Field::Children,
        Field::Shader,
        Field::Textures,
        Field::States,
        Field::Properties,
    ];
}

/// Something the ranker can score: it hands out its text field by field.
pub trait Document {
    /// Call `f` with each field's text (a field may come more than once).
    fn visit(&self, f: &mut dyn FnMut(Field, &str));
}

impl Document for AssetRow {
    fn visit(&self, f: &mut dyn FnMut(Field, &str)) {
        f(Field::Name, &self.name);
        self.llm_tags.iter().for_each(|t| f(Field::Tags, t));
        self.labels.iter().for_each(|t| f(Field::Labels, t));
        self.filename_signals.iter().for_each(|t| f(Field::Signals, t));
        f(Field::Type, &self.asset_type);
        if let Some(subtype) = &self.type_subtype {
            f(Field::Type, subtype);
        }
        // Folders only: the file name is the `name` field already.
        f(Field::Path, self.path.rsplit_once('/').map_or("", |(dirs, _)| dirs));
        f(Field::Summary, &self.llm_summary);
        self.llm_use_cases.iter().flatten().for_each(|t| f(Field::UseCases, t));
        self.component_types
            .iter()
            .flatten()
            .for_each(|t| f(Field::Components, t));
        if let Some(class) = self.script_class.as_deref().filter(|c| !c.is_empty()) {
            f(Field::Script, class);
        }
        self.child_names.iter().flatten().for_each(|t| f(Field::Children, t));
        if let Some(shader) = self.shader.as_deref().filter(|s| !s.is_empty()) {
            f(Field::Shader, shader);
        }
        self.textures.iter().flatten().for_each(|t| f(Field::Textures, t));
        self.animator_states.iter().flatten().for_each(|t| f(Field::States, t));
        self.shader_props.iter().flatten().for_each(|t| f(Field::Properties, t));
    }
}

impl Document for PackageRow {
    fn visit(&self, f: &mut dyn FnMut(Field, &str)) {
        f(Field::Name, &self.name);
        f(Field::Path, &self.root);
        self.type_counts.keys().for_each(|t| f(Field::Type, t));
        f(Field::Summary, &self.summary);
        self.asset_vocabulary.iter().for_each(|w| f(Field::Contents, w));
    }
}

/// BM25's term-frequency saturation.
const K1: f32 = 1.2;
/// Coverage weight of a concept that no record mentions (see the ranker's docs).
const UNSEEN_WEIGHT: f32 = 0.35;
/// Concepts beyond this many are ignored (a bit mask tracks fields per concept).
const MAX_CONCEPTS: usize = 32;

/// How one record scored.
#[derive(Debug, Clone)]
pub struct Scored {
    /// Index of the record in the slice given to [`score`].
    pub index: usize,
    pub(crate) coverage: f32,
    pub(crate) bm25: f32,
    /// Per concept: the fields it was found in (bit `i` = `Field::ALL[i]`).
    pub(crate) found_in: Vec<u16>,
    /// Per concept: how well it was matched (its coverage credit: 1 for the
    /// word or a translation in a name, 0.7 for a sibling translation or a
    /// folder name, 0 when missing).
    pub(crate) strength: Vec<f32>,
    /// Bit `c`: no record of the corpus holds concept `c` — a gap of the
    /// project's vocabulary, which tells no record from another.
    pub(crate) unseen: u32,
    /// Bit `c`: concept `c` is held by at most `RARE_ROWS` (16) records — a
    /// word that names a few assets, whose best record is always a
    /// candidate ([`rare_concepts`]).
    pub(crate) rare: u32,
}

/// A record that matched, before scoring.
struct Hit {
    index: usize,
    lens: [u16; FIELDS],
    /// `n_concepts × FIELDS` weighted term frequencies.
    tf: Vec<f32>,
    /// `n_concepts × FIELDS` summed weights of the *distinct* terms found:
    /// a loose synonym seen twice is still a loose match, while two halves
    /// of a compound make a whole one.
    cover: Vec<f32>,
}

/// The concepts of `query` that are scored (the first 32: a bit mask tracks them).
pub fn scored_concepts(query: &Query) -> &[Concept] {
    &query.concepts[..query.concepts.len().min(MAX_CONCEPTS)]
}

/// Every term of `doc`, field by field, as the scorer reads them: the
/// search index posts these, so what it finds is what a scan would.
pub fn for_each_field_term(doc: &dyn Document, scratch: &mut Scratch, f: &mut dyn FnMut(Field, &str)) {
    doc.visit(&mut |field, text| for_each_term(text, scratch, |term| f(field, term)));
}

/// A record's length per field in terms, as BM25F normalises it (the
/// scan counts the same positions, whether or not it stems them).
pub fn add_field_lengths(lens: &mut [u16; FIELDS], field: Field) {
    let f = field as usize;
    lens[f] = lens[f].saturating_add(1);
}

/// Corpus statistics measured beforehand, by the search index, instead of
/// over the records scored: so scoring only the records that match gives
/// each the score a scan of the whole corpus would.
#[derive(Debug, Clone)]
pub struct Corpus {
    /// How many records the corpus holds.
    pub docs: usize,
    /// Per field, the summed lengths of every record.
    pub(crate) len_sums: [f64; FIELDS],
    /// Per query, per scored concept ([`scored_concepts`]): how many
    /// records hold one of its terms (of a weight above zero).
    pub(crate) df: Vec<Vec<f32>>,
}

/// Records per parallel task: large enough that splitting costs nothing.
const CHUNK: usize = 4096;

/// FNV-1a: the term table is probed for every term of every record, and
/// its keys are short strings, where SipHash's setup dominates. Stable
/// across runs and platforms, so the search index also fingerprints rows with it.
#[derive(Default)]
pub(crate) struct Fnv(u64);

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 { 0xcbf2_9ce4_8422_2325 } else { self.0 };
        for &b in bytes {
            h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
        self.0 = h;
    }
}

/// Term → its number and the `(concept, weight)` pairs it counts for.
type TermTable<'q> = HashMap<&'q str, (usize, Vec<(usize, f32)>), std::hash::BuildHasherDefault<Fnv>>;

/// One pass over `docs` (starting at record number `offset`): the matching
/// records and the summed field lengths.
fn scan<D: Document>(docs: &[D], offset: usize, table: &TermTable, n_concepts: usize) -> (Vec<Hit>, [f64; FIELDS]) {
    let mut hits = Vec::new();
    let mut len_sums = [0f64; FIELDS];
    let mut scratch = Scratch::default();
    let mut tf = vec![0f32; n_concepts * FIELDS];
    let mut cover = vec![0f32; n_concepts * FIELDS];
    // (term number, field) pairs already credited to this record's cover.
    let mut seen: Vec<(usize, usize)> = Vec::new();
    // The first byte, and the first two bytes, the query's terms start
    // with: a record's term that starts otherwise is counted, never stemmed
    // or looked up. Stemming keeps a term's first two characters (it only
    // edits the end of words longer than three letters), so both tests
    // are sound; a second character that is not a letter or digit (`A_Rock`
    // gives the compound `arock`) falls back to the first byte alone.
    let mut first_bytes = [false; 256];
    let mut first_pairs = vec![false; 256 * 256];
    for term in table.keys() {
        if let [b0, rest @ ..] = term.as_bytes() {
            first_bytes[usize::from(*b0)] = true;
            if let Some(&b1) = rest.first() {
                first_pairs[usize::from(*b0) * 256 + usize::from(b1)] = true;
            }
        }
    }
    let may_match = |part: &str| match part.as_bytes() {
        [] => false,
        [b0, ..] if !b0.is_ascii() => true,
        [b0, rest @ ..] => {
            let b0 = b0.to_ascii_lowercase();
            first_bytes[usize::from(b0)]
                && match rest.first() {
                    Some(b1) if b1.is_ascii_alphanumeric() => {
                        first_pairs[usize::from(b0) * 256 + usize::from(b1.to_ascii_lowercase())]
                    }
                    _ => true,
                }
        }
    };
    for (i, doc) in docs.iter().enumerate() {
        let mut lens = [0u16; FIELDS];
        let mut matched = false;
        doc.visit(&mut |field, text| {
            let f = field as usize;
            for_each_term_where(text, &mut scratch, may_match, |term| {
                lens[f] = lens[f].saturating_add(1);
                if let Some((id, entries)) = term.and_then(|t| table.get(t)) {
                    matched = true;
                    let first = !seen.contains(&(*id, f));
                    if first {
                        seen.push((*id, f));
                    }
                    for &(c, weight) in entries {
                        tf[c * FIELDS + f] += weight;
                        if first {
                            cover[c * FIELDS + f] += weight;
                        }
                    }
                }
            });
        });
        for (sum, len) in len_sums.iter_mut().zip(lens) {
            *sum += f64::from(len);
        }
        seen.clear();
        if matched {
            hits.push(Hit {
                index: offset + i,
                lens,
                tf: std::mem::replace(&mut tf, vec![0f32; n_concepts * FIELDS]),
                cover: std::mem::replace(&mut cover, vec![0f32; n_concepts * FIELDS]),
            });
        }
    }
    (hits, len_sums)
}

/// Each concept's weight in coverage, and their sum, for a corpus of `n`
/// records of which `df[c]` hold concept `c`: rarer concepts count more.
/// Shared with the search index's confidence bounds, which must weigh
/// coverage exactly as scoring does.
pub fn coverage_weights(concepts: &[&Concept], df: &[f32], n: f32) -> (Vec<f32>, f32) {
    let idf_max = (1.0 + (n + 0.5) / 0.5).ln();
    let weights: Vec<f32> = concepts
        .iter()
        .zip(df)
        .map(|(concept, &d)| {
            if d == 0.0 {
                concept.prior * UNSEEN_WEIGHT
            } else {
                concept.prior * (0.5 + 0.5 * idf(n, d) / idf_max)
            }
        })
        .collect();
    let total = weights.iter().sum::<f32>().max(f32::EPSILON);
    (weights, total)
}

/// Per field, the average length BM25F normalises by, over `n` records
/// whose lengths sum to `len_sums`.
pub fn average_lengths(len_sums: &[f64; FIELDS], n: f32) -> [f32; FIELDS] {
    len_sums.map(|sum| (sum as f32 / n).max(1.0))
}

/// The IDF of a concept `d` of `n` records hold.
pub fn idf(n: f32, d: f32) -> f32 {
    (1.0 + (n - d + 0.5) / (d + 0.5)).ln()
}

/// One concept's match in one record, from its weighted term frequencies
/// `tf` and the summed weights of its distinct terms `cover`, per field
/// (`FIELDS` each), and the record's field lengths: the BM25F term
/// frequency, the coverage credit (the best field's) and the fields it is
/// in. The search index bounds a record with this before reading it, so
/// it weighs a match exactly as scoring does.
pub fn concept_match(tf: &[f32], cover: &[f32], lens: &[u16; FIELDS], avg: &[f32; FIELDS]) -> (f32, f32, u16) {
    let mut tfn = 0.0;
    let mut best: f32 = 0.0;
    let mut found = 0u16;
    for (f, field) in Field::ALL.iter().enumerate() {
        let x = tf[f];
        if x <= 0.0 {
            continue;
        }
        let (boost, b, credit) = field.params();
        tfn += boost * x / (1.0 - b + b * f32::from(lens[f]) / avg[f]);
        // Distinct weighted hits in one field, capped at a full match: two
        // half-weight parts of a compound make one whole word; one loose
        // synonym twice does not.
        best = best.max(credit * cover[f].min(1.0));
        found |= 1 << f;
    }
    (tfn, best, found)
}

/// A concept's BM25 share: its saturated term frequency `tfn`, weighted
/// by its prior and IDF.
pub fn concept_bm25(prior: f32, idf: f32, tfn: f32) -> f32 {
    prior * idf * tfn * (K1 + 1.0) / (tfn + K1)
}

/// The concepts (bit `c`) no record holds, from their document frequencies.
pub fn unseen_concepts(df: &[f32]) -> u32 {
    df.iter()
        .enumerate()
        .filter(|(_, &d)| d == 0.0)
        .fold(0u32, |mask, (c, _)| mask | 1 << c)
}

/// The most records a concept may be held by and still be rare.
const RARE_ROWS: f32 = 16.0;

/// The concepts (bit `c`) held by at least one and at most `RARE_ROWS` (16)
/// records of the corpus, given each one's document frequency. Ranking
/// keeps each one's best record among the candidates however low the rules
/// put it: the rare word that names an asset ("gear" among a folder of
/// "settings") is evidence the learned scorer should weigh, not lose.
pub fn rare_concepts(df: &[f32]) -> u32 {
    df.iter()
        .enumerate()
        .filter(|(_, &d)| d > 0.0 && d <= RARE_ROWS)
        .fold(0u32, |mask, (c, _)| mask | 1 << c)
}

/// Scores of every record matching at least one concept, unordered.
pub fn score<D: Document + Sync>(docs: &[D], query: &Query) -> Vec<Scored> {
    score_each(docs, &[query]).pop().unwrap_or_default()
}

/// [`score`] for several queries in one pass: each record is tokenised
/// once and its terms looked up in one table holding every query's
/// concepts. Records are scanned in parallel chunks; the corpus statistics
/// (lengths, document frequencies) are shared, the weights are per query.
pub fn score_each<D: Document + Sync>(docs: &[D], queries: &[&Query]) -> Vec<Vec<Scored>> {
    score_each_in(docs, queries, None)
}

/// [`score_each`] with the corpus statistics of `corpus` when given (then
/// `docs` need only be the records that match), else measured over `docs`.
pub fn score_each_in<D: Document + Sync>(docs: &[D], queries: &[&Query], corpus: Option<&Corpus>) -> Vec<Vec<Scored>> {
    use rayon::prelude::*;
    let mut concepts = Vec::new();
    let mut spans = Vec::with_capacity(queries.len());
    for query in queries {
        let own = scored_concepts(query);
        spans.push(concepts.len()..concepts.len() + own.len());
        concepts.extend(own);
    }
    let n_concepts = concepts.len();
    let mut table = TermTable::default();
    for (c, concept) in concepts.iter().enumerate() {
        for (term, weight) in &concept.terms {
            let next = table.len();
            table
                .entry(term.as_str())
                .or_insert_with(|| (next, Vec::new()))
                .1
                .push((c, *weight));
        }
    }
    let parts: Vec<(Vec<Hit>, [f64; FIELDS])> = docs
        .par_chunks(CHUNK)
        .enumerate()
        .map(|(k, chunk)| scan(chunk, k * CHUNK, &table, n_concepts))
        .collect();
    let mut hits = Vec::new();
    let mut len_sums = [0f64; FIELDS];
    for (part_hits, part_sums) in parts {
        hits.extend(part_hits);
        for (sum, part) in len_sums.iter_mut().zip(part_sums) {
            *sum += part;
        }
    }

    let found = |hit: &Hit, c: usize| hit.tf[c * FIELDS..(c + 1) * FIELDS].iter().any(|&x| x > 0.0);
    let (n, df) = match corpus {
        Some(corpus) => {
            len_sums = corpus.len_sums;
            (corpus.docs, corpus.df.iter().flatten().copied().collect())
        }
        None => {
            let mut df = vec![0f32; n_concepts];
            for hit in &hits {
                for (c, d) in df.iter_mut().enumerate() {
                    if found(hit, c) {
                        *d += 1.0;
                    }
                }
            }
            (docs.len(), df)
        }
    };
    let n = n.max(1) as f32;
    let avg = average_lengths(&len_sums, n);
    let idf: Vec<f32> = df.iter().map(|&d| idf(n, d)).collect();

    spans
        .into_iter()
        .map(|span| {
            let (weights, total_weight) = coverage_weights(&concepts[span.clone()], &df[span.clone()], n);
            let unseen = unseen_concepts(&df[span.clone()]);
            let rare = rare_concepts(&df[span.clone()]);
            hits.iter()
                .filter(|hit| span.clone().any(|c| found(hit, c)))
                .map(|hit| {
                    let mut bm25 = 0.0;
                    let mut covered = 0.0;
                    let mut found_in = vec![0u16; span.len()];
                    let mut strength = vec![0f32; span.len()];
                    for (k, c) in span.clone().enumerate() {
                        let fields = c * FIELDS..(c + 1) * FIELDS;
                        let (tfn, best, found) =
                            concept_match(&hit.tf[fields.clone()], &hit.cover[fields], &hit.lens, &avg);
                        bm25 += concept_bm25(concepts[c].prior, idf[c], tfn);
                        covered += weights[k] * best;
                        strength[k] = best;
                        found_in[k] = found;
                    }
                    Scored {
                        index: hit.index,
                        coverage: covered / total_weight,
                        bm25,
                        found_in,
                        strength,
                        unseen,
                        rare,
                    }
                })
                .collect()
        })
        .collect()
}
