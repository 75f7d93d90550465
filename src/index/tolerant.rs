//! Serde readers of an index row's fields that take what a person or an
//! older index wrote, not only what the indexer writes: a list as a
//! string, a list or a map, a text as a list, a count of another kind as
//! none. Decoded as they are read, with no intermediate JSON tree (search
//! reads every row of `assets.jsonl` through them).

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

/// A list of every string of a value: a string, the strings of a list, the
/// values of a map (and the keys whose value is `true`, as in
/// `{"normal_map": true}`); numbers, `false` and null add nothing.
pub(crate) fn list<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let mut out = Vec::new();
    Collect {
        out: &mut out,
        key: None,
    }
    .deserialize(d)?;
    Ok(out)
}

/// The strings of a value, joined by spaces.
pub(crate) fn text<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(joined(list(d)?))
}

/// [`list`], `None` for null: a list the row leaves out is not one it holds empty.
pub(crate) fn optional_list<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    struct List(Vec<String>);
    impl<'de> Deserialize<'de> for List {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            list(d).map(List)
        }
    }
    Ok(Option::<List>::deserialize(d)?.map(|l| l.0))
}

/// [`text`], `None` for null.
pub(crate) fn optional_text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(optional_list(d)?.map(joined))
}

/// `strings` joined by spaces; the usual single string as it came, not
/// copied again (search reads a summary and a time from every row).
fn joined(strings: Vec<String>) -> String {
    match <[String; 1]>::try_from(strings) {
        Ok([one]) => one,
        Err(strings) => strings.join(" "),
    }
}

/// A count; `None` for a value of another kind (`"size": "2 MB"`), which
/// a row may hold without being unreadable.
pub(crate) fn count<'de, D: Deserializer<'de>, N: TryFrom<u64>>(d: D) -> Result<Option<N>, D::Error> {
    Ok(match d.deserialize_any(ScalarVisitor)? {
        Some(Scalar::Count(n)) => N::try_from(n).ok(),
        _ => None,
    })
}

/// A string; `None` for a value of another kind (`"last_modified": 5`).
/// Cheaper than [`optional_text`] for a field no reader looks into.
pub(crate) fn string<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match d.deserialize_any(ScalarVisitor)? {
        Some(Scalar::Text(text)) => Some(text),
        _ => None,
    })
}

/// Collects every string of a value as it is decoded (see [`list`]).
struct Collect<'a> {
    out: &'a mut Vec<String>,
    /// The map key this value belongs to: pushed when the value is `true`.
    key: Option<String>,
}

impl<'de> DeserializeSeed<'de> for Collect<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Collect<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a string, a list or a map of strings")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        self.out.push(v.to_owned());
        Ok(())
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<(), E> {
        self.out.push(v);
        Ok(())
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        if let (true, Some(key)) = (v, self.key) {
            self.out.push(key);
        }
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq
            .next_element_seed(Collect {
                out: &mut *self.out,
                key: None,
            })?
            .is_some()
        {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            map.next_value_seed(Collect {
                out: &mut *self.out,
                key: Some(key),
            })?;
        }
        Ok(())
    }
}

/// What [`count`] and [`string`] take: one number or one string.
enum Scalar {
    Count(u64),
    Text(String),
}

/// A [`Scalar`], or `None` for any other value.
struct ScalarVisitor;

impl<'de> Visitor<'de> for ScalarVisitor {
    type Value = Option<Scalar>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any value, a count or a string read")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Some(Scalar::Count(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(Scalar::Text(v.to_owned())))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Some(Scalar::Text(v)))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Row {
        #[serde(default, deserialize_with = "list")]
        list: Vec<String>,
        #[serde(default, deserialize_with = "text")]
        text: String,
        #[serde(default, deserialize_with = "optional_list")]
        maybe: Option<Vec<String>>,
        #[serde(default, deserialize_with = "count")]
        count: Option<usize>,
        #[serde(default, deserialize_with = "string")]
        string: Option<String>,
    }

    fn row(json: &str) -> Row {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn lists_texts_counts_and_strings_take_any_shape() {
        let r = row(r#"{"list":["a",["b"],{"c":true,"d":"e","f":false,"g":[true]},3,null],"text":["one","two"]}"#);
        assert_eq!(r.list, ["a", "b", "c", "e"], "a true inside a list names nothing");
        assert_eq!(r.text, "one two");
        assert_eq!((r.maybe, r.count), (None, None));
        assert_eq!(row(r#"{"maybe":null}"#).maybe, None, "null is a list left out");
        assert_eq!(row(r#"{"maybe":[]}"#).maybe, Some(vec![]));
        assert_eq!(row(r#"{"maybe":"x"}"#).maybe, Some(vec!["x".to_owned()]));
        assert_eq!(row(r#"{"count":7}"#).count, Some(7));
        assert_eq!(row(r#"{"string":"7"}"#).string.as_deref(), Some("7"));
        for other in [r#""7""#, "-1", "1.5", "true", "null", "[1,[2]]", r#"{"a":{"b":1}}"#] {
            let r: Row = serde_json::from_str(&format!(r#"{{"count":{other},"list":"after"}}"#)).unwrap();
            assert_eq!((r.count, r.list), (None, vec!["after".to_owned()]), "{other}");
        }
        for other in ["7", "true", "null", r#"["a","b"]"#, r#"{"a":"b"}"#] {
            let r: Row = serde_json::from_str(&format!(r#"{{"string":{other},"list":"after"}}"#)).unwrap();
            assert_eq!((r.string, r.list), (None, vec!["after".to_owned()]), "{other}");
        }
    }
}
