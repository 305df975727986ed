//! A borrowed JSON tree for validating proposals and tool output without building a
//! `serde_json::Value`.
//!
//! The tree borrows the text it was parsed from (strings without escapes are not copied) and
//! lives in an arena (`bumpalo`): its containers are slices in the arena, so building one costs
//! a bump per container instead of an allocation, and dropping it costs nothing (the arena is
//! reset after the call). jsonschema validates custom representations through its `Json`
//! traits.

use std::borrow::Cow;
use std::fmt;

use bumpalo::Bump;
use jsonschema::json::{Array, Json, JsonNumber, Node, NodeIdentity, Object};
use jsonschema::types::JsonType;
use serde::de::{self, Deserialize, Deserializer, Visitor};
use serde_json::{Number, Value};

/// One JSON value, borrowing from the text it was parsed from and from its arena.
///
/// Nothing in it owns memory, so it needs no drop: strings with escapes are decoded into the
/// arena too.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Lite<'a> {
    Null,
    Bool(bool),
    Number(Number),
    Str(&'a str),
    Array(&'a [Lite<'a>]),
    Object(&'a [(&'a str, Lite<'a>)]),
}

/// An object's members while it is built or rewritten: in the arena, like the tree.
pub(crate) type MembersIn<'a> = bumpalo::collections::Vec<'a, (&'a str, Lite<'a>)>;

impl<'a> Lite<'a> {
    /// Parses `text`, borrowing its unescaped strings from it; containers and decoded
    /// strings are allocated in `bump`, so the tree is freed with the arena, not dropped.
    ///
    /// A hand-written recursive-descent parser rather than serde_json's `Deserializer`: the
    /// output is parsed on every call, and going through serde's visitor machinery cost about
    /// twice as many instructions as the tree it builds. It accepts exactly RFC 8259 JSON, with
    /// serde_json's own nesting limit (127 levels), and leaves the parts where exactness is subtle to
    /// serde_json itself: strings with escapes (surrogate pairs, lone surrogates) and numbers
    /// other than plain non-negative integers are decoded by it, so the tree is the one
    /// `serde_json::from_str` would give.
    pub(crate) fn parse(text: &'a str, bump: &'a Bump) -> Result<Lite<'a>, ParseError> {
        Parser::new(text, bump, None).all()
    }

    /// Parses a model's proposal on the fast path, or refuses: `None` whenever the text is not
    /// plainly acceptable, and the caller then runs the full serde_json-based parser, which
    /// gives the exact verdict and message. Refused here: anything malformed, nesting deeper
    /// than `max_depth` (the outermost container is level 1) or `MAX_DEPTH`, more than
    /// `max_values` values, a duplicate key in any object, and every number but a plain
    /// integer that fits `u64` or `i64` (the number policy for the rest lives in the full
    /// parser). What it accepts, it reads exactly as the full parser would.
    pub(crate) fn parse_checked(
        text: &'a str,
        bump: &'a Bump,
        max_depth: usize,
        max_values: usize,
    ) -> Option<Self> {
        let limits = Checks {
            max_depth: max_depth.min(MAX_DEPTH),
            max_values,
            values: 0,
        };
        Parser::new(text, bump, Some(limits)).all().ok()
    }

    /// The tree of a value (a schema default added to the arguments), in `bump`.
    pub(crate) fn from_value(value: &Value, bump: &'a Bump) -> Lite<'a> {
        match value {
            Value::Null => Lite::Null,
            Value::Bool(b) => Lite::Bool(*b),
            Value::Number(n) => Lite::Number(n.clone()),
            Value::String(s) => Lite::Str(bump.alloc_str(s)),
            Value::Array(items) => Lite::Array(
                bump.alloc_slice_fill_iter(items.iter().map(|v| Lite::from_value(v, bump))),
            ),
            Value::Object(m) => Lite::Object(
                bump.alloc_slice_fill_iter(
                    m.iter()
                        .map(|(k, v)| (&*bump.alloc_str(k), Lite::from_value(v, bump))),
                ),
            ),
        }
    }

    /// RFC 6901 lookup, like `Value::pointer`.
    pub(crate) fn pointer(&self, pointer: &str) -> Option<&Lite<'a>> {
        if pointer.is_empty() {
            return Some(self);
        }
        let mut node = self;
        for token in pointer.strip_prefix('/')?.split('/') {
            let token = token.replace("~1", "/").replace("~0", "~");
            node = match node {
                Lite::Object(members) => &members.iter().find(|(k, _)| *k == token)?.1,
                // RFC 6901 indices are plain digits: no sign, no leading zero.
                Lite::Array(items) => {
                    let plain = !token.is_empty()
                        && token.bytes().all(|b| b.is_ascii_digit())
                        && (token == "0" || !token.starts_with('0'));
                    if !plain {
                        return None;
                    }
                    items.get(token.parse::<usize>().ok()?)?
                }
                _ => return None,
            };
        }
        Some(node)
    }

    pub(crate) fn value(&self) -> Value {
        match self {
            Lite::Null => Value::Null,
            Lite::Bool(b) => Value::Bool(*b),
            Lite::Number(n) => Value::Number(n.clone()),
            Lite::Str(s) => Value::String(s.to_string()),
            Lite::Array(items) => Value::Array(items.iter().map(Lite::value).collect()),
            Lite::Object(members) => Value::Object(
                members
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.value()))
                    .collect(),
            ),
        }
    }
}

