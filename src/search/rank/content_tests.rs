//! Content facts as evidence: a prefab found by its components, in English
//! and Korean, with the matched value named in the reasoning, and a part of
//! a record (a child) never standing in for the record itself.

use super::*;
use crate::search::vocab::Vocabulary;

fn prefab(guid: &str, name: &str) -> AssetRow {
    AssetRow {
        guid: guid.into(),
        path: format!("Assets/Prefabs/{name}.prefab"),
        name: name.into(),
        asset_type: "Prefab".into(),
        ..Default::default()
    }
}

fn strings(items: &[&str]) -> Option<Vec<String>> {
    Some(items.iter().map(|s| s.to_string()).collect())
}

fn project() -> Vec<AssetRow> {
    vec![
        AssetRow {
            component_types: strings(&["CharacterController", "Damageable", "PlayerController", "Transform"]),
            child_names: strings(&["Hero_Mesh", "Weapon_Socket"]),
            ..prefab("hero", "Hero")
        },
        AssetRow {
            component_types: strings(&["BoxCollider", "LockedDoor", "Transform"]),
            ..prefab("gate", "Prop_07")
        },
        AssetRow {
            component_types: strings(&["Transform", "WaveSpawner"]),
            child_names: strings(&["Door_Frame", "Imp"]),
            ..prefab("spawner", "EnemySpawner")
        },
        AssetRow {
            component_types: strings(&["Transform"]),
            ..prefab("imp", "Imp")
        },
        AssetRow {
            shader: Some("Custom/Moss Rock".into()),
            textures: strings(&["Moss_Albedo"]),
            asset_type: "Material".into(),
            path: "Assets/Materials/Ground_03.mat".into(),
            ..prefab("ground", "Ground_03")
        },
    ]
}

fn rank(query: &str) -> Vec<Candidate> {
    let query = Query::analyze(query, &Vocabulary::embedded());
    rank_assets(
        &project(),
        &query,
        &RankOptions {
            top_k: 3,
            ..Default::default()
        },
    )
}

#[test]
fn a_prefab_is_found_by_its_component_in_english_and_korean() {
    for query in ["player controller", "플레이어 컨트롤러"] {
        let got = rank(query);
        assert_eq!(got[0].guid, "hero", "{query}: {got:?}");
        assert!(got[0].confidence >= 0.40, "{query}: {got:?}");
        assert!(
            got[0].reasoning.contains("(has component PlayerController)"),
            "{query}: {}",
            got[0].reasoning
        );
    }
}

#[test]
fn a_locked_door_script_answers_a_locked_door() {
    let got = rank("잠긴 문");
    assert_eq!(got[0].guid, "gate", "{got:?}");
    assert!(got[0].confidence >= 0.40, "{got:?}");
    let first = got[0].reasoning.split(". ").next().unwrap();
    // Written apart, 잠긴 문 is still the lexicon's one word 잠긴문.
    assert!(
        first.contains("잠긴문 (locked door) (has component LockedDoor)"),
        "{first}"
    );
}

#[test]
fn a_material_names_its_shader_and_textures() {
    let got = rank("moss material");
    assert_eq!(got[0].guid, "ground", "{got:?}");
    assert!(
        got[0].reasoning.contains("shader Custom/Moss Rock") && got[0].reasoning.contains("texture Moss_Albedo"),
        "{}",
        got[0].reasoning
    );
}

#[test]
fn a_child_is_a_part_not_the_record() {
    let got = rank("imp");
    assert_eq!(got[0].guid, "imp", "{got:?}");
    let spawner = got.iter().find(|c| c.guid == "spawner").unwrap();
    assert!(spawner.confidence < 0.40, "{spawner:?}");
    assert!(
        spawner.reasoning.contains("child 'Imp'") && spawner.reasoning.contains("only a part it holds"),
        "{}",
        spawner.reasoning
    );
}
