//! The scan's assets as they travel between pipeline stages: one JSONL
//! string instead of an array of JSON objects.
//!
//! Stage outputs are `serde_json::Value`s, and every stage that reads
//! `{{ scan }}` (diff, plan, finalize) decodes its own copy (finalize a
//! few thousand assets at a time, from [`Text`]). As
//! objects, 100,000 assets are millions of small maps: cloning and decoding
//! them was most of an index run's time and memory. As one string, a clone
//! is one copy and decoding reads text straight into [`ScannedAsset`]s.
//! An array of asset objects is still read (a hand-written `scan` input).
//!
//! [`lines`] does the same for rows a prompt shows one per line (a tag
//! batch's assets): a list of JSON lines, each one string, which a template
//! prints as it is and a stage decodes without a map per field.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeOwned, MapAccess, SeqAccess, Visitor};
use serde::ser::SerializeSeq as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::record::ScannedAsset;

/// Write the assets as one JSONL string, a line per asset.
pub fn serialize<S: Serializer>(assets: &[ScannedAsset], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&jsonl(assets.iter()).map_err(serde::ser::Error::custom)?)
}

/// The assets as one JSONL string, a line per asset. Given owned assets,
/// each is dropped once written: the string grows as they go.
pub fn jsonl<A: std::borrow::Borrow<ScannedAsset>>(
    assets: impl ExactSizeIterator<Item = A>,
) -> serde_json::Result<String> {
    // Room for rows a little longer than usual: capacity never written is
    // never touched, a reallocation would copy everything written so far.
    let mut bytes = Vec::with_capacity(assets.len() * 768);
    for asset in assets {
        serde_json::to_writer(&mut bytes, asset.borrow())?;
        bytes.push(b'\n');
    }
    // serde_json writes UTF-8.
    String::from_utf8(bytes).map_err(serde::ser::Error::custom)
}

/// Read the assets from a JSONL string or from an array of objects.
pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<ScannedAsset>, D::Error> {
    deserializer.deserialize_any(AssetsVisitor)
}

struct AssetsVisitor;

impl<'de> Visitor<'de> for AssetsVisitor {
    type Value = Vec<ScannedAsset>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("scanned assets: a JSONL string or an array of objects")
    }

    /// Lines are decoded in parallel (diff, plan and finalize each decode
    /// every asset); the first bad one is the error.
    fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
        use rayon::prelude::*;
        let lines: Vec<&str> = text.lines().filter(|line| !line.is_empty()).collect();
        let decoded: Vec<serde_json::Result<ScannedAsset>> =
            lines.par_iter().map(|line| serde_json::from_str(line)).collect();
        decoded
            .into_iter()
            .enumerate()
            .map(|(i, asset)| asset.map_err(|e| E::custom(format!("scanned asset {}: {e}", i + 1))))
            .collect()
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut assets = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(asset) = seq.next_element()? {
            assets.push(asset);
        }
        Ok(assets)
    }
}

/// The assets left as their JSONL text, for a stage that visits them one
/// at a time (finalize): decoded all at once, a million assets were most of
/// its peak memory. An array of asset objects is read into the same text.
pub struct Text(String);

impl Text {
    /// Each asset's line, in the scan's order.
    pub fn lines(&self) -> Vec<&str> {
        self.0.lines().filter(|line| !line.is_empty()).collect()
    }

    /// The guid of the asset on `line`, without decoding the rest.
    pub fn guid(line: &str) -> serde_json::Result<std::borrow::Cow<'_, str>> {
        #[derive(Deserialize)]
        struct Asset<'a> {
            #[serde(borrow)]
            row: Guid<'a>,
        }
        #[derive(Deserialize)]
        struct Guid<'a> {
            #[serde(borrow)]
            guid: std::borrow::Cow<'a, str>,
        }
        serde_json::from_str::<Asset>(line).map(|a| a.row.guid)
    }

    pub fn decode(line: &str) -> serde_json::Result<ScannedAsset> {
        serde_json::from_str(line)
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(TextVisitor)
    }
}

struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = Text;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("scanned assets: a JSONL string or an array of objects")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
        Ok(Text(text.to_owned()))
    }

    fn visit_string<E: de::Error>(self, text: String) -> Result<Self::Value, E> {
        Ok(Text(text))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut assets = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(asset) = seq.next_element::<ScannedAsset>()? {
            assets.push(asset);
        }
        jsonl(assets.into_iter()).map(Text).map_err(de::Error::custom)
    }
}

/// Rows as a list of JSON lines (`#[serde(with = "packed::lines")]`); a
/// list of objects is read too.
pub mod lines {
    use super::*;

