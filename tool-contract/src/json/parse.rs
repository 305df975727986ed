//! The tree's parser: a hand-written recursive descent over the text, with the caller's
//! checks ([`Checks`]) applied as it goes.
//!
//! Hand-written rather than serde_json's `Deserializer`: outputs are parsed on the hot path,
//! and serde's visitor machinery cost about as much again as the tree it builds. It accepts
//! exactly RFC 8259 JSON, with serde_json's own nesting limit (127 levels), and leaves the
//! parts where exactness is subtle to serde_json itself: strings with escapes (surrogate pairs,
//! lone surrogates) and numbers other than plain integers are decoded by it, so the tree is the
//! one `serde_json::from_str` would give.

use bumpalo::Bump;
use serde_json::Number;

use super::tree::{MemberVec, Tree};

/// The text was not one JSON value, or a check refused it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ParseError;

/// What a caller checks beyond JSON's grammar while a text is parsed; any refusal ends the
/// parse with [`ParseError`]. A proposal's limits, duplicate keys and number policy come in
/// through here (from the proposal module's rules), so the tree parser and the full parser
/// apply the same rules.
pub(crate) trait Checks {
    /// One more value (scalar or container) is about to be read.
    fn value(&mut self) -> bool;
    /// A container is entered at nesting `depth` (the outermost container is level 1).
    fn enter(&mut self, depth: usize) -> bool;
    /// An object's members, once all are read.
    fn object(&mut self, members: &[(&str, Tree<'_>)]) -> bool;
    /// The number a token (as written) stands for, or `None` to refuse it.
    fn number(&mut self, token: &str) -> Option<Number>;
}

/// JSON and nothing else: what serde_json reads, the tree reads.
pub(crate) struct JsonOnly;

impl Checks for JsonOnly {
    fn value(&mut self) -> bool {
        true
    }
    fn enter(&mut self, _depth: usize) -> bool {
        true
    }
    fn object(&mut self, _members: &[(&str, Tree<'_>)]) -> bool {
        true
    }
    fn number(&mut self, token: &str) -> Option<Number> {
        // Plain non-negative integers that surely fit a u64 (no leading zero); everything else
        // (signs, fractions, exponents, 20 digits) goes through serde_json.
        let plain = token.len() <= 19
            && token.bytes().all(|b| b.is_ascii_digit())
            && (token.len() == 1 || !token.starts_with('0'));
        if plain {
            return token.parse::<u64>().ok().map(Number::from);
        }
        serde_json::from_str::<Number>(token).ok()
    }
}

/// Parses `text` as JSON, borrowing its unescaped strings; containers and decoded strings go
/// into `bump`, so the tree is freed with the arena, not dropped.
pub(crate) fn parse<'a>(text: &'a str, bump: &'a Bump) -> Result<Tree<'a>, ParseError> {
    Parser::new(text, bump, &mut JsonOnly).all()
}

/// Parses `text` under `checks`.
pub(crate) fn parse_with<'a, C: Checks>(
    text: &'a str,
    bump: &'a Bump,
    checks: &mut C,
) -> Result<Tree<'a>, ParseError> {
    Parser::new(text, bump, checks).all()
}

/// serde_json's recursion limit (it refuses a 128th level), kept so the same texts are refused.
const MAX_DEPTH: usize = 127;

struct Parser<'a, 'c, C> {
    text: &'a str,
    bump: &'a Bump,
    bytes: &'a [u8],
    pos: usize,
    depth: usize,
    checks: &'c mut C,
}

impl<'a, 'c, C: Checks> Parser<'a, 'c, C> {
    fn new(text: &'a str, bump: &'a Bump, checks: &'c mut C) -> Self {
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
    fn all(mut self) -> Result<Tree<'a>, ParseError> {
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

    fn literal(&mut self, word: &[u8], value: Tree<'a>) -> Result<Tree<'a>, ParseError> {
        if self.bytes[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(ParseError)
        }
    }

    fn value(&mut self) -> Result<Tree<'a>, ParseError> {
        if !self.checks.value() {
            return Err(ParseError);
        }
        self.skip_ws();
        match self.bytes.get(self.pos).copied().ok_or(ParseError)? {
            b'"' => self.string().map(Tree::Str),
            b'{' => self.object(),
            b'[' => self.array(),
            b't' => self.literal(b"true", Tree::Bool(true)),
            b'f' => self.literal(b"false", Tree::Bool(false)),
            b'n' => self.literal(b"null", Tree::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => Err(ParseError),
        }
    }

    fn enter(&mut self) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH || !self.checks.enter(self.depth) {
            return Err(ParseError);
        }
        self.pos += 1;
        Ok(())
    }

    fn array(&mut self) -> Result<Tree<'a>, ParseError> {
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
        Ok(Tree::Array(items.into_bump_slice()))
    }

    fn object(&mut self) -> Result<Tree<'a>, ParseError> {
        self.enter()?;
        let mut members = MemberVec::with_capacity_in(8, self.bump);
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
        if !self.checks.object(&members) {
            return Err(ParseError);
        }
        Ok(Tree::Object(members.into_bump_slice()))
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
        super::scan::first_special(self.bytes, i)
    }

    fn number(&mut self) -> Result<Tree<'a>, ParseError> {
        let start = self.pos;
        while let Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
        let token = &self.text[start..self.pos];
        self.checks
            .number(token)
            .map(Tree::Number)
            .ok_or(ParseError)
    }
}
