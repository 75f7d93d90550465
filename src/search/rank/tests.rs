//! The ranker's unit tests: calibration, subtype and type order, several
//! intents at once, package places, past picks.

use super::*;
use crate::search::records::PackageRow;
use crate::search::vocab::Vocabulary;

fn row(guid: &str, path: &str, kind: &str, tags: &[&str], summary: &str) -> AssetRow {
    let name = path.rsplit('/').next().unwrap().split('.').next().unwrap().to_owned();
    AssetRow {
        guid: guid.into(),
        path: path.into(),
        name,
        asset_type: kind.into(),
        llm_tags: tags.iter().map(|t| t.to_string()).collect(),
        llm_summary: summary.into(),
        ..Default::default()
    }
}

fn rows() -> Vec<AssetRow> {
    vec![
        row(
            "a",
            "Assets/Kit/Zombie_Basic.prefab",
            "Prefab",
            &["zombie", "enemy", "character"],
            "Basic zombie enemy.",
        ),
        row(
            "b",
            "Assets/Kit/Tree_Pine.prefab",
            "Prefab",
            &["tree", "forest"],
            "Pine tree.",
        ),
        row(
            "c",
            "Assets/Audio/SFX_Zombie.wav",
            "AudioClip",
            &["sfx", "zombie"],
            "Zombie groan sound effect.",
        ),
        row(
            "d",
            "Assets/UI/MainMenu.prefab",
            "Prefab",
            &["ui", "menu"],
            "Main menu UI prefab.",
        ),
    ]
}

fn rank(q: &str, hint: Option<&str>) -> Vec<Candidate> {
    let query = Query::analyze(q, &Vocabulary::embedded());
    rank_assets(
        &rows(),
        &query,
        &RankOptions {
            subtype_hint: hint,
            top_k: 3,
            ..Default::default()
        },
    )
}

#[test]
fn full_match_is_auto_and_ranks_first() {
    let got = rank("좀비 적 캐릭터 프리팹", Some("Prefab/character"));
    assert_eq!(got[0].guid, "a");
    assert!(got[0].confidence >= 0.70, "{got:?}");
    assert!(got[0].reasoning.contains("same Prefab type"), "{}", got[0].reasoning);
    assert!(got.iter().all(|c| c.guid != "b"), "the tree matches nothing: {got:?}");
}

#[test]
fn no_real_match_stays_under_confirm() {
    assert!(rank("우주선 레이저 무기", None).iter().all(|c| c.confidence < 0.40));
    assert!(rank("spaceship laser", None).is_empty());
}

#[test]
fn partial_match_sits_between_thresholds() {
    let got = rank("좀비 신음 효과음 공포", None);
    assert_eq!(got[0].guid, "c");
    assert!((0.40..0.99).contains(&got[0].confidence), "{got:?}");
    // The search lines show the first sentence: it names what is missing.
    let shown = got[0].reasoning.split(". ").next().unwrap();
    assert!(shown.contains("not found: 공포 (horror)"), "{}", got[0].reasoning);
}

#[test]
fn exact_subtype_outranks_same_type() {
    let mut rows = rows();
    rows[3].type_subtype = Some("Prefab/ui".into());
    rows.push(row(
        "e",
        "Assets/UI/MainMenuSkin.prefab",
        "Prefab",
        &["ui", "menu"],
        "Main menu UI prefab.",
    ));
    let query = Query::analyze("메인 메뉴 UI", &Vocabulary::embedded());
    let got = rank_assets(
        &rows,
        &query,
        &RankOptions {
            subtype_hint: Some("Prefab/ui"),
            top_k: 2,
            ..Default::default()
        },
    );
    assert_eq!(got[0].guid, "d");
    assert!(got[0].reasoning.contains("exact match of Prefab/ui"));
    assert!(got[1].reasoning.contains("second tier"));
}

#[test]
fn rich_depth_parts_are_evidence() {
    let with_states = |guid: &str, states: &[&str]| AssetRow {
        animator_states: Some(states.iter().map(|s| s.to_string()).collect()),
        ..row(
            guid,
            &format!("Assets/Kit/Orc_{guid}.controller"),
            "AnimatorController",
            &["orc"],
            "An orc animator.",
        )
    };
    let rows = vec![
        with_states("a", &["Idle", "Walk"]),
        with_states("b", &["Idle", "Heavy_Attack"]),
    ];
    let query = Query::analyze("orc attack", &Vocabulary::embedded());
    let ranked = rank_assets(
        &rows,
        &query,
        &RankOptions {
            top_k: 2,
            ..Default::default()
        },
    );
    assert_eq!(ranked[0].guid, "b", "{ranked:?}");
    assert!(ranked[0].confidence > ranked[1].confidence);
    assert!(
        ranked[0].reasoning.contains("attack (state Heavy_Attack)"),
        "{}",
        ranked[0].reasoning
    );
}

