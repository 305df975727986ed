//! The canonical form: the one byte string every digest, MAC and derived key in this crate is
//! computed over.
//!
//! An approval digest must change when the call changes, and an idempotency record must be
//! found again by the same request however the model spelled it. Both hold only if the bytes
//! behind a hash depend on what a value *means* and on nothing else: two values get the same
//! canonical bytes **if and only if** they are equal as JSON under the proposal's number policy
//! (`8`, `8.0` and `8e0` are one integer; any two distinct integers differ).
//!
//! # The form
//! [RFC 8785](https://www.rfc-editor.org/rfc/rfc8785) (the JSON Canonicalization Scheme), with
//! one difference for integers:
//!
//! * no whitespace; object members sorted by key, keys compared as UTF-16 code units;
//! * strings escaped minimally: `"`, `\` and the control characters below U+0020 only
//!   (`\b \t \n \f \r`, otherwise `\u00xx` in lower-case hex); everything else is written as
//!   its UTF-8 bytes;
//! * **a number whose value is an integer is written as its exact decimal digits** (`8`,
//!   `-3`, `18446744073709551615`), whether it was held as `i64`, `u64` or an integral `f64`.
//!   RFC 8785 writes every number through an IEEE-754 double, which holds every integer only
//!   below 2^53: it would write `9007199254740992` and `9007199254740993` alike, so one
//!   approval could release the other call. Snowflake ids, micro-unit amounts and nanosecond
//!   timestamps all live above 2^53;
//! * every other number is written as RFC 8785 says: ECMAScript's shortest form that reads
//!   back to the same double (`1.5`, `1e-7`, `1e+21`).
//!
//! ```
//! use serde_json::json;
//! use tool_contract::canonical;
//!
//! let text = canonical::to_vec(&json!({"b": 8.0, "a": 9007199254740993u64}));
//! assert_eq!(text, br#"{"a":9007199254740993,"b":8}"#);
//! assert_ne!(
//!     canonical::sha256(&json!({"account": 9007199254740992u64})),
//!     canonical::sha256(&json!({"account": 9007199254740993u64})),
//! );
//! ```
//!
//! # Digests
//! A digest is `sha256:` and the lower-case hex of SHA-256 over the form. Where the value holds
//! a number of magnitude 2^53 or more, SHA-256 runs over [`WIDE_TAG`] followed by the form.
//!
//! That tag is the version of the form. Version 0.1 of this crate hashed plain RFC 8785, which
//! is exact for every number below 2^53: for every value without a wider number the bytes are
//! unchanged, so grants, stored idempotency records and derived keys written by 0.1 keep their
//! meaning after an upgrade. A value with a wider number was rounded by 0.1, so its old digest
//! could equal the new digest of a *different* value (0.1's digest of `2^53 + 1` is the same as
//! this form's digest of `2^53`); the tag keeps the two apart. An old grant for such a call is
//! refused (`APPROVAL_DIGEST_MISMATCH`), an old record under the same key answers
//! `IDEMPOTENCY_KEY_REUSED` instead of a replay, and an old derived key is not found again.
//! Nothing written before is ever read as a different call.

use serde::Serialize;
use serde_json::{Number, Value};
use sha2::{Digest, Sha256};

/// Precedes the form of a value that holds a number of magnitude 2^53 or more, before it is
/// hashed (see the module docs).
pub const WIDE_TAG: &[u8] = b"tool-contract canonical/2\n";

/// From here on an `f64` no longer holds every integer.
const EXACT_LIMIT: u64 = 1 << 53;

/// The canonical bytes of `value`.
pub fn to_vec(value: &Value) -> Vec<u8> {
    let mut out = String::with_capacity(128);
    write(&mut out, value);
    out.into_bytes()
}

/// `sha256:<hex>` of `value`'s canonical form (tagged where it holds a wide number).
pub fn sha256(value: &Value) -> String {
    let mut text = String::with_capacity(128);
    let wide = write(&mut text, value);
    let mut hasher = Sha256::new();
    if wide {
        hasher.update(WIDE_TAG);
    }
    hasher.update(text.as_bytes());
    format!("sha256:{}", hex(&hasher.finalize()))
}