/// The text was not one JSON value (or nested deeper than 127 levels).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ParseError;

/// serde_json's recursion limit (it refuses a 128th level), kept so the same texts are refused.
const MAX_DEPTH: usize = 127;

struct Parser<'a> {
    text: &'a str,
    bump: &'a Bump,
    bytes: &'a [u8],
    pos: usize,
    depth: usize,
    /// The proposal's limits, when parsing one (see [`Lite::parse_checked`]).
    checks: Option<Checks>,
}

struct Checks {
    max_depth: usize,
    max_values: usize,
    values: usize,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str, bump: &'a Bump, checks: Option<Checks>) -> Self {
        Parser {
            text,
            bump,
            bytes: text.as_bytes(),
            pos: 0,
            depth: 0,
            checks,
        }
    }

    /// One value and nothing but whitespace after it.
    fn all(mut self) -> Result<Lite<'a>, ParseError> {
        let value = self.value()?;
        self.skip_ws();
        if self.pos != self.bytes.len() {
            return Err(ParseError);
        }
        Ok(value)
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    /// Consumes `b` after optional whitespace.
    fn eat(&mut self, b: u8) -> bool {
        self.skip_ws();
        if self.bytes.get(self.pos) == Some(&b) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn literal(&mut self, word: &[u8], value: Lite<'a>) -> Result<Lite<'a>, ParseError> {
        if self.bytes[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(ParseError)
        }
    }

    fn value(&mut self) -> Result<Lite<'a>, ParseError> {
        if let Some(c) = &mut self.checks {
            c.values += 1;
            if c.values > c.max_values {
                return Err(ParseError);
            }
        }
        self.skip_ws();
        match self.bytes.get(self.pos).copied().ok_or(ParseError)? {
            b'"' => self.string().map(Lite::Str),
            b'{' => self.object(),
            b'[' => self.array(),
            b't' => self.literal(b"true", Lite::Bool(true)),
            b'f' => self.literal(b"false", Lite::Bool(false)),
            b'n' => self.literal(b"null", Lite::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => Err(ParseError),
        }
    }

    fn enter(&mut self) -> Result<(), ParseError> {
        self.depth += 1;
        let max = self.checks.as_ref().map_or(MAX_DEPTH, |c| c.max_depth);
        if self.depth > max {
            return Err(ParseError);
        }
        self.pos += 1;
        Ok(())
    }

    fn array(&mut self) -> Result<Lite<'a>, ParseError> {
        self.enter()?;
        let mut items = bumpalo::collections::Vec::with_capacity_in(4, self.bump);
        if !self.eat(b']') {
            loop {
                items.push(self.value()?);
                if self.eat(b',') {
                    continue;
                }
                if self.eat(b']') {
                    break;
                }
                return Err(ParseError);
            }
        }
        self.depth -= 1;
        Ok(Lite::Array(items.into_bump_slice()))
    }

    fn object(&mut self) -> Result<Lite<'a>, ParseError> {
        self.enter()?;
        let mut members = MembersIn::with_capacity_in(8, self.bump);
        if !self.eat(b'}') {
            loop {
                self.skip_ws();
                if self.bytes.get(self.pos) != Some(&b'"') {
                    return Err(ParseError);
                }
                let key = self.string()?;
                if !self.eat(b':') {
                    return Err(ParseError);
                }
                members.push((key, self.value()?));
                if self.eat(b',') {
                    continue;
                }
                if self.eat(b'}') {
                    break;
                }
                return Err(ParseError);
            }
        }
        self.depth -= 1;
        if self.checks.is_some() && has_duplicate_key(&members) {
            return Err(ParseError);
        }
        Ok(Lite::Object(members.into_bump_slice()))
    }

    /// The string starting at the opening quote under `pos`: borrowed when it has no escape.
    fn string(&mut self) -> Result<&'a str, ParseError> {
        let start = self.pos + 1;
        let mut i = self.special_from(start);
        match self.bytes.get(i) {
            Some(b'"') => {
                self.pos = i + 1;
                // `start` and `i` sit next to ASCII quotes, so both are char boundaries.
                Ok(&self.text[start..i])
            }
            Some(b'\\') => {
                // Find the closing quote, stepping over each escape's second byte, then let
                // serde_json decode the escapes (and refuse lone surrogates) exactly as before.
                loop {
                    match self.bytes.get(i) {
                        Some(b'\\') => i += 2,
                        Some(b'"') => break,
                        Some(b) if *b < 0x20 => return Err(ParseError),
                        Some(_) => i = self.special_from(i + 1),
                        None => return Err(ParseError),
                    }
                }
                let quoted = self.text.get(self.pos..=i).ok_or(ParseError)?;
                self.pos = i + 1;
                serde_json::from_str::<String>(quoted)
                    .map(|s| &*self.bump.alloc_str(&s))
                    .map_err(|_| ParseError)
            }
            // A control character, or the end of the text.
            _ => Err(ParseError),
        }
    }

    /// The index of the first `"`, `\\` or control character at or after `i` (or the end).
    fn special_from(&self, i: usize) -> usize {
        crate::json_text::first_special(self.bytes, i)
    }

    fn number(&mut self) -> Result<Lite<'a>, ParseError> {
        let start = self.pos;
        let mut plain = true;
        while let Some(&b) = self.bytes.get(self.pos) {
            match b {
                b'0'..=b'9' => {}
                b'-' | b'+' | b'.' | b'e' | b'E' => plain = false,
                _ => break,
            }
            self.pos += 1;
        }
        let token = &self.text[start..self.pos];
        if self.checks.is_some() {
            // A proposal's plain integers, exact; anything else is the full parser's.
            let n: Number = if let Some(digits) = token.strip_prefix('-') {
                let plain = !digits.is_empty()
                    && digits.bytes().all(|b| b.is_ascii_digit())
                    && (digits.len() == 1 || !digits.starts_with('0'));
                if !plain || digits == "0" {
                    return Err(ParseError);
                }
                token.parse::<i64>().map_err(|_| ParseError)?.into()
            } else {
                if !plain || (token.len() > 1 && token.starts_with('0')) {
                    return Err(ParseError);
                }
                token.parse::<u64>().map_err(|_| ParseError)?.into()
            };
            return Ok(Lite::Number(n));
        }
        // Plain non-negative integers that surely fit a u64 (no leading zero); everything
        // else (signs, fractions, exponents, 20 digits) goes through serde_json.
        if plain && token.len() <= 19 && (token.len() == 1 || !token.starts_with('0')) {
            return token
                .parse::<u64>()
                .map(|n| Lite::Number(n.into()))
                .map_err(|_| ParseError);
        }
        serde_json::from_str::<Number>(token)
            .map(Lite::Number)
            .map_err(|_| ParseError)
    }
}

