//! Decoding a Rust type straight from a [`Tree`], as serde_json decodes it from a `&Value`.

use serde::de::{
    self, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess, Visitor,
};

use super::tree::Tree;

/// A `Deserializer` over a [`Tree`]: decodes a type from the tree the way serde_json decodes it
/// from a `&Value`, on everything that succeeds. An error only means "decode it from the
/// `Value` instead" (the proposal's full path gives the error the model sees), so its wording
/// is serde's plain one.
pub(crate) struct FromTree<'a, 'b>(pub(crate) &'a Tree<'b>);

type Error = de::value::Error;

impl<'de> Deserializer<'de> for FromTree<'_, '_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Tree::Null => visitor.visit_unit(),
            Tree::Bool(b) => visitor.visit_bool(*b),
            Tree::Number(n) => n.deserialize_any(visitor).map_err(de::Error::custom),
            Tree::Str(s) => visitor.visit_str(s),
            Tree::Array(items) => {
                let mut seq = Items(items.iter());
                let value = visitor.visit_seq(&mut seq)?;
                // Like serde_json: elements the type did not take are an error.
                match seq.0.len() {
                    0 => Ok(value),
                    _ => Err(de::Error::invalid_length(items.len(), &"fewer elements")),
                }
            }
            Tree::Object(members) => {
                let mut map = Members {
                    iter: members.iter(),
                    value: None,
                };
                let value = visitor.visit_map(&mut map)?;
                match map.iter.len() {
                    0 => Ok(value),
                    _ => Err(de::Error::invalid_length(members.len(), &"fewer members")),
                }
            }
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Tree::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            Tree::Str(s) => visitor.visit_enum((*s).into_deserializer()),
            Tree::Object(members) if members.len() == 1 => {
                let (variant, value) = &members[0];
                visitor.visit_enum(Variant {
                    name: variant,
                    value,
                })
            }
            _ => Err(de::Error::custom("not an enum")),
        }
    }

    // Strings only, as serde_json's `&Value` does (a number is never an identifier here).
    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Tree::Str(s) => visitor.visit_str(s),
            _ => Err(de::Error::custom("not a string")),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char bytes byte_buf unit
        unit_struct seq tuple tuple_struct map struct
    }
}

struct Items<'a, 'b>(std::slice::Iter<'a, Tree<'b>>);

impl<'de> SeqAccess<'de> for Items<'_, '_> {
    type Error = Error;
    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        self.0
            .next()
            .map(|v| seed.deserialize(FromTree(v)))
            .transpose()
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

struct Members<'a, 'b> {
    iter: std::slice::Iter<'a, (&'b str, Tree<'b>)>,
    value: Option<&'a Tree<'b>>,
}

impl<'de> MapAccess<'de> for Members<'_, '_> {
    type Error = Error;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some((key, value)) = self.iter.next() else {
            return Ok(None);
        };
        self.value = Some(value);
        // Keys as plain strings: a key that is only readable as a number or a bool (which
        // serde_json's key deserializer would parse) fails here and takes the full path.
        seed.deserialize(de::value::StrDeserializer::<Error>::new(key))
            .map(Some)
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        match self.value.take() {
            Some(v) => seed.deserialize(FromTree(v)),
            None => Err(de::Error::custom("a value before its key")),
        }
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

struct Variant<'a, 'b> {
    name: &'a str,
    value: &'a Tree<'b>,
}

impl<'de, 'a, 'b> de::EnumAccess<'de> for Variant<'a, 'b> {
    type Error = Error;
    type Variant = FromTree<'a, 'b>;
    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, Self::Variant), Error> {
        let name = seed.deserialize(de::value::StrDeserializer::<Error>::new(self.name))?;
        Ok((name, FromTree(self.value)))
    }
}

impl<'de> de::VariantAccess<'de> for FromTree<'_, '_> {
    type Error = Error;
    fn unit_variant(self) -> Result<(), Error> {
        match self.0 {
            Tree::Null => Ok(()),
            _ => Err(de::Error::custom("a unit variant with content")),
        }
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Error> {
        seed.deserialize(self)
    }
    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Tree::Array(_) => self.deserialize_any(visitor),
            _ => Err(de::Error::custom("not a tuple variant")),
        }
    }
    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            Tree::Object(_) => self.deserialize_any(visitor),
            _ => Err(de::Error::custom("not a struct variant")),
        }
    }
}
