//! The fast path of `Registry::prepare_raw`, for the common proposal: parsed into a borrowed
//! tree ([`Lite`]), planned, validated and decoded from that tree, with no
//! `serde_json::Value` built unless something asks for one.
//!
//! It decides nothing on its own: every step either succeeds exactly as the full path would,
//! or hands the whole proposal to the full path (which then gives the verdict, the error and
//! its message). So it only ever takes proposals the full path would accept, and yields the
//! same call.

use std::fmt;
use std::sync::OnceLock;

use bumpalo::Bump;
use serde::de::{
    self, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess, Visitor,
};
use serde_json::Value;

use crate::lite::Lite;
use crate::proposal::{Proposal, ProposalLimits};
use crate::validate::ArgsPlan;

/// A call's validated arguments as a `Value` (nulls dropped, defaults applied).
///
/// The full path has the `Value` from the start. The fast path keeps the proposal text and
/// builds the `Value` on first use (receipts, approval subjects, idempotency keys and hashes,
/// `arguments()`), by the full path's own steps: parse, then the plan.
pub(crate) struct Args {
    value: OnceLock<Value>,
    source: Option<(Box<str>, ProposalLimits)>,
}

impl Args {
    pub(crate) fn ready(value: Value) -> Self {
        Args {
            value: OnceLock::from(value),
            source: None,
        }
    }

    pub(crate) fn deferred(raw: &str, limits: ProposalLimits) -> Self {
        Args {
            value: OnceLock::new(),
            source: Some((raw.into(), limits)),
        }
    }

    /// The arguments, built now if need be with `plan` (the entry's).
    pub(crate) fn get(&self, plan: &ArgsPlan) -> &Value {
        self.value.get_or_init(|| {
            let Some((raw, limits)) = &self.source else {
                return Value::Null;
            };
            // The fast path accepted this text, so the full parser does too. Were that ever
            // not so, the raw text stands in: unlike `null`, two different proposals can
            // never share it, so no hash, digest or derived key could confuse them.
            let mut args = Proposal::parse(raw, limits)
                .map_or_else(|_| Value::String(raw.to_string()), |p| p.arguments);
            plan.apply(&mut args);
            args
        })
    }

    /// Takes the arguments out (for the receipt), building them if need be.
    pub(crate) fn take(&mut self, plan: &ArgsPlan) -> Value {
        self.get(plan);
        self.value.take().unwrap_or(Value::Null)
    }
}

/// The fast path's reading of a proposal: the tool name, the provider's call id if it is
/// usable, and the arguments object. `None` for any other shape (`function`, `input`,
/// `call_id`, string arguments, other members), left to the full path.
pub(crate) fn proposal<'a>(
    raw: &'a str,
    bump: &'a Bump,
    limits: &ProposalLimits,
) -> Option<(Lite<'a>, Option<Lite<'a>>, Lite<'a>)> {
    if raw.len() > limits.max_bytes {
        return None;
    }
    let Lite::Object(members) =
        Lite::parse_checked(raw, bump, limits.max_depth, limits.max_values)?
    else {
        return None;
    };
    let (mut name, mut id, mut arguments) = (None, None, None);
    for (key, value) in members {
        let slot = match *key {
            "name" => &mut name,
            "id" => &mut id,
            "arguments" => &mut arguments,
            _ => return None,
        };
        *slot = Some(value.clone());
    }
    let name = name?;
    let arguments = arguments?;
    match (&name, &id, &arguments) {
        (Lite::Str(n), None | Some(Lite::Str(_)), Lite::Object(_))
            if !n.is_empty() && n.len() <= 128 =>
        {
            Some((name, id, arguments))
        }
        _ => None,
    }
}

/// The provider's call id as the full path keeps it: 1 to 128 visible ASCII characters, else
/// none (the registry then makes one).
pub(crate) fn call_id(id: Option<&Lite<'_>>) -> Option<String> {
    match id {
        Some(Lite::Str(s))
            if !s.is_empty() && s.len() <= 128 && s.bytes().all(|b| b.is_ascii_graphic()) =>
        {
            Some(s.to_string())
        }
        _ => None,
    }
}

/// Decodes the arguments from the tree the way serde_json decodes them from a `&Value`, on
/// everything that succeeds; an error only means "take the full path", so its wording is
/// serde's plain one.
pub(crate) struct LiteDe<'a, 'b>(pub(crate) &'a Lite<'b>);

type Error = de::value::Error;

impl<'de> Deserializer<'de> for LiteDe<'_, '_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Lite::Null => visitor.visit_unit(),
            Lite::Bool(b) => visitor.visit_bool(*b),
            Lite::Number(n) => n.deserialize_any(visitor).map_err(de::Error::custom),
            Lite::Str(s) => visitor.visit_str(s),
            Lite::Array(items) => {
                let mut seq = Seq(items.iter());
                let value = visitor.visit_seq(&mut seq)?;
                // Like serde_json: elements the type did not take are an error.
                match seq.0.len() {
                    0 => Ok(value),
                    _ => Err(de::Error::invalid_length(items.len(), &"fewer elements")),
                }
            }
            Lite::Object(members) => {
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
            Lite::Null => visitor.visit_none(),
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
            Lite::Str(s) => visitor.visit_enum((*s).into_deserializer()),
            Lite::Object(members) if members.len() == 1 => {
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
            Lite::Str(s) => visitor.visit_str(s),
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

struct Seq<'a, 'b>(std::slice::Iter<'a, Lite<'b>>);

impl<'de> SeqAccess<'de> for Seq<'_, '_> {
    type Error = Error;
    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        self.0
            .next()
            .map(|v| seed.deserialize(LiteDe(v)))
            .transpose()
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

struct Members<'a, 'b> {
    iter: std::slice::Iter<'a, (&'b str, Lite<'b>)>,
    value: Option<&'a Lite<'b>>,
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
            Some(v) => seed.deserialize(LiteDe(v)),
            None => Err(de::Error::custom("a value before its key")),
        }
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

struct Variant<'a, 'b> {
    name: &'a str,
    value: &'a Lite<'b>,
}

impl<'de, 'a, 'b> de::EnumAccess<'de> for Variant<'a, 'b> {
    type Error = Error;
    type Variant = LiteDe<'a, 'b>;
    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, Self::Variant), Error> {
        let name = seed.deserialize(de::value::StrDeserializer::<Error>::new(self.name))?;
        Ok((name, LiteDe(self.value)))
    }
}

impl<'de> de::VariantAccess<'de> for LiteDe<'_, '_> {
    type Error = Error;
    fn unit_variant(self) -> Result<(), Error> {
        match self.0 {
            Lite::Null => Ok(()),
            _ => Err(de::Error::custom("a unit variant with content")),
        }
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Error> {
        seed.deserialize(self)
    }
    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Lite::Array(_) => self.deserialize_any(visitor),
            _ => Err(de::Error::custom("not a tuple variant")),
        }
    }
    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            Lite::Object(_) => self.deserialize_any(visitor),
            _ => Err(de::Error::custom("not a struct variant")),
        }
    }
}

impl fmt::Debug for Args {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.value.get() {
            Some(v) => v.fmt(f),
            None => f.write_str("(not yet built)"),
        }
    }
}