/// Whether two members share a name: a scan for small objects, a sort for large ones.
fn has_duplicate_key(members: &[(&str, Lite<'_>)]) -> bool {
    if members.len() <= 16 {
        return members
            .iter()
            .enumerate()
            .any(|(i, (k, _))| members[..i].iter().any(|(other, _)| other == k));
    }
    let mut keys: Vec<&str> = members.iter().map(|(k, _)| *k).collect();
    keys.sort_unstable();
    keys.windows(2).any(|w| w[0] == w[1])
}

/// A string that borrows when serde_json can hand out a borrowed `&str`.
pub(crate) struct Text<'a>(pub(crate) Cow<'a, str>);

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

/// The [`Lite`] representation, for `jsonschema::options_for::<LiteJson>()`.
pub(crate) struct LiteJson;

impl Json for LiteJson {
    type Node<'a> = &'a Lite<'a>;
    type PreparedKey = String;
    type StringBuffer = ();

    fn prepare_key(key: &str) -> String {
        key.to_owned()
    }

    fn with_string_node<T>(
        _buffer: &mut (),
        string: &str,
        f: impl FnOnce(Self::Node<'_>) -> T,
    ) -> T {
        f(&Lite::Str(string))
    }
}

pub(crate) struct LiteNumber<'a>(&'a Number);

impl JsonNumber for LiteNumber<'_> {
    fn as_u64(&self) -> Option<u64> {
        self.0.as_u64()
    }
    fn as_i64(&self) -> Option<i64> {
        self.0.as_i64()
    }
    fn as_f64(&self) -> Option<f64> {
        self.0.as_f64()
    }
    fn as_str(&self) -> Cow<'_, str> {
        Cow::Owned(self.0.to_string())
    }
    fn to_number(&self) -> Cow<'_, Number> {
        Cow::Borrowed(self.0)
    }
}

