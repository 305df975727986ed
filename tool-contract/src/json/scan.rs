//! The one scanner for the bytes JSON strings must escape: control characters, `"` and `\`.
//! The parser asks where a string ends, the writer whether a string needs escaping; both ask
//! here. Tool text is mostly long prose, so eight bytes are tested at once (SWAR). The
//! envelope's prompt block asks the same loop, with its own bytes, where its body needs an
//! escape.

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
// Always inlined: called once per string on the hot path, where an out-of-line call costs
// more than scanning a short string.
#[inline(always)]
pub(crate) fn first_special(bytes: &[u8], from: usize) -> usize {
    first_flagged(bytes, from, specials, |b| {
        !ESCAPES[usize::from(b)].is_empty()
    })
}

/// The bytes of `w` (little-endian) a prompt block's body stops on: `<`, `>`, `&` and every
/// byte of a non-ASCII character (which may be an invisible one): the high bit of each such
/// byte is set. The same tests as [`specials`], so the lowest flag is exact.
#[inline]
fn prompt_specials(w: u64) -> u64 {
    let equal = |byte: u8| {
        let x = w ^ (u64::from(byte) * ONES);
        x.wrapping_sub(ONES) & !x
    };
    (equal(b'<') | equal(b'>') | equal(b'&') | w) & HIGHS
}

/// The index of the first `<`, `>`, `&` or non-ASCII byte in `bytes` at or after `from`, or
/// `bytes.len()`: where the prompt block's body escape must look closer. Envelope JSON is
/// mostly ASCII with none of the three, so it is scanned eight bytes at a time.
#[inline]
pub(crate) fn first_prompt_special(bytes: &[u8], from: usize) -> usize {
    first_flagged(bytes, from, prompt_specials, |b| {
        matches!(b, b'<' | b'>' | b'&') || !b.is_ascii()
    })
}

/// The scan both of the above share: words of eight bytes through `flags` (which sets the
/// high bit of each byte it stops on, the lowest flag exact), the last bytes through `stop`.
#[inline(always)]
fn first_flagged(
    bytes: &[u8],
    from: usize,
    flags: impl Fn(u64) -> u64,
    stop: impl Fn(u8) -> bool,
) -> usize {
    let word_at = |i: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&bytes[i..i + 8]);
        flags(u64::from_le_bytes(w))
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
    while i < bytes.len() && !stop(bytes[i]) {
        i += 1;
    }
    i
}

/// The escape of each byte that needs one (serde_json's table); `""` for the rest.
pub(super) static ESCAPES: [&str; 256] = {
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `scan` against the first byte at or after `from` that `stop` picks, one at a time.
    fn agrees(
        scan: fn(&[u8], usize) -> usize,
        stop: fn(u8) -> bool,
        s: &str,
        from: usize,
    ) -> Result<(), TestCaseError> {
        let bytes = s.as_bytes();
        let from = from.min(bytes.len());
        let naive = (from..bytes.len())
            .find(|&i| stop(bytes[i]))
            .unwrap_or(bytes.len());
        prop_assert_eq!(scan(bytes, from), naive);
        Ok(())
    }

    proptest! {
        #[test]
        fn first_prompt_special_finds_the_first_from_any_start(
            noisy in "[<>&=;%?'a-c\u{e9}\u{200b}\u{1f600}]{0,20}",
            clean in "[a-z\"{}:,]{0,30}",
            tail in "[<>&\u{e9}]?[a-z]{0,12}",
            from in 0usize..90,
        ) {
            // Specials before, inside and after long clean runs, bytes one below and above
            // each (`;`, `=`, `?`, `%`, `'`), and starts on either side.
            agrees(
                first_prompt_special,
                |b| matches!(b, b'<' | b'>' | b'&') || !b.is_ascii(),
                &format!("{noisy}{clean}{tail}"),
                from,
            )?;
        }

        #[test]
        fn first_special_finds_the_first_from_any_start(
            noisy in "[\\x00-\\x21\"\\\\a-c\u{e9}]{0,20}",
            clean in "[a-z\u{e9}]{0,30}",
            tail in "[\\x00\"\\\\]?[a-z]{0,12}",
            from in 0usize..72,
        ) {
            // Specials before, inside and after long clean runs, and starts on either side.
            agrees(
                first_special,
                |b| b < 0x20 || b == b'"' || b == b'\\',
                &format!("{noisy}{clean}{tail}"),
                from,
            )?;
        }
    }
}
