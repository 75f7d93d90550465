//! The search index is an accelerator, never a change in results: every
//! query ranks the same top 10 (guids, confidences, reasonings) from the
//! index as from a scan of every row — on a generated project (always), on
//! the dev query sets of the shared corpora and on the seed set (when
//! `../shared` is there; skipped otherwise).

use std::path::{Path, PathBuf};

use engine::io::Limits;
use unity_assets::eval::{load_golden, load_seed_templates, seed_guid};
use unity_assets::search::records::AssetRow;
use unity_assets::search::term_index::SEARCH_INDEX_FILE;
use unity_assets::search::vocab::Vocabulary;
use unity_assets::search::{search_indexed, search_rows, Group};

const BIN: &str = env!("CARGO_BIN_EXE_unity-assets");
const TOP: usize = 10;

fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared")
}

/// What a ranking shows: per group, each candidate's guid, path, confidence and reasoning.
fn shown(groups: &[Group]) -> Vec<Vec<(String, String, String, String)>> {
    groups
        .iter()
        .map(|g| {
            g.candidates
                .iter()
                .map(|c| {
                    (
                        c.guid.clone(),
                        c.path.clone(),
                        format!("{:.3}", c.confidence),
                        c.reasoning.clone(),
                    )
                })
                .collect()
        })
        .collect()
}

/// Rank every query both ways over the rows of `dir/assets.jsonl`; the
/// lines the index printed (a rebuild) are returned.
fn assert_same_both_ways(dir: &Path, queries: &[String], what: &str) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join("assets.jsonl")).unwrap();
    let rows: Vec<AssetRow> = text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let vocab = Vocabulary::embedded();
    let mut lines = Vec::new();
    let mut found = 0;
    for query in queries {
        let scanned = search_rows(&rows, query, &vocab, TOP);
        let indexed = search_indexed(dir, &Limits::default(), query, &vocab, TOP, &mut |l| {
            lines.push(l.to_owned())
        })
        .unwrap();
        assert_eq!(shown(&indexed), shown(&scanned), "{what}: {query:?}");
        found += scanned.iter().map(|g| g.candidates.len()).sum::<usize>();
    }
    assert!(found > 0, "{what}: no query found anything, so nothing was compared");
    lines
}

fn row_line(guid: &str, path: &str, kind: &str, tags: &[&str], summary: &str) -> String {
    let name = path.rsplit('/').next().unwrap().split('.').next().unwrap();
    serde_json::json!({"guid": guid, "path": path, "name": name, "type": kind, "llm_tags": tags, "llm_summary": summary})
        .to_string()
}

/// A generated project of about 3,000 rows: real-looking names in nested
/// folders, Korean file names, a few words everywhere and some nowhere.
fn generated_rows() -> Vec<String> {
    const SUBJECTS: &[&str] = &[
        "Zombie",
        "Barrel",
        "Crate",
        "Lantern",
        "Helicopter",
        "Rock",
        "Tree",
        "Door",
        "Sword",
        "Potion",
        "Robot",
        "Wall",
        "Button",
        "Footstep",
        "Torch",
        "Container",
        "Barricade",
    ];
    const MODIFIERS: &[&str] = &[
        "Scifi", "Wooden", "Mossy", "Old", "Metal", "Broken", "Red", "Big", "Small",
    ];
    const KINDS: &[(&str, &str, &str)] = &[
        ("Prefab", "prefab", "Prefabs"),
        ("Material", "mat", "Materials"),
        ("Texture2D", "png", "Textures"),
        ("AudioClip", "wav", "Audio"),
        ("MonoScript", "cs", "Scripts"),
    ];
    const KOREAN: &[&str] = &["좀비", "나무", "상자", "문", "검"];
    let mut rows = Vec::new();
    let mut n = 0usize;
    for (s, subject) in SUBJECTS.iter().enumerate() {
        for (m, modifier) in MODIFIERS.iter().enumerate() {
            for (k, (kind, ext, folder)) in KINDS.iter().enumerate() {
                for variant in 0..(1 + (s + m + k) % 5) {
                    n += 1;
                    let pack = ["Environment", "Characters", "Props/Kit", "UI/Shared"][(s + variant) % 4];
                    let path = format!("Assets/{pack}/{folder}/{subject}_{modifier}_{variant:02}.{ext}");
                    // A third of the rows tagged with their words, the rest with one common word.
                    let tags: Vec<String> = match n.is_multiple_of(3) {
                        true => vec![subject.to_lowercase(), modifier.to_lowercase()],
                        false => vec!["misc".to_owned()],
                    };
                    let tags: Vec<&str> = tags.iter().map(String::as_str).collect();
                    let summary = format!("A {} {} {}.", modifier.to_lowercase(), subject.to_lowercase(), kind);
                    rows.push(row_line(&format!("{n:032x}"), &path, kind, &tags, &summary));
                }
            }
        }
    }
    for (i, word) in KOREAN.iter().enumerate() {
        rows.push(row_line(
            &format!("{:032x}", 100_000 + i),
            &format!("Assets/한글/{word}_{i}.prefab"),
            "Prefab",
            &[],
            "",
        ));
    }
    rows
}