impl<'a> Node<'a, LiteJson> for &'a Lite<'a> {
    type Object = &'a [(&'a str, Lite<'a>)];
    type Array = &'a [Lite<'a>];
    type Number = LiteNumber<'a>;

    fn as_object(&self) -> Option<Self::Object> {
        match self {
            Lite::Object(m) => Some(m),
            _ => None,
        }
    }
    fn as_array(&self) -> Option<Self::Array> {
        match self {
            Lite::Array(a) => Some(a),
            _ => None,
        }
    }
    fn as_string(&self) -> Option<Cow<'a, str>> {
        match self {
            Lite::Str(s) => Some(Cow::Borrowed(s)),
            _ => None,
        }
    }
    fn as_number(&self) -> Option<LiteNumber<'a>> {
        match self {
            Lite::Number(n) => Some(LiteNumber(n)),
            _ => None,
        }
    }
    fn as_boolean(&self) -> Option<bool> {
        match self {
            Lite::Bool(b) => Some(*b),
            _ => None,
        }
    }
    fn is_null(&self) -> bool {
        matches!(self, Lite::Null)
    }
    fn json_type(&self) -> JsonType {
        match self {
            Lite::Null => JsonType::Null,
            Lite::Bool(_) => JsonType::Boolean,
            Lite::Number(_) => JsonType::Number,
            Lite::Str(_) => JsonType::String,
            Lite::Array(_) => JsonType::Array,
            Lite::Object(_) => JsonType::Object,
        }
    }
    // `enum` and `const` compare every candidate on the hot path (e.g. each item of an array
    // of enum strings): scalars compare in place; numbers and containers take the general
    // rule through a `Value` (numbers compare mathematically, objects ignore member order).
    fn equals_value(&self, expected: &Value) -> bool {
        match (*self, expected) {
            (Lite::Str(a), Value::String(b)) => a == b,
            (Lite::Bool(a), Value::Bool(b)) => a == b,
            (Lite::Null, Value::Null) => true,
            (Lite::Str(_) | Lite::Bool(_) | Lite::Null, _) => false,
            _ => jsonschema::json::cmp::equal(&self.value(), expected),
        }
    }
    // Cold paths only: error messages, `uniqueItems`.
    fn to_value(&self) -> Cow<'a, Value> {
        Cow::Owned(self.value())
    }
    fn identity(&self) -> Option<NodeIdentity> {
        Some(NodeIdentity::new(
            std::ptr::from_ref::<Lite<'a>>(*self) as usize
        ))
    }
}

impl<'a> Object<'a, LiteJson> for &'a [(&'a str, Lite<'a>)] {
    type Node = &'a Lite<'a>;
    type MemberName = &'a str;
    type MembersIter = Members<'a>;

    fn len(&self) -> usize {
        <[_]>::len(self)
    }
    fn get(&self, key: &String) -> Option<&'a Lite<'a>> {
        self.iter().find(|(name, _)| name == key).map(|(_, v)| v)
    }
    fn members(&self) -> Members<'a> {
        Members(self.iter())
    }
}

pub(crate) struct Members<'a>(std::slice::Iter<'a, (&'a str, Lite<'a>)>);

impl<'a> Iterator for Members<'a> {
    type Item = (&'a str, &'a Lite<'a>);
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(k, v)| (*k, v))
    }
}

impl<'a> Array<'a, LiteJson> for &'a [Lite<'a>] {
    type Node = &'a Lite<'a>;
    type ElementsIter = std::slice::Iter<'a, Lite<'a>>;