    pub fn serialize<S: Serializer, T: Serialize>(rows: &[T], serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(rows.len()))?;
        for row in rows {
            seq.serialize_element(&serde_json::to_string(row).map_err(serde::ser::Error::custom)?)?;
        }
        seq.end()
    }

    pub fn deserialize<'de, D: Deserializer<'de>, T: DeserializeOwned>(deserializer: D) -> Result<Vec<T>, D::Error> {
        let rows: Vec<LineOrObject<T>> = Vec::deserialize(deserializer)?;
        Ok(rows.into_iter().map(|row| row.0).collect())
    }
}

/// One row: a JSON line, or the object itself.
struct LineOrObject<T>(T);

impl<'de, T: DeserializeOwned> Deserialize<'de> for LineOrObject<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(LineOrObjectVisitor(PhantomData))
    }
}

struct LineOrObjectVisitor<T>(PhantomData<T>);

impl<'de, T: DeserializeOwned> Visitor<'de> for LineOrObjectVisitor<T> {
    type Value = LineOrObject<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a row: a JSON line or an object")
    }

    fn visit_str<E: de::Error>(self, line: &str) -> Result<Self::Value, E> {
        serde_json::from_str(line).map(LineOrObject).map_err(E::custom)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        T::deserialize(de::value::MapAccessDeserializer::new(map)).map(LineOrObject)
    }
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};
    use serde_json::json;

    use super::*;

    #[derive(Serialize, Deserialize)]
    struct Holder {
        #[serde(with = "super")]
        assets: Vec<ScannedAsset>,
    }

    fn asset(guid: &str) -> ScannedAsset {
        serde_json::from_value(json!({
            "row": {
                "guid": guid, "path": format!("Assets/{guid}.prefab"), "name": guid, "type": "Prefab",
                "labels": [], "package_id": "project", "size": 2, "last_modified": "2026-12-02T00:00:00Z",
                "dependencies": ["b"]
            },
            "signature": "1:2:3:4"
        }))
        .unwrap()
    }

    #[test]
    fn assets_survive_a_round_trip_through_a_json_value_as_one_string() {
        let holder = Holder {
            assets: vec![asset("a"), asset("b")],
        };
        let value = serde_json::to_value(&holder).unwrap();
        assert!(value["assets"].is_string(), "{value}");
        let back: Holder = serde_json::from_value(value).unwrap();
        assert_eq!(back.assets, holder.assets);
    }

    #[test]
    fn an_array_of_asset_objects_is_still_read() {
        let array = json!({"assets": [serde_json::to_value(asset("a")).unwrap()]});
        let back: Holder = serde_json::from_value(array).unwrap();
        assert_eq!(back.assets, vec![asset("a")]);
    }

    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    struct Lines {
        #[serde(with = "super::lines")]
        rows: Vec<ScannedAsset>,
    }

    #[test]
    fn rows_travel_as_json_lines_and_objects_are_still_read() {
        let lines = Lines {
            rows: vec![asset("a"), asset("b")],
        };
        let value = serde_json::to_value(&lines).unwrap();
        assert!(value["rows"][1].is_string(), "{value}");
        assert_eq!(serde_json::from_value::<Lines>(value).unwrap(), lines);
        let objects = json!({"rows": [serde_json::to_value(asset("a")).unwrap()]});
        assert_eq!(serde_json::from_value::<Lines>(objects).unwrap().rows, vec![asset("a")]);
    }

    #[test]
    fn a_bad_line_is_an_error_naming_it() {
        let bad = json!({"assets": format!("{}\n{{\"guid\": 1}}\n", serde_json::to_string(&asset("a")).unwrap())});
        let error = serde_json::from_value::<Holder>(bad).err().unwrap().to_string();
        assert!(error.contains("scanned asset 2"), "{error}");
    }

    /// Finalize's view reads the same assets from either form, in order.
    #[test]
    fn text_reads_a_jsonl_string_or_an_array_alike() {
        let assets = vec![asset(&"a".repeat(32)), asset(&"b".repeat(32))];
        let packed = serde_json::to_value(Holder { assets: assets.clone() }).unwrap()["assets"].clone();
        let objects = serde_json::to_value(&assets).unwrap();
        for value in [packed, objects] {
            let text: Text = serde_json::from_value(value).unwrap();
            let lines = text.lines();
            assert_eq!(lines.len(), 2);
            assert_eq!(Text::guid(lines[1]).unwrap(), assets[1].row.guid);
            assert_eq!(Text::decode(lines[0]).unwrap().row.path, assets[0].row.path);
        }
    }
}