/// [`sha256`] of any serializable value, taken as the JSON serde_json makes of it.
///
/// A value that does not serialize to JSON (a map with non-string keys, a failing `Serialize`
/// impl) hashes as `null`: every type this crate hashes serializes infallibly, and hashing a
/// partial output would be worse.
pub fn sha256_of<T: Serialize + ?Sized>(value: &T) -> String {
    sha256(&serde_json::to_value(value).unwrap_or(Value::Null))
}

/// The bytes a MAC covers: the form, tagged as [`sha256`] tags it.
pub(crate) fn mac_input<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    let value = serde_json::to_value(value).unwrap_or(Value::Null);
    let mut text = String::with_capacity(256);
    if write(&mut text, &value) {
        let mut out = WIDE_TAG.to_vec();
        out.extend_from_slice(text.as_bytes());
        out
    } else {
        text.into_bytes()
    }
}

/// `sha256:<hex>` of a tuple of optional strings, each part length-prefixed (`0` for a missing
/// part; `1`, its length as 8 big-endian bytes and its bytes for a present one), so no two
/// different tuples give the same bytes. Idempotency records are filed under such a digest of
/// (tenant, principal, tool, version, key); the encoding is the one 0.1 used, so records stay
/// where they were filed.
pub(crate) fn sha256_parts(parts: &[Option<&str>]) -> String {
    let mut h = Sha256::new();
    for part in parts {
        match part {
            None => h.update([0u8]),
            Some(p) => {
                h.update([1u8]);
                h.update((p.len() as u64).to_be_bytes());
                h.update(p.as_bytes());
            }
        }
    }
    format!("sha256:{}", hex(&h.finalize()))
}

/// Lower-case hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    out
}

/// Appends the form of `value`; returns whether it holds a number of magnitude 2^53 or more.
fn write(out: &mut String, value: &Value) -> bool {
    match value {
        Value::Null => {
            out.push_str("null");
            false
        }
        Value::Bool(b) => {
            out.push_str(if *b { "true" } else { "false" });
            false
        }
        Value::Number(n) => write_number(out, n),
        Value::String(s) => {
            crate::json::write_str(out, s);
            false
        }
        Value::Array(items) => {
            out.push('[');
            let mut wide = false;
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                wide |= write(out, item);
            }
            out.push(']');
            wide
        }
        Value::Object(map) => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            // RFC 8785 orders keys by UTF-16 code units; for keys outside the Basic
            // Multilingual Plane that differs from the order of their UTF-8 bytes.
            members.sort_unstable_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
            out.push('{');
            let mut wide = false;
            for (i, (key, item)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                crate::json::write_str(out, key);
                out.push(':');
                wide |= write(out, item);
            }
            out.push('}');
            wide
        }
    }
}