    fn len(&self) -> usize {
        <[_]>::len(self)
    }
    fn elements(&self) -> Self::ElementsIter {
        self.iter()
    }
    // `uniqueItems` on a short array of strings (a set of enum values, the common case) compares
    // in place; anything else takes the general rule through `Value`s.
    fn is_unique(&self) -> bool {
        if self.len() <= 16 && self.iter().all(|item| matches!(item, Lite::Str(_))) {
            return !self.iter().enumerate().any(|(i, a)| self[..i].contains(a));
        }
        let values: Vec<Value> = self.iter().map(Lite::value).collect();
        jsonschema::json::unique::is_unique(&values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn validator(schema: &Value) -> jsonschema::Validator<LiteJson> {
        jsonschema::options_for::<LiteJson>()
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(true)
            .build(schema)
            .unwrap()
    }

    /// The same verdicts as serde_json's own representation, over a spread of keywords.
    #[test]
    fn agrees_with_serde_json_values() {
        let bump = Bump::new();
        let schema = json!({
            "type": "object",
            "properties": {
                "score": {"type": "number", "minimum": 0, "maximum": 1},
                "tags": {"type": "array", "items": {"type": "string", "maxLength": 3}, "uniqueItems": true},
                "when": {"type": "string", "format": "date"},
                "kind": {"enum": ["a", "b"]},
                "n": {"type": "integer"},
                "nested": {"type": "object", "required": ["x"], "additionalProperties": false, "properties": {"x": {"const": null}}}
            },
            "required": ["score"],
            "additionalProperties": false
        });
        let lite = validator(&schema);
        let plain = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(true)
            .build(&schema)
            .unwrap();
        for instance in [
            json!({"score": 0.5}),
            json!({"score": 1.5}),
            json!({"score": 0.5, "tags": ["ab", "cd"]}),
            json!({"score": 0.5, "tags": ["ab", "ab"]}),
            json!({"score": 0.5, "tags": ["abcd"]}),
            json!({"score": 0.5, "when": "2026-02-30"}),
            json!({"score": 0.5, "when": "2026-02-03"}),
            json!({"score": 0.5, "kind": "c"}),
            json!({"score": 0.5, "n": 2.0}),
            json!({"score": 0.5, "n": 2.5}),
            json!({"score": 0.5, "nested": {"x": null}}),
            json!({"score": 0.5, "nested": {"x": 1}}),
            json!({"score": 0.5, "nested": {}}),
            json!({"score": 0.5, "extra": "\u{e9}\"\\n"}),
            json!({}),
        ] {
            let text = instance.to_string();
            let tree = Lite::parse(&text, &bump).unwrap();
            assert_eq!(
                lite.is_valid(&tree),
                plain.is_valid(&instance),
                "{instance}"
            );
        }
    }

    /// The hand-written parser accepts and refuses what serde_json does, and builds the same
    /// tree, including escapes, surrogates, number edge cases and the nesting limit.
    #[test]
    fn parses_like_serde_json() {
        let bump = Bump::new();
        let deep_ok = format!("{}{}", "[".repeat(127), "]".repeat(127));
        let deep_bad = format!("{}{}", "[".repeat(128), "]".repeat(128));
        let long = format!("\"{}\\n{}\"", "a".repeat(37), "é".repeat(9));
        let cases: Vec<&str> = vec![
            "null",
            "true",
            "false",
            "0",
            "-0",
            "7",
            "-7",
            "01",
            "1.",
            ".5",
            "1.5",
            "-1.5e3",
            "1e400",
            "-1e400",
            "1E+2",
            "18446744073709551615",
            "18446744073709551616",
            "9223372036854775807",
            "-9223372036854775808",
            "-9223372036854775809",
            "1234567890123456789",
            "00",
            "+1",
            "-",
            "1-2",
            "\"\"",
            "\"abc\"",
            "\"a\\\"b\"",
            "\"\\u00e9\\ud83d\\ude00\"",
            "\"\\ud83d\"",
            "\"\\x\"",
            "\"a\u{1}b\"",
            "\"unterminated",
            "\"ends in backslash\\",
            " [1, 2 ,3 ] ",
            "[1,]",
            "[,1]",
            "[",
            "]",
            "{}",
            "{\"a\":1,\"a\":2}",
            "{\"a\" : [true, null, {}]}",
            "{\"a\":1,}",
            "{1:2}",
            "{\"a\"}",
            "{\"a\":}",
            "nul",
            "nulls",
            "truex",
            "[] []",
            "",
            "  ",
            "\"0123456789abcdef\\\"0123456789abcdef\"",
            &deep_ok,
            &deep_bad,
            &long,
        ];
        for text in cases {
            let ours = Lite::parse(text, &bump).map(|t| t.value()).ok();
            let theirs = serde_json::from_str::<Value>(text).ok();
            assert_eq!(ours, theirs, "{text:?}");
        }
    }

    /// Any JSON value, with strings full of quotes, backslashes, control characters and
    /// astral characters (all of which serde_json escapes or not in its own way).
    fn any_json() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let text = proptest::collection::vec(
            prop_oneof![
                Just('"'),
                Just('\\'),
                Just('\u{1}'),
                Just('\n'),
                Just('é'),
                Just('😀'),
                any::<char>()
            ],
            0..24,
        )
        .prop_map(|cs| cs.into_iter().collect::<String>());
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<u64>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(|f| Number::from_f64(f).map_or(Value::Null, Value::Number)),
            text.clone().prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, move |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                proptest::collection::vec((text.clone(), inner), 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        /// Whatever serde_json writes, the hand-written parser reads back as serde_json does.
        #[test]
        fn reads_whatever_serde_json_writes(v in any_json()) {
            for text in [v.to_string(), serde_json::to_string_pretty(&v).unwrap()] {
                let ours = Lite::parse(&text, &Bump::new()).map(|t| t.value()).ok();
                proptest::prop_assert_eq!(ours, serde_json::from_str::<Value>(&text).ok());
            }
        }

        /// On any text at all, it accepts and refuses exactly what serde_json does.
        #[test]
        fn same_verdict_on_any_text(text in "[\\[\\]{}\",:0-9a-z.eE+\\\\ -]{0,24}") {
            let ours = Lite::parse(&text, &Bump::new()).map(|t| t.value()).ok();
            proptest::prop_assert_eq!(ours, serde_json::from_str::<Value>(&text).ok());
        }
    }

    #[test]
    fn unique_items_agree_with_jsonschema() {
        let bump = Bump::new();
        for items in [
            json!([]),
            json!(["a"]),
            json!(["a", "b"]),
            json!(["a", "a"]),
            json!(["b", "a", "b"]),
            json!([1, 1.0]),
            json!(["1", 1]),
            json!([{"a": 1}, {"a": 1.0}]),
            json!([[1], [2]]),
            json!([
                "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "a"
            ]),
        ] {
            let text = items.to_string();
            let tree = Lite::parse(&text, &bump).unwrap();
            let Lite::Array(elements) = &tree else {
                panic!()
            };
            let Value::Array(values) = &items else {
                panic!()
            };
            assert_eq!(
                Array::<LiteJson>::is_unique(elements),
                jsonschema::json::unique::is_unique(values),
                "{items}"
            );
        }
    }

    /// In-place equality agrees with the general rule on every pair of kinds.
    #[test]
    fn equality_agrees_with_jsonschema() {
        let bump = Bump::new();
        let values = [
            json!(null),
            json!(true),
            json!(false),
            json!(1),
            json!(1.0),
            json!(-1),
            json!("a"),
            json!("1"),
            json!([1, "a"]),
            json!([1.0, "a"]),
            json!({"a": 1, "b": [null]}),
            json!({"b": [null], "a": 1.0}),
        ];
        for left in &values {
            let text = left.to_string();
            let tree = Lite::parse(&text, &bump).unwrap();
            for right in &values {
                assert_eq!(
                    Node::<LiteJson>::equals_value(&&tree, right),
                    jsonschema::json::cmp::equal(left, right),
                    "{left} vs {right}"
                );
            }
        }
    }

    #[test]
    fn borrows_plain_strings_and_looks_up_pointers() {
        let bump = Bump::new();
        let text = r#"{"a": {"b/c": ["x", "y\n"]}}"#;
        let tree = Lite::parse(text, &bump).unwrap();
        // Plain strings point into the text itself; escaped ones are decoded into the arena.
        let Some(Lite::Str(x)) = tree.pointer("/a/b~1c/0") else {
            panic!("{tree:?}")
        };
        assert_eq!(*x, "x");
        assert!(text.as_bytes().as_ptr_range().contains(&x.as_ptr()));
        assert!(matches!(tree.pointer("/a/b~1c/1"), Some(Lite::Str(s)) if *s == "y\n"));
        assert!(tree.pointer("/a/missing").is_none());
        for bad in ["/a/b~1c/+1", "/a/b~1c/01", "/a/b~1c/"] {
            assert!(tree.pointer(bad).is_none(), "{bad}");
        }
        assert_eq!(tree.value(), serde_json::from_str::<Value>(text).unwrap());
    }
}
