use std::path::PathBuf;

use super::*;
use crate::search::rank::Thresholds;
use crate::search::records::AssetRow;
use crate::search::vocab::Vocabulary;
use crate::search::{search_rows, Group};

/// The seed golden set, when the shared benchmarks are present.
fn seed_golden_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/benchmarks/seed-golden");
    dir.join("golden-queries.yml").is_file().then_some(dir)
}

/// "Search only" mode of the seed README: a perfect tagger, so the index
/// rows carry `tags_hint`/`summary_hint` as `llm_tags`/`llm_summary`.
fn search_only_rows(templates: &[SeedTemplate]) -> Vec<AssetRow> {
    templates
        .iter()
        .map(|t| AssetRow {
            guid: seed_guid(&t.path()),
            path: t.path(),
            name: t.name.clone(),
            asset_type: t.kind.clone(),
            labels: t.labels.clone(),
            llm_tags: t.tags_hint.clone(),
            llm_summary: t.summary_hint.clone(),
            ..Default::default()
        })
        .collect()
}

/// All groups' candidates as one list, most confident first, each path once.
fn flatten(groups: Vec<Group>) -> Vec<Hit> {
    let mut all: Vec<_> = groups.into_iter().flat_map(|g| g.candidates).collect();
    all.sort_by(|a, b| b.confidence.total_cmp(&a.confidence));
    let mut seen = HashSet::new();
    all.into_iter()
        .filter(|c| seen.insert(c.path.clone()))
        .map(|c| Hit {
            guid: c.guid,
            path: c.path,
            confidence: c.confidence,
        })
        .collect()
}

#[test]
fn seed_guid_matches_the_seed_builder() {
    // sha256("a") = ca978112ca1bbdcafac231b39a23dc4d…
    assert_eq!(seed_guid("a"), "ca978112ca1bbdcafac231b39a23dc4d");
}

#[test]
fn own_format_and_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("golden.yml");
    std::fs::write(
        &path,
        "queries:\n  - {query: zombie, accepted: [Assets/Z.prefab], category: character}\n  - {query: tree, accepted: [Assets/T.prefab, Assets/T2.prefab]}\nrouting:\n  - {query: a and b, multi: true, min_sub_intents: 2}\n  - {query: a, multi: false}\n",
    )
    .unwrap();
    let set = load_golden(&path, &Limits::default()).unwrap();
    assert_eq!(set.queries.len(), 2);
    let hit = |p: &str| Hit {
        guid: String::new(),
        path: p.into(),
        confidence: 0.5,
    };
    let report = evaluate(
        &set,
        Thresholds::default().confirm,
        |q| {
            Ok(if q == "zombie" {
                vec![hit("Assets/X"), hit("Assets/Z.prefab")]
            } else {
                vec![hit("Assets/Y")]
            }
            .into())
        },
        |_| Ok(2),
    )
    .unwrap();
    assert_eq!(report.overall.recall_at_3, 0.5);
    assert!((report.overall.precision_at_3 - 1.0 / 6.0).abs() < 1e-9);
    assert_eq!(report.overall.mrr, 0.25);
    assert_eq!(report.by_category["character"].recall_at_3, 1.0);
    let routing = report.routing.as_ref().unwrap();
    assert_eq!(
        (routing.correct, routing.multi_correct, routing.single_correct),
        (1, 1, 0)
    );
    assert!(report_text_mentions_misses(&report));
}

fn report_text_mentions_misses(report: &Report) -> bool {
    report.render().contains("miss q02")
}

#[test]
fn unknown_format_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("golden.yml");
    std::fs::write(&path, "stuff: 1\n").unwrap();
    let err = format!("{:#}", load_golden(&path, &Limits::default()).unwrap_err());
    assert!(err.contains("expected `queries:"), "{err}");
}

