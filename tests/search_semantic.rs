//! Search by meaning through the real binary, with an OpenAI-compatible
//! `/v1/embeddings` server on 127.0.0.1 standing in for the model: a small
//! concept space in which a Korean word and its English kin point the same
//! way, as a multilingual encoder's do. What is tested is the product around
//! the vectors: the index embeds only changed rows, in batches, with the
//! key; search finds what no word shares, says how, and never lets meaning
//! alone reach auto; `retrievers: lexical` is search as it was.

use std::sync::Arc;

use serde_json::{json, Value};

use test_support::llm_server::{LlmServer, Recorded, Reply};
use test_support::project::{Project, INDEX_DIR};

const BIN: &str = env!("CARGO_BIN_EXE_unity-assets");
const KEY: &str = "sk-embed-test-0123456789";

/// Words of one meaning, in both languages.
const CONCEPTS: &[&[&str]] = &[
    &["beaker", "비커", "flask", "laboratory", "실험실"],
    &["lighthouse", "등대", "beacon"],
    &["crate", "상자", "box"],
    &["zombie", "좀비", "undead"],
    // 셔플 is nearer `lzw` than `shuffle` (twice one, once the other).
    &["lzw", "셔플", "셔플"],
    &["shuffle", "셔플"],
    &["invernadero", "온실"],
    &["piglet", "돼지"],
];
const NOISE_DIMS: usize = 256;

/// The stand-in encoder: one unit per concept word, a little noise per
/// other word (so unrelated texts are near orthogonal, not identical).
fn embed(text: &str) -> Vec<f32> {
    let mut v = vec![0f32; CONCEPTS.len() + NOISE_DIMS];
    for word in text
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let kin: Vec<(usize, usize)> = CONCEPTS
            .iter()
            .enumerate()
            .map(|(i, c)| (i, c.iter().filter(|w| **w == word).count()))
            .filter(|(_, n)| *n > 0)
            .collect();
        for &(i, n) in &kin {
            v[i] += n as f32;
        }
        match kin.is_empty() {
            false => {}
            true => {
                let h = word
                    .bytes()
                    .fold(7usize, |h, b| h.wrapping_mul(31).wrapping_add(b as usize));
                v[CONCEPTS.len() + h % NOISE_DIMS] += 0.3;
            }
        }
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
    v.iter().map(|x| x / norm).collect()
}

fn embeddings_server_reply(request: &Recorded) -> Reply {
    let texts: Vec<String> = request.body["input"]
        .as_array()
        .map(|a| a.iter().filter_map(|t| t.as_str().map(str::to_owned)).collect())
        .unwrap_or_default();
    // Answered in reverse order: the API allows any order, `index` says which.
    let data: Vec<Value> = texts
        .iter()
        .enumerate()
        .rev()
        .map(|(i, t)| json!({"object": "embedding", "index": i, "embedding": embed(t)}))
        .collect();
    Reply::json(200, json!({"object": "list", "data": data, "model": "concepts"}))
}

/// A project with the assets the queries look for among others no query
/// names, and `embeddings:` pointing at `server`.
fn project(server: &LlmServer, extra: &str) -> Project {
    let project = Project::generated(BIN, 30);
    for (i, rel) in [
        "Assets/Props/Laboratory/Flask_Glass_A.prefab",
        "Assets/Environment/Coast/Beacon_Tower.prefab",
        "Assets/Props/Containers/Box_Wooden.prefab",
    ]
    .iter()
    .enumerate()
    {
        project.add_asset(rel, 0xf000 + i);
    }
    embed_with(&project, server, extra);
    project
}

/// Point `project`'s `embeddings:` at `server` (batches of 8), with `extra` config.
fn embed_with(project: &Project, server: &LlmServer, extra: &str) {
    project.configure(&format!(
        "embeddings:\n  provider: openai\n  base_url: \"{}/v1\"\n  model: concepts\n  api_key_env: TEST_EMBED_KEY\n  batch_size: 8\n{extra}",
        server.url()
    ));
}