/// Appends one number; returns whether its magnitude is 2^53 or more.
fn write_number(out: &mut String, n: &Number) -> bool {
    let mut digits = itoa::Buffer::new();
    if let Some(u) = n.as_u64() {
        out.push_str(digits.format(u));
        return u >= EXACT_LIMIT;
    }
    if let Some(i) = n.as_i64() {
        out.push_str(digits.format(i));
        return i.unsigned_abs() >= EXACT_LIMIT;
    }
    let f = n.as_f64().unwrap_or(0.0);
    // An integral double within the 64-bit range is the integer it equals: `8.0` is `8`, and
    // `2^60` as a double is `1152921504606846976`, as the same integer held as `u64` is. (The
    // casts are exact: the value is integral and the bounds are powers of two.)
    if f.fract() == 0.0 {
        if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f) {
            out.push_str(digits.format(f as i64));
        } else if (0.0..18_446_744_073_709_551_616.0).contains(&f) {
            out.push_str(digits.format(f as u64));
        } else {
            // Beyond 64 bits no integer type holds it, so nothing else can equal it: RFC 8785.
            out.push_str(ryu_js::Buffer::new().format_finite(f));
        }
        return f.abs() >= EXACT_LIMIT as f64;
    }
    // serde_json holds only finite doubles.
    out.push_str(ryu_js::Buffer::new().format_finite(f));
    f.abs() >= EXACT_LIMIT as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(v: &Value) -> String {
        String::from_utf8(to_vec(v)).unwrap()
    }

    #[test]
    fn follows_rfc8785_for_keys_strings_and_fractions() {
        // RFC 8785 §3.2.3: keys sorted by UTF-16 code units; numbers in ES6 shortest form.
        let v = json!({"z": 1.0, "a": "\u{20ac}", "\u{e9}": true, "1e3": 1e3, "f": 0.1, "g": 1e-7, "h": 1e21});
        assert_eq!(
            text(&v),
            r#"{"1e3":1000,"a":"€","f":0.1,"g":1e-7,"h":1e+21,"z":1,"é":true}"#
        );
        // U+1D11E sorts after U+FB33 in UTF-8 but before it in UTF-16 (a surrogate pair).
        let v = json!({"\u{fb33}": 2, "\u{1d11e}": 1});
        assert_eq!(text(&v), "{\"\u{1d11e}\":1,\"\u{fb33}\":2}");
        assert_eq!(
            text(&json!("a\"\\/\u{7}\n\u{7f}\u{2028}")),
            "\"a\\\"\\\\/\\u0007\\n\u{7f}\u{2028}\""
        );
    }

    #[test]
    fn integers_are_exact_and_integral_doubles_are_integers() {
        assert_eq!(text(&json!(9_007_199_254_740_993u64)), "9007199254740993");
        assert_eq!(text(&json!(u64::MAX)), "18446744073709551615");
        assert_eq!(text(&json!(i64::MIN)), "-9223372036854775808");
        assert_eq!(text(&json!(8.0)), "8");
        assert_eq!(text(&json!(-0.0)), "0");
        assert_eq!(
            text(&json!(1_152_921_504_606_846_976.0)),
            "1152921504606846976"
        );
        assert_eq!(text(&json!(1e20)), "100000000000000000000");
        assert_eq!(text(&json!(1e300)), "1e+300");
    }

    #[test]
    fn wide_numbers_are_tagged_and_nothing_else_is() {
        let narrow = json!({"a": [9_007_199_254_740_991u64, -9_007_199_254_740_991i64, 0.5]});
        let plain = format!("sha256:{}", hex(&Sha256::digest(to_vec(&narrow))));
        assert_eq!(sha256(&narrow), plain);
        for wide in [
            json!(9_007_199_254_740_992u64),
            json!(-9_007_199_254_740_992i64),
            json!({"a": [1, {"b": 1e300}]}),
        ] {
            let mut tagged = WIDE_TAG.to_vec();
            tagged.extend(to_vec(&wide));
            assert_eq!(
                sha256(&wide),
                format!("sha256:{}", hex(&Sha256::digest(&tagged))),
                "{wide}"
            );
        }
    }

    #[test]
    fn parts_are_length_prefixed() {
        assert_ne!(
            sha256_parts(&[Some("ab"), Some("c")]),
            sha256_parts(&[Some("a"), Some("bc")])
        );
        assert_ne!(
            sha256_parts(&[None, Some("")]),
            sha256_parts(&[Some(""), None])
        );
        assert_eq!(sha256_parts(&[Some("a")]).len(), "sha256:".len() + 64);
    }

    /// Exact numeric value: integers (and integral doubles) as `i128`, other doubles as they are.
    #[derive(PartialEq, Debug)]
    enum Num {
        Int(i128),
        Float(f64),
    }

    fn num(n: &Number) -> Num {
        if let Some(u) = n.as_u64() {
            return Num::Int(i128::from(u));
        }
        if let Some(i) = n.as_i64() {
            return Num::Int(i128::from(i));
        }
        let f = n.as_f64().unwrap();
        if f.fract() == 0.0 && f.abs() < 1.7e38 {
            Num::Int(f as i128)
        } else {
            Num::Float(f)
        }
    }

    /// Equality under the number policy: numbers by exact value, objects whatever their order.
    fn same(a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::Number(x), Value::Number(y)) => num(x) == num(y),
            (Value::Array(x), Value::Array(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
            }
            (Value::Object(x), Value::Object(y)) => {
                x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
            }
            _ => a == b,
        }
    }

    /// Values whose leaves come from a small set with many near-collisions: integers on both
    /// sides of 2^53, the same numbers held as doubles, `-0.0`, strings that differ by one
    /// escape. Two values drawn from it are often equal, often nearly so.
    fn near_collisions() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let two53 = 1u64 << 53;
        let leaf = prop_oneof![
            Just(json!(0)),
            Just(json!(-0.0)),
            Just(json!(8)),
            Just(json!(8.0)),
            Just(json!(two53)),
            Just(json!(two53 + 1)),
            Just(json!(two53 as f64)),
            Just(json!(-(two53 as i64) - 1)),
            Just(json!(u64::MAX)),
            Just(json!(i64::MIN)),
            Just(json!(i64::MIN as f64)),
            Just(json!(0.5)),
            Just(json!(1e300)),
            Just(json!("a")),
            Just(json!("a\n")),
            Just(json!("\u{1d11e}")),
            Just(json!(null)),
            Just(json!(true)),
        ];
        leaf.prop_recursive(3, 16, 3, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                proptest::collection::vec(
                    (prop_oneof![Just("a"), Just("b"), Just("\u{fb33}")], inner),
                    0..3
                )
                .prop_map(|m| Value::Object(
                    m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
                )),
            ]
        })
    }

    /// Any JSON value whose numbers are all narrower than 2^53, where plain RFC 8785 is exact.
    fn narrow_json() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let limit = (1i64 << 53) - 1;
        let text = proptest::collection::vec(
            prop_oneof![
                Just('"'),
                Just('\\'),
                Just('\u{1}'),
                Just('\u{7f}'),
                Just('/'),
                Just('é'),
                Just('\u{fb33}'),
                Just('😀'),
                any::<char>()
            ],
            0..12,
        )
        .prop_map(|cs| cs.into_iter().collect::<String>());
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-limit..=limit).prop_map(Value::from),
            any::<f64>()
                .prop_filter("narrow", |f| f.abs() < 9_007_199_254_740_992.0)
                .prop_map(|f| Number::from_f64(f).map_or(Value::Null, Value::Number)),
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
        /// Below 2^53 the form is plain RFC 8785, byte for byte, and so every digest is the one
        /// 0.1 of this crate wrote: a differential test against an independent RFC 8785 writer.
        #[test]
        fn narrow_values_are_plain_rfc8785(v in narrow_json()) {
            let theirs = serde_json_canonicalizer::to_vec(&v).unwrap();
            proptest::prop_assert_eq!(String::from_utf8(to_vec(&v)).unwrap(), String::from_utf8(theirs.clone()).unwrap());
            proptest::prop_assert_eq!(sha256(&v), format!("sha256:{}", hex(&Sha256::digest(&theirs))));
        }

        /// Two values get the same bytes and digest if and only if they are equal under the
        /// number policy.
        #[test]
        fn same_bytes_iff_same_value(a in near_collisions(), b in near_collisions()) {
            let equal = same(&a, &b);
            proptest::prop_assert_eq!(to_vec(&a) == to_vec(&b), equal, "{} vs {}", a, b);
            proptest::prop_assert_eq!(sha256(&a) == sha256(&b), equal, "{} vs {}", a, b);
        }

        /// Over the whole 64-bit ranges, two integers share a digest only if they are equal,
        /// and an integer held as a double (where a double holds it exactly) shares its digest.
        #[test]
        fn every_integer_is_exact(a in proptest::num::u64::ANY, b in proptest::num::i64::ANY) {
            let (x, y) = (json!({"n": a}), json!({"n": b}));
            proptest::prop_assert_eq!(sha256(&x) == sha256(&y), i128::from(a) == i128::from(b));
            proptest::prop_assert_ne!(sha256(&x), sha256(&json!({"n": a.wrapping_add(1)})));
            proptest::prop_assert_ne!(sha256(&y), sha256(&json!({"n": b.wrapping_sub(1)})));
            proptest::prop_assert_eq!(String::from_utf8(to_vec(&x)).unwrap(), format!("{{\"n\":{a}}}"));
            let as_double = a as f64;
            if as_double as u64 == a && as_double < 18_446_744_073_709_551_616.0 {
                proptest::prop_assert_eq!(sha256(&x), sha256(&json!({"n": as_double})));
            }
        }
    }
}