fn generated_queries() -> Vec<String> {
    [
        "sci-fi barrel",
        "wooden crate prefab",
        "mossy rock material",
        "zombie footstep sound",
        "좀비 적 캐릭터",
        "오래된 나무 문",
        "랜턴",
        "헬리콥터 프리팹",
        "바리케이드와 컨테이너",
        "red potion and metal sword",
        "button script",
        "spaceship laser",
        "우주선 레이저 무기",
        "big",
        "torch",
    ]
    .iter()
    .map(|q| q.to_string())
    .collect()
}

#[test]
fn a_generated_project_ranks_the_same_from_its_index_and_rebuilds_a_stale_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut rows = generated_rows();
    assert!(rows.len() > 2000, "{}", rows.len());
    let write = |rows: &[String]| std::fs::write(dir.path().join("assets.jsonl"), rows.join("\n") + "\n").unwrap();
    write(&rows);
    let queries = generated_queries();

    let lines = assert_same_both_ways(dir.path(), &queries, "generated");
    assert_eq!(lines.len(), 1, "built once, then read: {lines:?}");
    assert!(lines[0].contains("search index was missing: rebuilt"), "{lines:?}");
    assert!(dir.path().join(SEARCH_INDEX_FILE).is_file());

    // Rows changed behind the index: a new row, one gone, one renamed.
    rows.remove(7);
    rows[40] = rows[40].replace("Barrel", "Lantern");
    rows.push(row_line(
        &format!("{:032x}", 900_000),
        "Assets/New/Barrel_Scifi_New.prefab",
        "Prefab",
        &["barrel", "scifi"],
        "A new sci-fi barrel.",
    ));
    write(&rows);
    let lines = assert_same_both_ways(dir.path(), &queries, "generated, changed");
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("search index was stale: rebuilt"), "{lines:?}");

    // The same length, another word: the row read back no longer matches
    // its fingerprint, so the index is rebuilt rather than trusted.
    let at = rows.iter().position(|r| r.contains("Barrel_Scifi_New")).unwrap();
    rows[at] = rows[at].replace("Barrel_Scifi_New", "Barrel_Scifi_Old");
    write(&rows);
    let lines = assert_same_both_ways(dir.path(), &["sci-fi barrel".to_owned()], "same length");
    assert!(
        lines.iter().any(|l| l.contains("search index was stale: rebuilt")),
        "{lines:?}"
    );

    // A damaged index file is rebuilt too.
    std::fs::write(dir.path().join(SEARCH_INDEX_FILE), b"UASIDX\x00\x01garbage").unwrap();
    let lines = assert_same_both_ways(dir.path(), &queries[..3], "damaged");
    assert!(lines[0].contains("rebuilt"), "{lines:?}");
}

