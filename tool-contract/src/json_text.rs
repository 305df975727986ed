//! JSON text written by hand on the hot path, byte for byte what serde_json writes.
//!
//! serde_json escapes strings one byte at a time through a lookup table; the envelope's data
//! is mostly long prose (document spans), so that loop was the pipeline's largest single cost.
//! Here eight bytes are tested at once and clean runs are copied whole. The escapes are
//! serde_json's own: `\"`, `\\`, `\b`, `\t`, `\n`, `\f`, `\r`, and `\u00xx` (lowercase hex)
//! for the other control characters; nothing else is escaped.

use std::fmt::Write as _;
use std::sync::OnceLock;

use serde::de::value::{Error as DeError, MapDeserializer};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Number;

use crate::lite::Lite;

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The bytes of `w` (little-endian) that are control characters, `"` or `\`: the high bit of
/// each such byte is set.
///
/// The usual SWAR tests: `(x - ONES) & !x & HIGHS` flags the zero bytes of `x`, and
/// `(w - n * ONES) & !w & HIGHS` the bytes below `n` (`n` ≤ 128). A borrow can flag a byte
/// above a real match, never below one and never without one, so the lowest flag is exact.
#[inline]
fn specials(w: u64) -> u64 {
    let below_space = w.wrapping_sub(0x20 * ONES) & !w;
    let q = w ^ (u64::from(b'"') * ONES);
    let quote = q.wrapping_sub(ONES) & !q;
    let b = w ^ (u64::from(b'\\') * ONES);
    let backslash = b.wrapping_sub(ONES) & !b;
    (below_space | quote | backslash) & HIGHS
}

/// The index of the first control character, `"` or `\` in `bytes` at or after `from`, or
/// `bytes.len()`: what both the proposal parser (where a string ends) and the writer (whether
/// a string needs escaping) ask. Eight bytes at a time; tool text is mostly long prose.
// Always inlined: called once per string on the hot path, where a call cost more than the
// scan of a short string (measured: +0.6 k instructions per pipeline call out of line).
#[inline(always)]
pub(crate) fn first_special(bytes: &[u8], from: usize) -> usize {
    let word_at = |i: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&bytes[i..i + 8]);
        specials(u64::from_le_bytes(w))
    };
    let mut i = from;
    while i + 8 <= bytes.len() {
        let hits = word_at(i);
        if hits != 0 {
            return i + (hits.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    if i < bytes.len() && bytes.len() >= from + 8 {
        // The last eight bytes, overlapping words already found clean (never bytes before
        // `from`, which may be anything): one load, not a byte loop, and its lowest flag is
        // still exact, since every real match in it lies at `i` or above.
        let start = bytes.len() - 8;
        let hits = word_at(start);
        return if hits == 0 {
            bytes.len()
        } else {
            start + (hits.trailing_zeros() / 8) as usize
        };
    }
    while i < bytes.len() && ESCAPES[usize::from(bytes[i])].is_empty() {
        i += 1;
    }
    i
}

/// The escape of each byte that needs one (serde_json's table); `""` for the rest.
static ESCAPES: [&str; 256] = {
    let mut t = [""; 256];
    let short: [&str; 32] = [
        "\\u0000", "\\u0001", "\\u0002", "\\u0003", "\\u0004", "\\u0005", "\\u0006", "\\u0007",
        "\\b", "\\t", "\\n", "\\u000b", "\\f", "\\r", "\\u000e", "\\u000f", "\\u0010", "\\u0011",
        "\\u0012", "\\u0013", "\\u0014", "\\u0015", "\\u0016", "\\u0017", "\\u0018", "\\u0019",
        "\\u001a", "\\u001b", "\\u001c", "\\u001d", "\\u001e", "\\u001f",
    ];
    let mut b = 0;
    while b < 32 {
        t[b] = short[b];
        b += 1;
    }
    t[b'"' as usize] = "\\\"";
    t[b'\\' as usize] = "\\\\";
    t
};

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

const MARKER: &str = "$serde_json::private::RawValue";

fn handover(text: String) -> Option<Box<RawValue>> {
    let map = MapDeserializer::<_, DeError>::new(std::iter::once((MARKER, text)));
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
pub(crate) fn write_tree(out: &mut String, tree: &Lite<'_>) {
    match tree {
        Lite::Null => out.push_str("null"),
        Lite::Bool(true) => out.push_str("true"),
        Lite::Bool(false) => out.push_str("false"),
        Lite::Number(n) => write_number(out, n),
        Lite::Str(s) => write_str(out, s),
        Lite::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_tree(out, item);
            }
            out.push(']');
        }
        Lite::Object(members) => {
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

    /// What `first_special` must find, one byte at a time.
    fn first_special_naive(bytes: &[u8], from: usize) -> usize {
        (from..bytes.len())
            .find(|&i| bytes[i] < 0x20 || bytes[i] == b'"' || bytes[i] == b'\\')
            .unwrap_or(bytes.len())
    }

    proptest! {
        #[test]
        fn first_special_finds_the_first_from_any_start(
            noisy in "[\\x00-\\x21\"\\\\a-c\u{e9}]{0,20}",
            clean in "[a-z\u{e9}]{0,30}",
            tail in "[\\x00\"\\\\]?[a-z]{0,12}",
            from in 0usize..72,
        ) {
            // Specials before, inside and after long clean runs, and starts on either side.
            let s = format!("{noisy}{clean}{tail}");
            let bytes = s.as_bytes();
            let from = from.min(bytes.len());
            prop_assert_eq!(first_special(bytes, from), first_special_naive(bytes, from));
        }

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