#[test]
fn ranking_several_intents_at_once_equals_ranking_each() {
    let vocab = Vocabulary::embedded();
    let rows = rows();
    let requests: Vec<(Query, RankOptions)> = ["zombie enemy", "pine tree", "zombie sound", "spaceship"]
        .iter()
        .map(|q| {
            (
                Query::analyze(q, &vocab),
                RankOptions {
                    top_k: 3,
                    ..Default::default()
                },
            )
        })
        .collect();
    let together = rank_assets_each(&rows, &requests);
    assert_eq!(together.len(), requests.len());
    for ((query, options), ranked) in requests.iter().zip(&together) {
        assert_eq!(&rank_assets(&rows, query, options), ranked);
    }
    assert!(together[3].is_empty());
}

#[test]
fn a_missing_subject_stays_under_confirm_and_a_missing_modifier_does_not() {
    let rows = vec![
        row(
            "a",
            "Assets/Props/Barrel_Wooden.prefab",
            "Prefab",
            &["barrel"],
            "A barrel.",
        ),
        row(
            "b",
            "Assets/Props/Crate_Scifi.prefab",
            "Prefab",
            &["crate", "scifi"],
            "A crate.",
        ),
    ];
    let rank = |q: &str| {
        let query = Query::analyze(q, &Vocabulary::embedded());
        rank_assets(
            &rows,
            &query,
            &RankOptions {
                top_k: 2,
                ..Default::default()
            },
        )
    };
    // "sci-fi barrel": the barrel lacks the modifier, the crate the subject.
    let got = rank("sci-fi barrel");
    let conf = |guid: &str| got.iter().find(|c| c.guid == guid).map(|c| c.confidence);
    assert!(
        conf("a").is_some_and(|c| c >= Thresholds::default().subject_found_floor()),
        "{got:?}"
    );
    assert!(
        conf("b").is_some_and(|c| c < Thresholds::default().subject_found_floor()),
        "{got:?}"
    );
    assert_eq!(got[0].guid, "a");
    assert!(
        got[1].reasoning.contains("subject barrel is not in it"),
        "{}",
        got[1].reasoning
    );
    // A query about something the project does not have: nothing confirmable.
    assert!(rank("공상과학 드래곤")
        .iter()
        .all(|c| c.confidence < Thresholds::default().subject_found_floor()));
}

#[test]
fn type_intent_orders_ties_and_a_named_type_excludes_others() {
    let rows = vec![
        row(
            "t",
            "Assets/Tex/Barrel_Albedo.png",
            "Texture2D",
            &["barrel"],
            "Barrel texture.",
        ),
        row(
            "p",
            "Assets/Props/Barrel.prefab",
            "Prefab",
            &["barrel"],
            "Barrel prefab.",
        ),
        row(
            "s",
            "Assets/Audio/Barrel_Hit.wav",
            "AudioClip",
            &["barrel", "hit"],
            "Barrel hit.",
        ),
        row(
            "c",
            "Assets/Scripts/BarrelSpawner.cs",
            "MonoScript",
            &["barrel"],
            "Barrel code.",
        ),
    ];
    let rank = |q: &str| {
        let query = Query::analyze(q, &Vocabulary::embedded());
        rank_assets(
            &rows,
            &query,
            &RankOptions {
                top_k: 4,
                ..Default::default()
            },
        )
    };
    assert_eq!(rank("barrel")[0].guid, "p", "no type named: the placeable prefab first");
    let sound = rank("barrel sound");
    assert_eq!(sound[0].guid, "s");
    assert!(
        sound
            .iter()
            .filter(|c| c.guid != "s")
            .all(|c| c.confidence < Thresholds::default().subject_found_floor()),
        "{sound:?}"
    );
    let code = rank("barrel");
    let script = code.iter().find(|c| c.guid == "c").unwrap();
    assert!(
        script.confidence < Thresholds::default().subject_found_floor(),
        "{script:?}"
    );
    assert!(rank("barrel script")[0].guid == "c");
}

#[test]
fn free_package_places_go_to_packages_that_may_hide_a_word() {
    let package = |id: &str, count: u64, words: &[&str]| PackageRow {
        package_id: id.into(),
        name: id.into(),
        asset_count: count,
        asset_vocabulary: words.iter().map(|w| w.to_string()).collect(),
        ..Default::default()
    };
    let packages = vec![
        package("materials", 2, &["door", "lava"]),
        package("project", 1000, &["prefab", "env"]),
        package("small", 1, &["font"]),
    ];
    let query = Query::analyze("door", &Vocabulary::embedded());
    let chosen = rank_packages(&packages, &query, 3);
    let ids: Vec<&str> = chosen.iter().map(|c| c.package_id.as_str()).collect();
    assert_eq!(
        ids,
        ["materials", "project"],
        "small shows all its words: it cannot hide one"
    );
    assert!(chosen[1].confidence < 0.40 && chosen[1].reasoning.contains("may hold one"));
}

