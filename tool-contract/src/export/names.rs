//! Tool names per dialect: checked, and mangled into the allowed alphabet when needed.

use super::{Dialect, ExportError};

/// The name rules of a dialect.
struct Rule {
    max: usize,
    /// Characters allowed besides ASCII letters and digits.
    extra: &'static [char],
    /// Whether the first character must be a letter or `_`.
    letter_first: bool,
}

fn rule(dialect: Dialect) -> Option<Rule> {
    match dialect {
        Dialect::JsonSchema => None,
        // `^[a-zA-Z0-9_-]{1,64}$`: OpenAI's API reference ("a-z, A-Z, 0-9, or contain
        // underscores and dashes, with a maximum length of 64") and Anthropic's tool name.
        Dialect::OpenAi | Dialect::OpenAiResponses | Dialect::Anthropic => Some(Rule {
            max: 64,
            extra: &['_', '-'],
            letter_first: false,
        }),
        // A letter or `_` first, then letters, digits, `_`, `.`, `-`; at most 64 (the Gemini
        // and Vertex AI `FunctionDeclaration.name` references).
        Dialect::Gemini | Dialect::GeminiOpenApi => Some(Rule {
            max: 64,
            extra: &['_', '.', '-'],
            letter_first: true,
        }),
        // MCP: 1 to 128 of letters, digits, `_`, `-`, `.` (specification 2025-11-25,
        // <https://modelcontextprotocol.io/specification/2025-11-25/server/tools#tool-names>).
        Dialect::Mcp => Some(Rule {
            max: 128,
            extra: &['_', '-', '.'],
            letter_first: false,
        }),
    }
}

/// The name `tool` is exported under in `dialect`: itself when valid, else a mangled form
/// (disallowed characters become `_`, a `_` goes first where a letter must, and a name too
/// long keeps its head plus 8 hex digits of its hash, so two long names stay distinct).
pub(super) fn exported(tool: &str, dialect: Dialect) -> Result<String, ExportError> {
    let Some(rule) = rule(dialect) else {
        return Ok(tool.to_owned());
    };
    if tool.is_empty() {
        return Err(ExportError::InvalidName {
            tool: tool.to_owned(),
            dialect,
            reason: "the name is empty".into(),
        });
    }
    let mut name: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || rule.extra.contains(&c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if rule.letter_first && !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        name.insert(0, '_');
    }
    if name.len() > rule.max {
        let hash = crate::canonical::sha256_of(tool);
        let suffix = &hash["sha256:".len().."sha256:".len() + 8];
        name.truncate(rule.max - 9);
        name.push('_');
        name.push_str(suffix);
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_names_stay_and_invalid_ones_are_mangled() {
        assert_eq!(
            exported("search_documents", Dialect::OpenAi).unwrap(),
            "search_documents"
        );
        assert_eq!(
            exported("docs.search v2", Dialect::OpenAi).unwrap(),
            "docs_search_v2"
        );
        assert_eq!(
            exported("docs.search v2", Dialect::Mcp).unwrap(),
            "docs.search_v2"
        );
        assert_eq!(
            exported("2fa_check", Dialect::Gemini).unwrap(),
            "_2fa_check"
        );
        assert_eq!(
            exported("2fa_check", Dialect::Anthropic).unwrap(),
            "2fa_check"
        );
        let long = "a".repeat(100);
        let short = exported(&long, Dialect::OpenAi).unwrap();
        assert_eq!(short.len(), 64);
        assert_ne!(short, exported(&"a".repeat(101), Dialect::OpenAi).unwrap());
        assert_eq!(exported(&long, Dialect::Mcp).unwrap(), long);
        assert!(exported("", Dialect::Mcp).is_err());
    }
}