/// A project's index is untrusted input: a header whose row count makes
/// the row table's length overflow is damaged, rebuilt, never read by.
#[test]
fn a_crafted_header_is_rebuilt_never_trusted() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("assets.jsonl"), generated_rows().join("\n") + "\n").unwrap();
    let queries = generated_queries();
    assert_same_both_ways(dir.path(), &queries[..3], "built");
    let path = dir.path().join(SEARCH_INDEX_FILE);
    let bytes = std::fs::read(&path).unwrap();
    let header_len = u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize;
    let mut header: serde_json::Value = serde_json::from_slice(&bytes[12..12 + header_len]).unwrap();
    // 20 bytes a row: this many rows "fit" a 4-byte table when the product wraps.
    header["rows"] = serde_json::json!(usize::MAX / 20 + 1);
    header["row_table"] = serde_json::json!([0, (usize::MAX / 20 + 1).wrapping_mul(20)]);
    let header = serde_json::to_vec(&header).unwrap();
    let mut crafted = bytes[..8].to_vec();
    crafted.extend((header.len() as u32).to_le_bytes());
    crafted.extend(&header);
    crafted.extend(&bytes[12 + header_len..]);
    std::fs::write(&path, crafted).unwrap();
    let lines = assert_same_both_ways(dir.path(), &queries[..3], "crafted");
    assert!(lines.iter().any(|l| l.contains("was damaged: rebuilt")), "{lines:?}");
}

#[test]
fn an_empty_index_finds_nothing_either_way() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("assets.jsonl"), "").unwrap();
    let vocab = Vocabulary::embedded();
    let groups = search_indexed(dir.path(), &Limits::default(), "barrel", &vocab, TOP, &mut |_| {}).unwrap();
    assert!(groups.iter().all(|g| g.candidates.is_empty()));
}

/// The seed golden set in "search only" mode (its hints as tags and
/// summaries), as `src/eval/tests.rs` reads it.
#[test]
fn the_seed_set_ranks_the_same_from_the_index() {
    let dir = shared().join("benchmarks/seed-golden");
    if !dir.join("golden-queries.yml").is_file() {
        eprintln!("seed golden set not found; skipping");
        return;
    }
    let templates = load_seed_templates(&dir.join("assets-template.yml"), &Limits::default()).unwrap();
    let lines: Vec<String> = templates
        .iter()
        .map(|t| {
            let row = AssetRow {
                guid: seed_guid(&t.path()),
                path: t.path(),
                name: t.name.clone(),
                asset_type: t.kind.clone(),
                labels: t.labels.clone(),
                llm_tags: t.tags_hint.clone(),
                llm_summary: t.summary_hint.clone(),
                ..Default::default()
            };
            serde_json::to_string(&row).unwrap()
        })
        .collect();
    let index = tempfile::tempdir().unwrap();
    std::fs::write(index.path().join("assets.jsonl"), lines.join("\n")).unwrap();
    let set = load_golden(&dir.join("golden-queries.yml"), &Limits::default()).unwrap();
    let queries: Vec<String> = set.queries.iter().map(|q| q.query.clone()).collect();
    assert_same_both_ways(index.path(), &queries, "seed set");
}

/// Every dev query of every corpus present, over the index `unity-assets
/// index` writes of it.
#[test]
fn the_dev_sets_rank_the_same_from_the_index() {
    for name in ["fpssample", "danmokou", "bossroom"] {
        let archive = shared().join(format!("corpora/{name}.tar.gz"));
        if !archive.is_file() {
            eprintln!("skipping {name}: {} not found", archive.display());
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        let unpacked = std::process::Command::new("tar")
            .arg("-xzf")
            .arg(&archive)
            .arg("-C")
            .arg(dir.path())
            .status();
        if !unpacked.is_ok_and(|s| s.success()) {
            eprintln!("skipping {name}: tar could not unpack it");
            continue;
        }
        let project = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.path())
            .find(|p| p.join("Assets").is_dir())
            .expect("a Unity project in the archive");
        let run = test_support::cli::Run::of(test_support::cli::command(Path::new(BIN), &project).arg("index"));
        assert_eq!(run.code, 0, "{name}: {}", run.output());
        let index = project.join(".claude/unity-asset-index");
        assert!(
            index.join(SEARCH_INDEX_FILE).is_file(),
            "`index` writes the search index"
        );
        let mut queries = Vec::new();
        for set in [format!("{name}.yml"), format!("{name}-meaning.yml")] {
            let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("benchmarks/queries")
                .join(set);
            if path.is_file() {
                let golden = load_golden(&path, &Limits::default()).unwrap();
                queries.extend(golden.queries.into_iter().map(|q| q.query));
            }
        }
        assert!(queries.len() > 20, "{name}: {} queries", queries.len());
        let lines = assert_same_both_ways(&index, &queries, name);
        assert!(lines.is_empty(), "{name}: the index `index` wrote is fresh: {lines:?}");
    }
}
