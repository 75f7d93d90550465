//! A stage's `with:` as a native function reads it: what comes from an
//! earlier stage's output stays shared until the function's typed
//! arguments are read from it.
//!
//! A `with:` value written `{{ scan }}` used to be a copy of the `scan`
//! stage's output: at a million assets that is a 600 MB string copied for
//! each stage reading it, the largest allocation of an index run. [`Args`]
//! keeps such a value as the output's `Arc` and a path into it, and reads
//! the function's arguments straight from there ([`Deserializer`] for
//! `&Args`, which serde_json's `&Value` does the work of).

use std::sync::Arc;

use serde::de::value::BorrowedStrDeserializer;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// Evaluated arguments.
#[derive(Debug, Clone)]
pub enum Args {
    /// The value at `path` inside an earlier output (`root`), not copied.
    Shared {
        /// The output.
        root: Arc<Value>,
        /// Object keys from `root` to the value.
        path: Vec<String>,
    },
    /// A value made by the evaluation.
    Value(Value),
    /// An object with some shared values inside, in written order.
    Map(Vec<(String, Args)>),
    /// An array with some shared values inside.
    List(Vec<Args>),
}

impl From<Value> for Args {
    fn from(value: Value) -> Self {
        Args::Value(value)
    }
}

impl Args {
    /// The arguments as one JSON value (the shared parts copied).
    pub fn into_value(self) -> Value {
        match self {
            Args::Shared { .. } => self.value().cloned().unwrap_or(Value::Null),
            Args::Value(value) => value,
            Args::Map(entries) => Value::Object(entries.into_iter().map(|(k, v)| (k, v.into_value())).collect()),
            Args::List(items) => Value::Array(items.into_iter().map(Args::into_value).collect()),
        }
    }

    /// A shared or made value; `None` for a map or list of arguments.
    fn value(&self) -> Option<&Value> {
        match self {
            Args::Shared { root, path } => {
                let found = path.iter().try_fold(&**root, |v, key| v.get(key));
                // The evaluation shares only paths it found.
                Some(found.unwrap_or(&Value::Null))
            }
            Args::Value(value) => Some(value),
            Args::Map(_) | Args::List(_) => None,
        }
    }
}

/// Each way of reading a value, from the JSON value when there is one and
/// as [`Deserializer::deserialize_any`] reads a map or list otherwise.
macro_rules! read_as_json {
    ($($method:ident($($arg:ident: $ty:ty),*)),* $(,)?) => {$(
        fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, Self::Error> {
            match self.value() {
                Some(value) => value.$method($($arg,)* visitor),
                None => self.deserialize_any(visitor),
            }
        }
    )*};
}

impl<'de> Deserializer<'de> for &'de Args {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self {
            Args::Map(entries) => visitor.visit_map(Entries {
                entries: entries.iter(),
                value: None,
            }),
            Args::List(items) => visitor.visit_seq(Items(items.iter())),
            _ => self.value().unwrap_or(&Value::Null).deserialize_any(visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.value() {
            Some(value) => value.deserialize_option(visitor),
            None => visitor.visit_some(self),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        match self.value() {
            Some(value) => value.deserialize_enum(name, variants, visitor),
            // An enum written as a map holding shared values: rare, read from a copy.
            None => self.clone().into_value().deserialize_enum(name, variants, visitor),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        match self.value() {
            Some(value) => value.deserialize_newtype_struct(name, visitor),
            None => visitor.visit_newtype_struct(self),
        }
    }

    read_as_json! {
        deserialize_bool(), deserialize_i8(), deserialize_i16(), deserialize_i32(), deserialize_i64(),
        deserialize_i128(), deserialize_u8(), deserialize_u16(), deserialize_u32(), deserialize_u64(),
        deserialize_u128(), deserialize_f32(), deserialize_f64(), deserialize_char(), deserialize_str(),
        deserialize_string(), deserialize_bytes(), deserialize_byte_buf(), deserialize_unit(),
        deserialize_unit_struct(name: &'static str), deserialize_seq(), deserialize_tuple(len: usize),
        deserialize_tuple_struct(name: &'static str, len: usize), deserialize_map(),
        deserialize_struct(name: &'static str, fields: &'static [&'static str]),
        deserialize_identifier(), deserialize_ignored_any(),
    }
}

/// The entries of [`Args::Map`], keys borrowed.
struct Entries<'de> {
    entries: std::slice::Iter<'de, (String, Args)>,
    value: Option<&'de Args>,
}

impl<'de> MapAccess<'de> for Entries<'de> {
    type Error = serde_json::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, Self::Error> {
        let Some((key, value)) = self.entries.next() else {
            return Ok(None);
        };
        self.value = Some(value);
        seed.deserialize(BorrowedStrDeserializer::new(key)).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Self::Error> {
        let value = self
            .value
            .take()
            .ok_or_else(|| de::Error::custom("a value asked for before its key"))?;
        seed.deserialize(value)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

/// The items of [`Args::List`].
struct Items<'de>(std::slice::Iter<'de, Args>);

impl<'de> SeqAccess<'de> for Items<'de> {
    type Error = serde_json::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, Self::Error> {
        self.0.next().map(|item| seed.deserialize(item)).transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Call {
        scan: Scan,
        count: Option<u32>,
        missing: Option<u32>,
        kind: Kind,
        items: Vec<String>,
        nested: Option<Inner>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Scan {
        assets: String,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "snake_case")]
    enum Kind {
        Full,
        Part { from: u32 },
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Inner {
        label: String,
    }

    fn shared(root: &Arc<Value>, path: &[&str]) -> Args {
        Args::Shared {
            root: Arc::clone(root),
            path: path.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn call(kind: Args) -> Args {
        let outputs = Arc::new(json!({"scan": {"assets": "a\nb\n"}, "n": 3, "label": "x"}));
        Args::Map(vec![
            ("scan".into(), shared(&outputs, &["scan"])),
            ("count".into(), shared(&outputs, &["n"])),
            ("missing".into(), Args::Value(Value::Null)),
            ("kind".into(), kind),
            (
                "items".into(),
                Args::List(vec![shared(&outputs, &["label"]), Args::Value(json!("y"))]),
            ),
            (
                "nested".into(),
                Args::Map(vec![("label".into(), shared(&outputs, &["label"]))]),
            ),
        ])
    }

    #[test]
    fn arguments_read_from_shared_values_as_from_their_copy() {
        for kind in [
            Args::Value(json!("full")),
            Args::Value(json!({"part": {"from": 2}})),
            Args::Map(vec![("part".into(), Args::Value(json!({"from": 2})))]),
        ] {
            let args = call(kind);
            let read = Call::deserialize(&args).unwrap();
            let copied: Call = serde_json::from_value(args.clone().into_value()).unwrap();
            assert_eq!(read, copied);
            assert_eq!(read.scan.assets, "a\nb\n");
            assert_eq!(read.count, Some(3));
            assert_eq!(read.items, ["x", "y"]);
        }
    }

    #[test]
    fn a_wrong_argument_is_the_error_its_copy_gives() {
        let outputs = Arc::new(json!({"n": 5}));
        for args in [
            Args::Map(vec![("assets".into(), shared(&outputs, &["n"]))]),
            Args::Map(vec![("asets".into(), Args::Value(json!("a")))]),
            Args::List(vec![]),
        ] {
            let read = Scan::deserialize(&args).unwrap_err().to_string();
            let copied = serde_json::from_value::<Scan>(args.into_value())
                .unwrap_err()
                .to_string();
            assert_eq!(read, copied);
        }
    }
}
