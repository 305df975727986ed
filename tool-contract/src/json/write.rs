//! JSON text written by hand on the hot path, byte for byte what serde_json writes.
//!
//! serde_json escapes strings one byte at a time through a lookup table; the envelope's data
//! is mostly long prose (document spans), so that loop would be the pipeline's largest single
//! cost. Here eight bytes are tested at once ([`super::scan`]) and clean runs are copied
//! whole. The escapes are serde_json's own: `\"`, `\\`, `\b`, `\t`, `\n`, `\f`, `\r`, and
//! `\u00xx` (lowercase hex) for the other control characters; nothing else is escaped. Every
//! writer here is proptested against serde_json.

use std::fmt::Write as _;
use std::sync::OnceLock;

use serde::de::value::{Error as DeError, MapDeserializer};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Number;

use super::scan::{first_special, ESCAPES};
use super::tree::Tree;

/// Appends `s` as a JSON string, quotes included.
pub(crate) fn write_str(out: &mut String, s: &str) {
    out.reserve(s.len() + 2);
    out.push('"');
    let first = first_special(s.as_bytes(), 0);
    if first == s.len() {
        out.push_str(s);
    } else {
        write_escaped(out, s, first);
    }
    out.push('"');
}

/// Writes `s` escaped; `first` is its first byte that needs an escape.
#[cold]
fn write_escaped(out: &mut String, s: &str, first: usize) {
    // `start..` is the clean run not yet copied; it only ever ends before an ASCII byte, so
    // every slice taken is on a char boundary.
    let mut start = 0;
    for (i, &byte) in s.as_bytes().iter().enumerate().skip(first) {
        let esc = ESCAPES[usize::from(byte)];
        if !esc.is_empty() {
            out.push_str(&s[start..i]);
            out.push_str(esc);
            start = i + 1;
        }
    }
    out.push_str(&s[start..]);
}

/// `text`, which [`write_tree`] wrote and so is valid JSON, as a `RawValue` without parsing
/// it again (`RawValue::from_string` parses: for a small envelope that cost as much as writing
/// it).
///
/// serde_json builds a `Box<RawValue>` from a string handed to its `Deserialize` impl as a
/// one-entry map under its marker key; that is how its own serializer and `Value` deserializer
/// pass raw text along. The marker is not public API, so this checks once that the handover
/// still round-trips, and otherwise (a future serde_json) parses as `from_string` does.
pub(crate) fn raw_value(text: String) -> Result<Box<RawValue>, serde_json::Error> {
    if !handover_works() {
        return RawValue::from_string(text);
    }
    // Refused only if the probe's verdict no longer held; the caller then serializes anew.
    handover(text).ok_or_else(|| serde::de::Error::custom("raw value handover refused"))
}

fn handover(text: String) -> Option<Box<RawValue>> {
    let map = MapDeserializer::<_, DeError>::new(std::iter::once((super::RAW_VALUE_TOKEN, text)));
    Box::<RawValue>::deserialize(map).ok()
}

fn handover_works() -> bool {
    static WORKS: OnceLock<bool> = OnceLock::new();
    *WORKS.get_or_init(|| {
        let probe = r#"{"a":[1,"\u0000"]}"#;
        handover(probe.to_owned()).is_some_and(|raw| raw.get() == probe)
    })
}

/// Appends a number as serde_json writes it.
pub(crate) fn write_number(out: &mut String, n: &Number) {
    if let Some(u) = n.as_u64() {
        out.push_str(itoa::Buffer::new().format(u));
    } else if let Some(i) = n.as_i64() {
        out.push_str(itoa::Buffer::new().format(i));
    } else {
        // `Number`'s own `Display`, not the float formatter it happens to use: serde_json
        // changed formatters within 1.x (ryu to zmij, which differ on `1e300`), and the text
        // must follow whichever serde_json the host builds with.
        let _ = write!(out, "{n}");
    }
}

