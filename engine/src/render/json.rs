//! The model itself as pretty JSON, for tools that draw their own pictures.

use super::Graph;

pub(super) fn render(graph: &Graph) -> String {
    let mut text = serde_json::to_string_pretty(graph)
        .expect("a Graph holds only strings, numbers and lists, which always serialize");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::sample;

    #[test]
    fn round_trips_the_model_with_edges_and_the_nested_child() {
        let value: serde_json::Value = serde_json::from_str(&render(&sample::graph())).expect("valid JSON");
        assert_eq!(value["pipeline"], "search");
        assert_eq!(value["edges"][3], serde_json::json!([0, 3]));
        assert_eq!(value["nodes"][2]["children"]["nodes"][1]["name"], "rank");
        assert_eq!(
            value["nodes"][3]["target"], r#""<none> & done""#,
            "JSON keeps text as is; its own escaping is serde's"
        );
    }
}