#[test]
fn past_pick_boost_reorders_ties() {
    let mut rows = rows();
    rows.push(row(
        "z",
        "Assets/Kit/Zombie_Fast.prefab",
        "Prefab",
        &["zombie", "enemy"],
        "Fast zombie enemy.",
    ));
    let query = Query::analyze("zombie enemy", &Vocabulary::embedded());
    let boosts = HashMap::from([("z".to_owned(), 0.08)]);
    let got = rank_assets(
        &rows,
        &query,
        &RankOptions {
            past_boosts: boosts,
            top_k: 2,
            ..Default::default()
        },
    );
    assert_eq!(got[0].guid, "z");
    assert!(got[0].reasoning.contains("picked before"));
}

/// A record matched only through a word near in meaning, while another
/// query word is found nowhere in it, stays under confirm; one whose every
/// query word matched through meaning is confirmed, never auto.
#[test]
fn meaning_alone_with_a_word_missing_waits_for_a_person() {
    use crate::search::route::WordMeaning;
    let rows = vec![
        row("w", "Assets/Props/Weapon_Bow.prefab", "Prefab", &[], ""),
        row("p", "Assets/Props/Plum.prefab", "Prefab", &[], ""),
    ];
    let meaning = |word: &str, term: &str| WordMeaning {
        word: word.into(),
        term: term.into(),
        similarity: 0.69,
        weight: 0.8,
    };
    let options = RankOptions {
        top_k: 3,
        ..Default::default()
    };
    let rank_with = |q: &str, meanings: &[WordMeaning]| {
        let vocab = Vocabulary::embedded();
        let query = Query::analyze(q, &vocab).with_meanings(meanings, &vocab);
        rank_assets(&rows, &query, &options)
    };
    let sniper = rank_with("sniper rifle", &[meaning("rifle", "weapon")]);
    assert_eq!(sniper[0].guid, "w");
    assert!(sniper[0].confidence < 0.40, "{sniper:?}");
    assert!(sniper[0].reasoning.contains("Only words near in meaning"), "{sniper:?}");
    // (plum: not a translation the lexicon gives, which meaning would only confirm)
    let peach = rank_with("복숭아", &[meaning("복숭아", "plum")]);
    assert_eq!(peach[0].guid, "p");
    assert!(
        (0.40..0.70).contains(&peach[0].confidence),
        "confirmed, never auto: {peach:?}"
    );
}

#[test]
fn a_rare_words_best_asset_stays_a_candidate_past_the_top_k() {
    // Twenty settings assets fill the top K for "gear settings" (settings
    // is the subject); the one gear icon is kept all the same, for the
    // learned scorer to weigh.
    let mut rows: Vec<AssetRow> = (0..20)
        .map(|i| {
            let path = format!("Assets/Settings/Settings_Panel{i}.prefab");
            row(&format!("s{i}"), &path, "Prefab", &[], "")
        })
        .collect();
    rows.push(row("gear", "Assets/Icons/Gear.png", "Texture2D", &[], ""));
    let query = Query::analyze("gear settings", &Vocabulary::embedded());
    let options = RankOptions {
        top_k: 3,
        ..Default::default()
    };
    let got = rank_assets(&rows, &query, &options);
    assert_eq!(got.len(), 4, "{got:?}");
    assert!(got.iter().any(|c| c.guid == "gear"), "{got:?}");
    // A word on every row is not rare: nothing is added past the top K.
    let got = rank_assets(
        &rows[..20],
        &Query::analyze("settings", &Vocabulary::embedded()),
        &options,
    );
    assert_eq!(got.len(), 3, "{got:?}");
}

#[test]
fn a_closed_compound_finds_what_is_named_by_one_of_its_words() {
    // A project names its jellyfish `Jelly` and its puffer `Puffer`: the
    // compound's words find them, under what holds the whole word.
    let rows = vec![
        row("jelly", "Assets/Units/Jelly.prefab", "Prefab", &[], ""),
        row("whole", "Assets/Units/Jellyfish_Big.prefab", "Prefab", &[], ""),
        row("puffer", "Assets/Units/Puffer.prefab", "Prefab", &[], ""),
        row("stone", "Assets/Props/Stone.prefab", "Prefab", &[], ""),
    ];
    let options = RankOptions {
        top_k: 3,
        ..Default::default()
    };
    let ranked = |q: &str| rank_assets(&rows, &Query::analyze(q, &Vocabulary::embedded()), &options);
    let got = ranked("해파리");
    let guids: Vec<&str> = got.iter().map(|c| c.guid.as_str()).collect();
    assert_eq!(guids[..2], ["whole", "jelly"], "{got:?}");
    assert!(got[0].confidence > got[1].confidence, "{got:?}");
    assert_eq!(ranked("복어")[0].guid, "puffer");
    assert!(ranked("돌멩이").iter().all(|c| c.guid != "jelly"));
}
