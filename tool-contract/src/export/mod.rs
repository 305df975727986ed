//! Tool schemas for LLM prompts, one dialect per provider.
//!
//! A tool has **one canonical schema**, the contract's `input_schema` (Draft 2020-12): the
//! pipeline validates every proposal against it, whatever the model saw. What goes into a
//! prompt is a **lossy prompt schema** per dialect: each provider accepts a different subset
//! of JSON Schema, so keywords a provider would reject move into the description as text
//! (`"at most 500 characters"`), optional fields become nullable where a dialect wants every
//! field required, and names are checked (and mangled when needed) against the provider's
//! rules. The canonical schema still applies: a `null` sent for an optional field is dropped
//! before validation, a `maxLength` moved into text is still enforced.
//!
//! A shape a strict dialect cannot express (a map with free keys, a `serde_json::Value`, an
//! untyped array, a recursive type for Anthropic) is an [`ExportError`] naming the tool, the
//! JSON pointer of the field and the dialect, unless the exporter was asked to fall back to a
//! non-strict definition for that tool ([`Exporter::fallback_non_strict`]).
//!
//! | [`Dialect`] | emits | rules in |
//! |---|---|---|
//! | `json_schema` | the canonical schemas, untouched | [`json_schema`] |
//! | `openai`, `openai_responses` | Chat Completions / Responses function tools, `strict: true` | [`openai`] |
//! | `anthropic` | Messages API tools, `strict: true` unless [`Exporter::strict`]`(false)` | [`anthropic`] |
//! | `gemini`, `gemini_openapi` | function declarations with `parametersJsonSchema` / `parameters` | [`gemini`] |
//! | `mcp` | `tools/list` entries | [`mcp`] |
//!
//! ```
//! use tool_contract::export::{Dialect, Exporter};
//! # use tool_contract::{tool, Tool, ToolArgs, ToolError};
//! # #[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
//! # #[serde(deny_unknown_fields)]
//! # struct SearchNotesArgs {
//! #     /// Words to find.
//! #     #[schemars(length(min = 2, max = 100))]
//! #     query: String,
//! #     /// How many results.
//! #     #[serde(default = "five")]
//! #     #[schemars(range(min = 1, max = 10))]
//! #     top_k: u8,
//! # }
//! # fn five() -> u8 { 5 }
//! /// Finds notes by topic. Use it before reading a note; it returns note ids.
//! #[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 200)]
//! async fn search_notes(args: SearchNotesArgs) -> Result<Vec<String>, ToolError> { Ok(vec![]) }
//!
//! let tool = Exporter::new(Dialect::OpenAi).export_contract(SearchNotes::contract()).unwrap();
//! let params = &tool["function"]["parameters"];
//! assert_eq!(tool["function"]["strict"], true);
//! assert_eq!(params["required"], serde_json::json!(["query", "top_k"]));
//! assert_eq!(params["properties"]["top_k"]["type"], serde_json::json!(["integer", "null"]));
//! assert_eq!(
//!     params["properties"]["query"]["description"],
//!     "Words to find. (at least 2 characters; at most 100 characters)"
//! );
//! ```

pub mod anthropic;
mod exporter;
pub mod gemini;
pub mod json_schema;
pub mod mcp;
mod names;
pub mod openai;
mod rewrite;

use std::fmt;
use std::str::FromStr;

pub use exporter::{Export, Exporter, Renamed};

/// A prompt-schema dialect.
///
/// Parses from and displays as its snake_case name, the one the `export` command takes:
///
/// ```
/// use tool_contract::export::Dialect;
/// let d: Dialect = "gemini_openapi".parse().unwrap();
/// assert_eq!(d, Dialect::GeminiOpenApi);
/// assert_eq!(d.to_string(), "gemini_openapi");
/// assert!("gpt".parse::<Dialect>().unwrap_err().to_string().contains("openai_responses"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Dialect {
    /// Plain Draft 2020-12: the canonical schemas, untouched.
    JsonSchema,
    /// OpenAI Chat Completions function tools.
    OpenAi,
    /// OpenAI Responses API function tools.
    OpenAiResponses,
    /// Anthropic Messages API tools.
    Anthropic,
    /// Gemini function declarations with `parametersJsonSchema`.
    Gemini,
    /// Gemini function declarations with the OpenAPI-subset `parameters`.
    GeminiOpenApi,
    /// MCP `tools/list` entries.
    Mcp,
}

impl Dialect {
    /// Every dialect, in the order of the table above.
    pub const ALL: [Dialect; 7] = [
        Dialect::JsonSchema,
        Dialect::OpenAi,
        Dialect::OpenAiResponses,
        Dialect::Anthropic,
        Dialect::Gemini,
        Dialect::GeminiOpenApi,
        Dialect::Mcp,
    ];