/// Appends `tree` as compact JSON, the text `serde_json::to_string` gives for the same value.
pub(crate) fn write_tree(out: &mut String, tree: &Tree<'_>) {
    match tree {
        Tree::Null => out.push_str("null"),
        Tree::Bool(true) => out.push_str("true"),
        Tree::Bool(false) => out.push_str("false"),
        Tree::Number(n) => write_number(out, n),
        Tree::Str(s) => write_str(out, s),
        Tree::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_tree(out, item);
            }
            out.push(']');
        }
        Tree::Object(members) => {
            out.push('{');
            for (i, (k, v)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_str(out, k);
                out.push(':');
                write_tree(out, v);
            }
            out.push('}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn same_as_serde(s: &str) {
        let mut out = String::new();
        write_str(&mut out, s);
        assert_eq!(out, serde_json::to_string(s).unwrap(), "for {s:?}");
    }

    #[test]
    fn every_byte_that_needs_escaping_at_every_offset() {
        for b in (0u8..0x20).chain([b'"', b'\\', 0x7f, b'/', b'<']) {
            for offset in 0..20 {
                let mut s = "a".repeat(offset);
                s.push(char::from(b));
                s.push_str("tail bytes here");
                same_as_serde(&s);
            }
        }
    }

    #[test]
    fn multibyte_text_and_edges() {
        for s in [
            "",
            "a",
            "12345678",
            "1234567\"",
            "refund policy: 30 days — no questions asked",
            "한국어 문서 \"인용\"\n다음 줄",
            "\u{1f600}\u{1f600}\\\u{7}",
            "\u{2028}\u{2029}\u{feff}",
        ] {
            same_as_serde(s);
        }
    }

    #[test]
    fn raw_value_keeps_the_text_without_reparsing() {
        let text = r#"{"a":[1,2.5,"x\"y",null,true]}"#.to_owned();
        let raw = raw_value(text.clone()).unwrap();
        assert_eq!(raw.get(), text);
        // The handover is taken (not the parsing fallback): otherwise the hot path pays a
        // second parse per envelope and BENCHMARKS.md no longer describes it.
        assert!(handover_works());
    }

    /// Floats at the edges of `f64` come out as serde_json's serializer writes them.
    #[test]
    fn extreme_floats_match_serde_json() {
        let extremes = [
            f64::MAX,
            f64::MIN,
            f64::MIN_POSITIVE,
            -f64::MIN_POSITIVE,
            f64::EPSILON,
            5e-324,
            -5e-324,
            -2.2250738585072014e-308,
            1e300,
            -0.0,
            0.1 + 0.2,
            -123456789.12345679,
        ];
        for f in extremes {
            let n = Number::from_f64(f).unwrap();
            let mut out = String::new();
            write_number(&mut out, &n);
            assert_eq!(out, serde_json::to_string(&n).unwrap(), "{f:e}");
        }
    }

    proptest! {
        #[test]
        fn any_string_matches_serde_json(s in any::<String>()) {
            let mut out = String::new();
            write_str(&mut out, &s);
            prop_assert_eq!(out, serde_json::to_string(&s).unwrap());
        }

        #[test]
        fn control_heavy_strings_match_serde_json(s in "[\\x00-\\x21\"\\\\a-c\u{e9}\u{1f600}]{0,40}") {
            let mut out = String::new();
            write_str(&mut out, &s);
            prop_assert_eq!(out, serde_json::to_string(&s).unwrap());
        }

        #[test]
        fn any_number_matches_serde_json(f in any::<f64>(), i in any::<i64>(), u in any::<u64>()) {
            for n in [Number::from_f64(f), Some(Number::from(i)), Some(Number::from(u))].into_iter().flatten() {
                let mut out = String::new();
                write_number(&mut out, &n);
                prop_assert_eq!(out, serde_json::to_string(&n).unwrap());
            }
        }
    }
}