fn result(project: &Project) -> Value {
    let text = std::fs::read_to_string(project.path().join(INDEX_DIR).join("search-result.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn run(project: &Project, args: &[&str]) -> test_support::cli::Run {
    tokio::task::block_in_place(|| project.run_with(args, &[("TEST_EMBED_KEY", KEY)]))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_index_embeds_in_batches_with_the_key_and_then_only_what_changed() {
    let server = LlmServer::respond_with(Arc::new(embeddings_server_reply)).await;
    let project = project(&server, "");
    let first = run(&project, &["index"]);
    assert_eq!(first.code, 0, "{first:?}");
    assert!(
        first.has_line("[unity-assets:index] vectors: 33 embedded, 0 reused (openai:concepts)"),
        "{first:?}"
    );
    // Then the project's vocabulary, embedded the same way.
    let words: usize = first
        .lines()
        .iter()
        .find_map(|l| l.strip_prefix("[unity-assets:index] vocabulary: "))
        .and_then(|rest| rest.split(' ').next()?.parse().ok())
        .expect("the vocabulary line");
    let requests = server.requests();
    assert_eq!(
        requests.len(),
        5 + words.div_ceil(8),
        "33 texts, then {words} words, in batches of 8"
    );
    assert!(requests.iter().all(|r| r.path == "/v1/embeddings"
        && r.header("authorization") == Some(&format!("Bearer {KEY}"))
        && r.body["model"] == "concepts"));
    assert!(!first.output().contains(KEY), "the key is never printed");
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(project.path().join(INDEX_DIR).join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["embedding"]["model"], "openai:concepts");
    assert_eq!(manifest["embedding"]["count"], 33);
    // The file as this run left it: a no-op that finds it so reads it no more.
    assert!(manifest["embedding"]["checked"]["inode"].is_u64(), "{manifest:#}");

    // Nothing changed: nothing embedded, no line.
    let again = run(&project, &["index"]);
    assert_eq!(again.code, 0, "{again:?}");
    assert_eq!(server.requests().len(), requests.len(), "{again:?}");
    assert!(!again.output().contains("vectors:"), "{again:?}");

    // One asset renamed: one row embedded, the rest reused.
    let old = project.path().join("Assets/Props/Containers/Box_Wooden.prefab");
    std::fs::rename(&old, old.with_file_name("Crate_Wooden.prefab")).unwrap();
    std::fs::rename(
        format!("{}.meta", old.display()),
        format!("{}.meta", old.with_file_name("Crate_Wooden.prefab").display()),
    )
    .unwrap();
    let renamed = run(&project, &["index"]);
    assert!(
        renamed.has_line("[unity-assets:index] vectors: 1 embedded, 32 reused (openai:concepts)"),
        "{renamed:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn meaning_finds_what_no_word_shares_says_how_and_stays_under_auto() {
    let server = LlmServer::respond_with(Arc::new(embeddings_server_reply)).await;
    let project = project(&server, "");
    assert_eq!(run(&project, &["index"]).code, 0);

    let search = run(&project, &["search", "비커"]);
    assert_eq!(search.code, 0, "{search:?}");
    let doc = result(&project);
    assert_eq!(doc["status"], "ok", "{search:?}");
    let top = &doc["groups"][0]["candidates"][0];
    assert_eq!(top["path"], "Assets/Props/Laboratory/Flask_Glass_A.prefab", "{doc:#}");
    // Found by meaning: the word 비커 stands for the project's word `flask`
    // (or the asset text as a whole is near it), and the reasoning says so.
    let reasoning = top["reasoning"].as_str().unwrap();
    assert!(
        reasoning.contains("비커 (beaker) ≈ flask") || reasoning.contains("비커 (beaker) ≈ laboratory"),
        "{reasoning}"
    );
    let confidence = top["confidence"].as_f64().unwrap();
    assert!(
        (0.40..0.70).contains(&confidence),
        "meaning alone is confirmed, never auto: {confidence}"
    );

    // Filters narrow what meaning searches too (docs/filters.md): excluded,
    // the flask is found by no path; kept, it is found among the matches.
    let excluded = run(&project, &["search", "-dir:Laboratory 비커"]);
    assert_eq!(excluded.code, 0, "{excluded:?}");
    assert!(!result(&project).to_string().contains("Flask_Glass_A"), "{excluded:?}");
    let kept = run(&project, &["search", "t:Prefab dir:Laboratory 비커"]);
    assert_eq!(kept.code, 0, "{kept:?}");
    let doc = result(&project);
    assert_eq!(doc["matched"], 1, "{doc:#}");
    assert_eq!(
        doc["groups"][0]["candidates"][0]["path"], "Assets/Props/Laboratory/Flask_Glass_A.prefab",
        "{doc:#}"
    );

    // The same query with words only: the lexicon does not know the word.
    let lexical = run(
        &project,
        &["search", "비커", "--set", "search.semantic.retrievers=lexical"],
    );
    assert!(
        lexical.has_line("[unity-assets:search] fallback stage 3: no_match (suggested_action=reindex)"),
        "{lexical:?}"
    );

    // Nothing near in meaning: still no answer. (The stand-in encoder puts
    // words it does not know on 256 noise axes; 엔진 would share one with
    // `rocks`, so the control's words are chosen to share none.)
    let control = run(&project, &["search", "우주선 조종석"]);
    assert!(
        control.has_line("[unity-assets:search] fallback stage 3: no_match (suggested_action=reindex)"),
        "{control:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_vectors_file_is_rebuilt_by_index_and_skipped_by_search() {
    let server = LlmServer::respond_with(Arc::new(embeddings_server_reply)).await;
    let project = project(&server, "");
    assert_eq!(run(&project, &["index"]).code, 0);
    let vectors = project.path().join(INDEX_DIR).join("assets.vectors");
    std::fs::write(&vectors, b"UAVECS01garbage").unwrap();

    let search = run(&project, &["search", "zombie"]);
    assert_eq!(search.code, 0, "words still answer: {search:?}");

    let index = run(&project, &["index"]);
    assert_eq!(index.code, 0, "{index:?}");
    assert!(index.output().contains("assets.vectors is corrupt"), "{index:?}");
    assert!(
        index.has_line("[unity-assets:index] vectors: 33 embedded, 0 reused (openai:concepts)"),
        "{index:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_embeddings_server_is_retried_then_named() {
    let server = LlmServer::start(vec![
        Reply::error(503, "loading the model"),
        Reply::error(401, "bad key"),
    ])
    .await;
    let project = project(&server, "  concurrency: 1\n");
    let index = run(&project, &["index"]);
    assert_ne!(index.code, 0, "{index:?}");
    let output = index.output();
    assert!(output.contains("HTTP 401"), "{output}");
    assert!(
        output.contains("TEST_EMBED_KEY"),
        "names the variable to check: {output}"
    );
    assert!(!output.contains(KEY), "{output}");
    assert_eq!(server.requests().len(), 2, "the 503 was retried, the 401 was not");
}

/// An embeddings server with a key is a trust item, like a model server:
/// nothing is sent before `unity-assets trust`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_project_sends_nothing_to_its_embeddings_server() {
    let server = LlmServer::respond_with(Arc::new(embeddings_server_reply)).await;
    let project = project(&server, "");
    let run = tokio::task::block_in_place(|| {
        test_support::cli::Run::of(
            test_support::cli::command(std::path::Path::new(BIN), project.path())
                .args(["index"])
                .env("TEST_EMBED_KEY", KEY)
                .env_remove("UNITY_ASSETS_TRUST"),
        )
    });
    assert_eq!(run.code, 3, "{run:?}");
    assert!(run.output().contains("embeddings.base_url"), "{run:?}");
    assert!(server.requests().is_empty());
}

fn index_file(project: &Project, name: &str) -> std::path::PathBuf {
    project.path().join(INDEX_DIR).join(name)
}

/// Each group's candidates as (path, confidence, reasoning).
fn candidates(project: &Project) -> Vec<Vec<(String, f64, String)>> {
    result(project)["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            g["candidates"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| {
                    (
                        c["path"].as_str().unwrap().to_owned(),
                        c["confidence"].as_f64().unwrap(),
                        c["reasoning"].as_str().unwrap().to_owned(),
                    )
                })
                .collect()
        })
        .collect()
}

/// Past `embeddings.ann_min_rows` (lowered here to 10), search ranks the
/// rows by their sign sketch and scores only the nearest; on a set this
/// small every row is among them, so its answer is the exact scan's. There
/// is nothing to build: `index` writes the sketch with the vectors.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_threshold_search_through_the_sketch_answers_as_the_exact_scan_does() {
    let server = LlmServer::respond_with(Arc::new(embeddings_server_reply)).await;
    let project = project(&server, "  ann_min_rows: 10\n");
    let index = run(&project, &["index"]);
    assert!(
        index.has_line("[unity-assets:index] vectors: 33 embedded, 0 reused (openai:concepts)"),
        "{index:?}"
    );
    let again = run(&project, &["index"]);
    assert!(!again.output().contains("vectors:"), "up to date: {again:?}");

    // Filtered, rows are asked by their number in the search index: the same rows pass.
    let queries = [
        "비커",
        "등대",
        "zombie box",
        "우주선 엔진",
        "t:Prefab 상자",
        "-dir:Laboratory 비커",
    ];
    let sketched: Vec<_> = queries
        .iter()
        .map(|q| {
            assert_eq!(run(&project, &["search", q]).code, 0);
            candidates(&project)
        })
        .collect();
    assert_eq!(sketched[0][0][0].0, "Assets/Props/Laboratory/Flask_Glass_A.prefab");

    // The same searches scanning every vector: the same candidates.
    project.configure(&format!(
        "embeddings:\n  provider: openai\n  base_url: \"{}/v1\"\n  model: concepts\n  api_key_env: TEST_EMBED_KEY\n  batch_size: 8\n  ann_min_rows: 1000\n",
        server.url()
    ));
    for (query, expected) in queries.iter().zip(&sketched) {
        assert_eq!(run(&project, &["search", query]).code, 0);
        assert_eq!(&candidates(&project), expected, "{query}");
    }
}

/// A search trusts the sketch and the offsets as `index` left them (it
/// checks only that the offsets are in place: `semantic::vectors`' tests);
/// `index` reads the file whole and checks them against the rows, so a
/// damaged sketch is found there and written again from embeddings anew.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_sketch_is_found_by_index_and_written_again() {
    let server = LlmServer::respond_with(Arc::new(embeddings_server_reply)).await;
    let project = project(&server, "  ann_min_rows: 10\n");
    assert_eq!(run(&project, &["index"]).code, 0);
    let vectors = index_file(&project, "assets.vectors");
    let written = std::fs::read(&vectors).unwrap();
    let mut damaged = written.clone();
    *damaged.last_mut().unwrap() ^= 0xff;
    std::fs::write(&vectors, &damaged).unwrap();

    let index = run(&project, &["index"]);
    assert_eq!(index.code, 0, "{index:?}");
    assert!(
        index.output().contains("offset or sketch does not match the row"),
        "{index:?}"
    );
    assert!(
        index.has_line("[unity-assets:index] vectors: 33 embedded, 0 reused (openai:concepts)"),
        "{index:?}"
    );
    assert_eq!(std::fs::read(&vectors).unwrap(), written);
}