/// The seed golden set in "search only" mode with the builtin ranker,
/// among all 46 assets. Prints the figures (`--nocapture`) and holds the
/// targets of issue 5. Skipped when ../shared is absent.
#[test]
fn seed_golden_search_only() {
    let Some(dir) = seed_golden_dir() else {
        eprintln!("seed golden set not found; skipping");
        return;
    };
    let templates = load_seed_templates(&dir.join("assets-template.yml"), &Limits::default()).unwrap();
    let rows = search_only_rows(&templates);
    let set = load_golden(&dir.join("golden-queries.yml"), &Limits::default()).unwrap();
    let vocab = Vocabulary::embedded();
    let report = evaluate(
        &set,
        Thresholds::default().confirm,
        |q| Ok(flatten(search_rows(&rows, q, &vocab, 10)).into()),
        |q| Ok(crate::search::route::route(q, &vocab).sub_intents.len()),
    )
    .unwrap();
    println!("{}", report.render());
    for (o, q) in report.outcomes.iter().zip(&set.queries) {
        let reachable = q.accepted.len().min(CUTOFF);
        if o.relevant_in_top < reachable {
            println!(
                "partial {} {:?}: {}/{} relevant in top {:?}",
                o.id, o.query, o.relevant_in_top, reachable, o.top
            );
        }
    }
    let routing = report.routing.as_ref().unwrap();
    // Measured 30/31 (0.968; q08 labels a wall prefab as the answer to "mossy
    // stone material", whose material ranks first), Precision@3 0.462 of a
    // 0.516 ceiling (0.473 before issue 13: type words stopped counting as
    // matched concepts), MRR 0.984. The golden set's own scorer: 0.935 / 0.441.
    assert!(report.overall.recall_at_3 >= 0.96, "{}", report.render());
    assert!(report.overall.precision_at_3 >= 0.46, "{}", report.render());
    assert!(
        routing.correct >= 8 && routing.multi_correct >= 4 && routing.single_correct >= 3,
        "{}",
        report.render()
    );
}

/// Every Korean word of the seed golden queries is either in
/// data/aliases.yml or a stopword (no concept is left unknown;
/// `docs/contracts.md#routing-hints`).
#[test]
fn aliases_cover_the_golden_korean_words() {
    let Some(dir) = seed_golden_dir() else { return };
    let set = load_golden(&dir.join("golden-queries.yml"), &Limits::default()).unwrap();
    let vocab = Vocabulary::embedded();
    let queries = set
        .queries
        .iter()
        .map(|q| &q.query)
        .chain(set.routing.iter().map(|r| &r.query));
    let unknown: Vec<String> = queries
        .flat_map(|q| crate::search::query::Query::analyze(q, &vocab).concepts)
        .filter(|c| c.label.chars().any(crate::search::text::is_hangul) && !c.label.contains('('))
        .map(|c| c.label)
        .collect();
    assert!(unknown.is_empty(), "Korean words without aliases: {unknown:?}");
}

#[test]
fn controls_pass_under_the_confirm_threshold_and_stay_out_of_recall() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("golden.yml");
    std::fs::write(
        &path,
        "queries:\n  - {query: zombie, accepted: [Assets/Z.prefab]}\n  - {query: dragon, accepted: []}\n  - {query: spaceship, accepted: []}\n",
    )
    .unwrap();
    let set = load_golden(&path, &Limits::default()).unwrap();
    assert!(set.queries[1].is_control());
    let hit = |p: &str, confidence: f32| Hit {
        guid: String::new(),
        path: p.into(),
        confidence,
    };
    let report = evaluate(
        &set,
        Thresholds::default().confirm,
        |q| {
            Ok(match q {
                "zombie" => vec![hit("Assets/Z.prefab", 0.9)],
                "dragon" => vec![hit("Assets/D", 0.2), hit("Assets/E", 0.39)],
                _ => vec![hit("Assets/S", 0.45)],
            }
            .into())
        },
        |_| Ok(1),
    )
    .unwrap();
    assert_eq!(report.overall.queries, 1);
    assert_eq!(report.overall.recall_at_3, 1.0);
    let controls = report.controls.as_ref().unwrap();
    assert_eq!((controls.passed, controls.total), (1, 2));
    assert_eq!(controls.max_confidence, 0.45);
    assert!(
        report.render().contains("controls 1/2 under 0.40"),
        "{}",
        report.render()
    );
    assert!(report.render().contains("control over"), "{}", report.render());
}