    /// The snake_case name.
    ///
    /// ```
    /// assert_eq!(tool_contract::export::Dialect::OpenAiResponses.as_str(), "openai_responses");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::JsonSchema => "json_schema",
            Dialect::OpenAi => "openai",
            Dialect::OpenAiResponses => "openai_responses",
            Dialect::Anthropic => "anthropic",
            Dialect::Gemini => "gemini",
            Dialect::GeminiOpenApi => "gemini_openapi",
            Dialect::Mcp => "mcp",
        }
    }

    /// Whether the dialect has a strict mode that [`Exporter::strict`] turns on and off.
    ///
    /// ```
    /// use tool_contract::export::Dialect;
    /// assert!(Dialect::Anthropic.has_strict_mode());
    /// assert!(!Dialect::Mcp.has_strict_mode());
    /// ```
    pub fn has_strict_mode(self) -> bool {
        matches!(
            self,
            Dialect::OpenAi | Dialect::OpenAiResponses | Dialect::Anthropic
        )
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Dialect {
    type Err = UnknownDialect;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Dialect::ALL
            .into_iter()
            .find(|d| d.as_str() == s)
            .ok_or_else(|| UnknownDialect(s.to_owned()))
    }
}

/// A dialect name that is not one of [`Dialect::ALL`].
///
/// ```
/// let err = "claude".parse::<tool_contract::export::Dialect>().unwrap_err();
/// assert_eq!(err.to_string(), "unknown dialect `claude`; expected one of: json_schema, openai, openai_responses, anthropic, gemini, gemini_openapi, mcp");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownDialect(pub String);

impl fmt::Display for UnknownDialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Dialect::ALL.iter().map(|d| d.as_str()).collect();
        write!(
            f,
            "unknown dialect `{}`; expected one of: {}",
            self.0,
            names.join(", ")
        )
    }
}

impl std::error::Error for UnknownDialect {}

/// Why a tool or a registry cannot be exported in a dialect.
///
/// ```
/// use tool_contract::export::{Dialect, ExportError};
/// let err = ExportError::Unrepresentable {
///     tool: "tag_note".into(),
///     pointer: "/properties/labels".into(),
///     dialect: Dialect::OpenAi,
///     shape: "a map with free keys".into(),
/// };
/// assert!(err.to_string().starts_with("cannot export `tag_note` to openai: /properties/labels is a map with free keys"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExportError {
    /// A field has a shape the dialect cannot express.
    Unrepresentable {
        /// Tool name.
        tool: String,
        /// JSON pointer into the tool's input schema, e.g. `/properties/metadata`.
        pointer: String,
        /// The dialect.
        dialect: Dialect,
        /// What the shape is, e.g. "a map with free keys (`HashMap`, ...)".
        shape: String,
    },
    /// A documented size limit of the dialect is exceeded by one tool's schema.
    LimitExceeded {
        /// Tool name.
        tool: String,
        /// The dialect.
        dialect: Dialect,
        /// What is counted, e.g. "enum values".
        limit: &'static str,
        /// The count in this schema.
        actual: usize,
        /// The documented maximum.
        max: usize,
    },
    /// A per-request budget of the dialect is exceeded by the whole export (Anthropic strict).
    BudgetExceeded {
        /// The dialect.
        dialect: Dialect,
        /// What is counted, e.g. "optional parameters across strict tools".
        budget: &'static str,
        /// The count in this export.
        actual: usize,
        /// The documented maximum.
        max: usize,
    },
    /// A tool name cannot be turned into a name the dialect accepts.
    InvalidName {
        /// Tool name.
        tool: String,
        /// The dialect.
        dialect: Dialect,
        /// Why.
        reason: String,
    },
    /// Two tools end up with the same name in the dialect after mangling.
    NameCollision {
        /// The dialect.
        dialect: Dialect,
        /// The shared exported name.
        exported: String,
        /// The first tool's name.
        first: String,
        /// The second tool's name.
        second: String,
    },
}

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExportError::Unrepresentable { tool, pointer, dialect, shape } => write!(
                f,
                "cannot export `{tool}` to {dialect}: {pointer} is {shape}, which {dialect}{} cannot express; change the field's type, or export with the non-strict fallback (`Exporter::fallback_non_strict`, `--non-strict-fallback`){}",
                if dialect.has_strict_mode() { " strict mode" } else { "" },
                if *dialect == Dialect::GeminiOpenApi { ", which uses `parametersJsonSchema` for this tool" } else { "" }
            ),
            ExportError::LimitExceeded { tool, dialect, limit, actual, max } => write!(
                f,
                "cannot export `{tool}` to {dialect}: its schema has {actual} {limit}, more than the {max} {dialect} accepts; split the tool or simplify its arguments"
            ),
            ExportError::BudgetExceeded { dialect, budget, actual, max } => write!(
                f,
                "the {dialect} export has {actual} {budget}, more than the {max} one request accepts; export fewer tools, make fields required, or enable the non-strict fallback"
            ),
            ExportError::InvalidName { tool, dialect, reason } => {
                write!(f, "tool name `{tool}` cannot be exported to {dialect}: {reason}")
            }
            ExportError::NameCollision { dialect, exported, first, second } => write!(
                f,
                "tools `{first}` and `{second}` both become `{exported}` in {dialect}; rename one of them"
            ),
        }
    }
}

impl std::error::Error for ExportError {}
