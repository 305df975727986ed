//! The proposal rules, each stated once: the size, depth and value caps, duplicate keys, the
//! number policy, and what a tool name and a call id may be. Both parsers (the full one in
//! `full`, the tree parser the fast path uses through [`ProposalChecks`]) call these
//! functions; neither restates a rule.

use std::cell::Cell;

use serde_json::Number;

use super::ProposalLimits;
use crate::error::ToolError;
use crate::json::{Checks, Tree};

/// The byte cap, checked before any parsing.
pub(crate) fn check_size(raw: &str, limits: &ProposalLimits) -> Result<(), ToolError> {
    if raw.len() > limits.max_bytes {
        return Err(ToolError::invalid_input(
            "PROPOSAL_TOO_LARGE",
            "the proposal is larger than the accepted size",
        )
        .with_detail("max_bytes", limits.max_bytes)
        .with_detail("bytes", raw.len()));
    }
    Ok(())
}

/// Which cap a text went past.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Exceeded {
    /// Nested deeper than `max_depth`.
    Depth,
    /// Held more than `max_values` values.
    Values,
}

/// The depth and value caps of one parse: every value (scalar or container) counts once, and
/// the outermost container is level 1.
pub(crate) struct Caps<'l> {
    limits: &'l ProposalLimits,
    values: Cell<usize>,
}

impl<'l> Caps<'l> {
    pub(crate) fn new(limits: &'l ProposalLimits) -> Self {
        Caps {
            limits,
            values: Cell::new(0),
        }
    }

    /// Counts one more value.
    pub(crate) fn value(&self) -> Result<(), Exceeded> {
        let n = self.values.get() + 1;
        self.values.set(n);
        if n > self.limits.max_values {
            return Err(Exceeded::Values);
        }
        Ok(())
    }

    /// A container entered at nesting `depth`.
    pub(crate) fn enter(&self, depth: usize) -> Result<(), Exceeded> {
        if depth > self.limits.max_depth {
            return Err(Exceeded::Depth);
        }
        Ok(())
    }
}

/// The first member name that appears twice in one object, if any. An object that names a
/// member twice is refused at any depth: serde_json would keep the last one, so a validator, an
/// approver and a handler could each see a different value.
pub(crate) fn first_duplicate<'k>(names: &[&'k str]) -> Option<&'k str> {
    // A scan for small objects (the common case: no allocation); a sort for large ones, so a
    // model cannot make the check quadratic.
    if names.len() <= 16 {
        return names
            .iter()
            .enumerate()
            .find(|(i, k)| names[..*i].contains(k))
            .map(|(_, k)| *k);
    }
    let mut sorted = names.to_vec();
    sorted.sort_unstable();
    sorted.windows(2).find(|w| w[0] == w[1]).map(|w| w[0])
}

/// The number policy for a number that arrives as a double (a fraction or an exponent was
/// written, or the integer was too long for 64 bits): a number with no fractional part is an
/// integer (`8.0` is `8`), but only below 2^53, where a double still holds every integer; any
/// other integral value could be a rounding of what the model wrote and is refused, as is
/// anything beyond the 64-bit range. Other numbers stay doubles.
pub(crate) fn from_double(v: f64) -> Result<Number, OutOfRange> {
    const EXACT: f64 = 9_007_199_254_740_992.0;
    if !v.is_finite() {
        return Err(OutOfRange);
    }
    if v.fract() == 0.0 {
        if v.abs() >= EXACT {
            return Err(OutOfRange);
        }
        // Below 2^53 in magnitude the cast is exact.
        return Ok(Number::from(v as i64));
    }
    Number::from_f64(v).ok_or(OutOfRange)
}

/// A number the policy refuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OutOfRange;