/// Index a generated project with `files` added (embedded by the stand-in
/// encoder), search `query`, and return the first candidate's path and reasoning.
async fn first_found(files: &[&str], query: &str) -> (String, String) {
    let server = LlmServer::respond_with(Arc::new(embeddings_server_reply)).await;
    let project = Project::generated(BIN, 10);
    for (i, rel) in files.iter().enumerate() {
        project.add_asset(rel, 0xf100 + i);
    }
    embed_with(&project, &server, "");
    assert_eq!(run(&project, &["index"]).code, 0);
    let found = run(&project, &["search", query]);
    assert_eq!(found.code, 0, "{found:?}");
    let first = &result(&project)["groups"][0]["candidates"][0];
    let text = |key: &str| first[key].as_str().unwrap_or_else(|| panic!("{found:?}")).to_owned();
    (text("path"), text("reasoning"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loanword_of_several_project_words_is_the_one_near_in_meaning() {
    // 셔플's sound files `shuffle` and `espr`; nearest in meaning overall is
    // `lzw`, but of the words it sounds like, `shuffle` is near enough.
    let files = [
        "Assets/Icons/shuffle.png",
        "Assets/Data/esPR.asset",
        "Assets/Code/Lzw.cs",
    ];
    let (path, reasoning) = first_found(&files, "셔플").await;
    assert_eq!(path, "Assets/Icons/shuffle.png", "{reasoning}");
    assert!(reasoning.contains("셔플 (shuffle?)"), "{reasoning}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_word_no_file_name_holds_still_gets_its_meaning() {
    // Each project holds the word only where it says little (half of a
    // compound in a folder, a folder) and names the thing otherwise.
    let cases = [
        // 온실 is a greenhouse: only `house` is held, and it is Spanish.
        (
            ["Assets/Houses/Cabin.png", "Assets/Models/Invernadero 01.fbx"],
            "온실",
            "Assets/Models/Invernadero 01.fbx",
            "온실 (greenhouse) ≈ invernadero",
        ),
        // 돼지 is a pig: `pig` is a folder's word, the pigs are `swine_piglet`.
        (
            ["Assets/Pig/Feeder.png", "Assets/Monsters/swine_piglet.prefab"],
            "돼지",
            "Assets/Monsters/swine_piglet.prefab",
            "돼지 (pig) ≈ piglet",
        ),
    ];
    for (files, query, wanted, how) in cases {
        let (path, reasoning) = first_found(&files, query).await;
        assert_eq!(path, wanted, "{query}: {reasoning}");
        assert!(reasoning.contains(how), "{query}: {reasoning}");
    }
}