/// The number policy for an integer written as plain digits (an optional `-`, no fraction, no
/// exponent, no leading zero): the exact integer when it fits `u64` or `i64`. `None` means
/// "not plain digits in range": such a token is read as a double and [`from_double`] decides
/// (which refuses integers beyond 64 bits). `-0` is left to [`from_double`] as well.
pub(crate) fn integer_literal(token: &str) -> Option<Number> {
    let (negative, digits) = match token.strip_prefix('-') {
        Some(digits) => (true, digits),
        None => (false, token),
    };
    let plain = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits.len() == 1 || !digits.starts_with('0'));
    if !plain || (negative && digits == "0") {
        return None;
    }
    if negative {
        token.parse::<i64>().ok().map(Number::from)
    } else {
        token.parse::<u64>().ok().map(Number::from)
    }
}

/// A proposed tool name is 1 to 128 bytes.
pub(crate) fn tool_name_ok(name: &str) -> bool {
    !name.is_empty() && name.len() <= 128
}

/// A provider's call id is kept when it is 1 to 128 visible ASCII characters; otherwise the
/// registry makes one.
pub(crate) fn call_id_ok(id: &str) -> bool {
    !id.is_empty() && id.len() <= 128 && id.bytes().all(|b| b.is_ascii_graphic())
}

/// The rules above as the tree parser's [`Checks`], for the fast path. It refuses every number
/// but plain integers: whatever it refuses, the full parser decides (and words the error).
pub(crate) struct ProposalChecks<'l> {
    caps: Caps<'l>,
}

impl<'l> ProposalChecks<'l> {
    pub(crate) fn new(limits: &'l ProposalLimits) -> Self {
        ProposalChecks {
            caps: Caps::new(limits),
        }
    }
}

impl Checks for ProposalChecks<'_> {
    fn value(&mut self) -> bool {
        self.caps.value().is_ok()
    }
    fn enter(&mut self, depth: usize) -> bool {
        self.caps.enter(depth).is_ok()
    }
    fn object(&mut self, members: &[(&str, Tree<'_>)]) -> bool {
        if members.len() <= 16 {
            let mut names = [""; 16];
            for (slot, (name, _)) in names.iter_mut().zip(members) {
                *slot = name;
            }
            return first_duplicate(&names[..members.len()]).is_none();
        }
        let names: Vec<&str> = members.iter().map(|(k, _)| *k).collect();
        first_duplicate(&names).is_none()
    }
    fn number(&mut self, token: &str) -> Option<Number> {
        integer_literal(token)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_number_policy() {
        assert_eq!(from_double(8.0), Ok(Number::from(8)));
        assert_eq!(from_double(-0.0), Ok(Number::from(0)));
        assert_eq!(
            from_double(9_007_199_254_740_991.0),
            Ok(Number::from(9_007_199_254_740_991i64))
        );
        assert_eq!(from_double(9_007_199_254_740_992.0), Err(OutOfRange));
        assert_eq!(from_double(-1e20), Err(OutOfRange));
        assert_eq!(from_double(0.5), Ok(Number::from_f64(0.5).unwrap()));
        assert_eq!(
            integer_literal("18446744073709551615"),
            Some(Number::from(u64::MAX))
        );
        assert_eq!(
            integer_literal("-9223372036854775808"),
            Some(Number::from(i64::MIN))
        );
        for refused in [
            "18446744073709551616",
            "-9223372036854775809",
            "-0",
            "01",
            "1.0",
            "1e2",
            "",
            "-",
            "+1",
        ] {
            assert_eq!(integer_literal(refused), None, "{refused}");
        }
    }

    #[test]
    fn duplicates_small_and_large() {
        assert_eq!(first_duplicate(&["a", "b", "a"]), Some("a"));
        assert_eq!(first_duplicate(&["a", "b"]), None);
        let many: Vec<String> = (0..40).map(|i| format!("k{i}")).collect();
        let mut names: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(first_duplicate(&names), None);
        names.push("k7");
        assert_eq!(first_duplicate(&names), Some("k7"));
    }
}
