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
pub mod gemini;
pub mod json_schema;
pub mod mcp;
mod names;
pub mod openai;
mod rewrite;

use std::fmt;
use std::str::FromStr;

use serde_json::{json, Value};

use crate::{Registry, ToolContract};
use rewrite::Scope;

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

/// A tool whose exported name differs from its registry name.
///
/// Map the name a model calls back with [`Export::registry_name`] before handing the proposal
/// to the registry.
///
/// ```
/// use tool_contract::export::{Dialect, Exporter};
/// # use tool_contract::{tool, Tool, ToolArgs, ToolError, Registry};
/// # #[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
/// # #[serde(deny_unknown_fields)]
/// # struct PingArgs {}
/// # /// Checks that the service answers. Use it before other calls; it returns nothing else.
/// # #[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
/// # async fn ping_service(args: PingArgs) -> Result<bool, ToolError> { Ok(true) }
/// let mut c = PingService::contract().clone();
/// c.name = "ping service".into();
/// let export = Exporter::new(Dialect::OpenAi).export_contracts([&c]).unwrap();
/// assert_eq!((export.renamed[0].tool.as_str(), export.renamed[0].exported.as_str()), ("ping service", "ping_service"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Renamed {
    /// The registry's name.
    pub tool: String,
    /// The name in the export.
    pub exported: String,
}

/// A registry (or a set of contracts) exported in one dialect.
///
/// ```
/// use tool_contract::export::{Dialect, Exporter};
/// # use tool_contract::{tool, ToolArgs, ToolError, Registry};
/// # #[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
/// # #[serde(deny_unknown_fields)]
/// # struct PingArgs {}
/// /// Checks that the service answers. Use it before other calls; it returns nothing else.
/// #[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
/// async fn ping_service(args: PingArgs) -> Result<bool, ToolError> { Ok(true) }
///
/// let registry = Registry::builder().tool(PingService).build().unwrap();
/// let export = Exporter::new(Dialect::Gemini).export_registry(&registry).unwrap();
/// let body = export.to_value();
/// assert_eq!(body[0]["functionDeclarations"][0]["name"], "ping_service");
/// assert!(export.warnings.is_empty());
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Export {
    /// The dialect.
    pub dialect: Dialect,
    /// One definition per tool, in the order exported.
    pub tools: Vec<Value>,
    /// Tools exported under another name.
    pub renamed: Vec<Renamed>,
    /// What the export had to give up, e.g. a tool exported without strict mode.
    pub warnings: Vec<String>,
}

impl Export {
    /// The value to put in a request: the `tools` array for OpenAI, Anthropic and plain JSON
    /// Schema, `[{"functionDeclarations": [...]}]` for Gemini, the `tools/list` result
    /// `{"tools": [...]}` for MCP.
    ///
    /// ```
    /// use tool_contract::export::{Dialect, Exporter};
    /// # use tool_contract::{tool, Tool, ToolArgs, ToolError, Registry};
    /// # #[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
    /// # #[serde(deny_unknown_fields)]
    /// # struct PingArgs {}
    /// #     /// Checks that the service answers. Use it before other calls; it returns nothing else.
    /// # #[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
    /// # async fn ping_service(args: PingArgs) -> Result<bool, ToolError> { Ok(true) }
    /// let export = Exporter::new(Dialect::OpenAi).export_contracts([PingService::contract()]).unwrap();
    /// assert_eq!(export.to_value()[0]["function"]["name"], "ping_service");
    /// ```
    pub fn to_value(&self) -> Value {
        match self.dialect {
            Dialect::Gemini | Dialect::GeminiOpenApi => {
                json!([{ "functionDeclarations": self.tools }])
            }
            Dialect::Mcp => json!({ "tools": self.tools }),
            _ => Value::Array(self.tools.clone()),
        }
    }

    /// The registry name of a tool the model called by its exported name.
    ///
    /// ```
    /// # use tool_contract::export::{Dialect, Exporter};
    /// # let export = Exporter::new(Dialect::OpenAi).export_contracts(std::iter::empty()).unwrap();
    /// assert_eq!(export.registry_name("search_documents"), "search_documents");
    /// ```
    pub fn registry_name<'a>(&'a self, exported: &'a str) -> &'a str {
        self.renamed
            .iter()
            .find(|r| r.exported == exported)
            .map_or(exported, |r| r.tool.as_str())
    }
}

/// Exports contracts in one dialect.
///
/// Strict mode is on by default for the dialects that have one; a tool that strict mode
/// cannot express is an error unless [`fallback_non_strict`](Self::fallback_non_strict) is
/// on, in which case that tool alone is exported without strict mode (for `gemini_openapi`:
/// with `parametersJsonSchema`), with a warning.
///
/// ```
/// use tool_contract::export::{Dialect, Exporter};
/// let exporter = Exporter::new(Dialect::Anthropic).strict(true).fallback_non_strict(true);
/// # let _ = exporter;
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Exporter {
    dialect: Dialect,
    strict: bool,
    fallback: bool,
}

/// One tool's export before the registry-wide checks.
struct Exported {
    value: Value,
    strict: bool,
    renamed: Option<Renamed>,
    warning: Option<String>,
    anthropic: anthropic::Usage,
}

impl Exporter {
    /// An exporter for `dialect`, strict, without fallback.
    ///
    /// ```
    /// use tool_contract::export::{Dialect, Exporter};
    /// assert_eq!(Exporter::new(Dialect::Mcp).dialect(), Dialect::Mcp);
    /// ```
    pub fn new(dialect: Dialect) -> Self {
        Exporter {
            dialect,
            strict: true,
            fallback: false,
        }
    }

    /// Strict mode on (the default) or off; ignored by dialects without one. Off, the prompt
    /// schema is the canonical one without `$schema`, `$id` and the root description.
    ///
    /// ```
    /// use tool_contract::export::{Dialect, Exporter};
    /// # use tool_contract::{tool, Tool, ToolArgs, ToolError, Registry};
    /// # #[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
    /// # #[serde(deny_unknown_fields)]
    /// # struct PingArgs {}
    /// #     /// Checks that the service answers. Use it before other calls; it returns nothing else.
    /// # #[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
    /// # async fn ping_service(args: PingArgs) -> Result<bool, ToolError> { Ok(true) }
    /// let tool = Exporter::new(Dialect::Anthropic).strict(false).export_contract(PingService::contract()).unwrap();
    /// assert_eq!(tool.get("strict"), None);
    /// ```
    pub fn strict(mut self, on: bool) -> Self {
        self.strict = on;
        self
    }

    /// Export a tool strict mode cannot express (or one past Anthropic's per-request budgets)
    /// without strict mode instead of failing. The export's
    /// [`warnings`](Export::warnings) say which tool and why.
    ///
    /// ```
    /// use tool_contract::export::{Dialect, Exporter};
    /// # use tool_contract::{tool, Tool, ToolArgs, ToolError};
    /// # #[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
    /// # #[serde(deny_unknown_fields)]
    /// # struct SaveBlobArgs {
    /// #     /// Any JSON document.
    /// #     #[tool(unbounded = "a document")]
    /// #     blob: serde_json::Value,
    /// # }
    /// /// Saves any JSON document. Use it to keep data for later; it returns nothing else.
    /// #[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
    /// async fn save_blob(args: SaveBlobArgs) -> Result<bool, ToolError> { Ok(true) }
    ///
    /// let strict = Exporter::new(Dialect::OpenAi);
    /// let err = strict.export_contract(SaveBlob::contract()).unwrap_err();
    /// assert!(err.to_string().contains("/properties/blob is any JSON value"));
    ///
    /// let export = strict.fallback_non_strict(true).export_contracts([SaveBlob::contract()]).unwrap();
    /// assert_eq!(export.tools[0]["function"]["strict"], false);
    /// assert!(export.warnings[0].contains("exported without strict mode"));
    /// ```
    pub fn fallback_non_strict(mut self, on: bool) -> Self {
        self.fallback = on;
        self
    }

    /// The dialect.
    ///
    /// ```
    /// use tool_contract::export::{Dialect, Exporter};
    /// assert_eq!(Exporter::new(Dialect::Gemini).dialect().to_string(), "gemini");
    /// ```
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// One tool's definition in the dialect.
    ///
    /// ```
    /// use tool_contract::export::{Dialect, Exporter};
    /// # use tool_contract::{tool, Tool, ToolArgs, ToolError, Registry};
    /// # #[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
    /// # #[serde(deny_unknown_fields)]
    /// # struct PingArgs {}
    /// #     /// Checks that the service answers. Use it before other calls; it returns nothing else.
    /// # #[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
    /// # async fn ping_service(args: PingArgs) -> Result<bool, ToolError> { Ok(true) }
    /// let tool = Exporter::new(Dialect::OpenAiResponses).export_contract(PingService::contract()).unwrap();
    /// assert_eq!(tool["name"], "ping_service");
    /// assert_eq!(tool["parameters"]["additionalProperties"], false);
    /// ```
    pub fn export_contract(&self, contract: &ToolContract) -> Result<Value, ExportError> {
        Ok(self.export_contracts([contract])?.tools.remove(0))
    }

    /// The newest version of every tool in `registry`, sorted by name: a model sees one
    /// definition per name, and the registry runs the newest version unless the context pins
    /// another.
    ///
    /// ```
    /// use tool_contract::export::{Dialect, Exporter};
    /// # use tool_contract::{tool, Tool, ToolArgs, ToolError, Registry};
    /// # #[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
    /// # #[serde(deny_unknown_fields)]
    /// # struct PingArgs {}
    /// #     /// Checks that the service answers. Use it before other calls; it returns nothing else.
    /// # #[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
    /// # async fn ping_service(args: PingArgs) -> Result<bool, ToolError> { Ok(true) }
    /// let registry = Registry::builder().tool(PingService).build().unwrap();
    /// let export = Exporter::new(Dialect::Mcp).export_registry(&registry).unwrap();
    /// assert_eq!(export.to_value()["tools"][0]["name"], "ping_service");
    /// ```
    pub fn export_registry(&self, registry: &Registry) -> Result<Export, ExportError> {
        let mut seen = std::collections::HashSet::new();
        // `contracts()` lists each name's versions newest first: keep the first of each.
        let newest = registry
            .contracts()
            .into_iter()
            .filter(|c| seen.insert(c.name.clone()));
        self.export_contracts(newest)
    }

    /// The given contracts, in order, checked together (name collisions, request budgets).
    ///
    /// ```
    /// use tool_contract::export::{Dialect, Exporter};
    /// # use tool_contract::{tool, Tool, ToolArgs, ToolError, Registry};
    /// # #[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
    /// # #[serde(deny_unknown_fields)]
    /// # struct PingArgs {}
    /// #     /// Checks that the service answers. Use it before other calls; it returns nothing else.
    /// # #[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
    /// # async fn ping_service(args: PingArgs) -> Result<bool, ToolError> { Ok(true) }
    /// let mut renamed = PingService::contract().clone();
    /// renamed.name = "ping.service".into();
    /// let export = Exporter::new(Dialect::Anthropic).export_contracts([&renamed]).unwrap();
    /// assert_eq!(export.tools[0]["name"], "ping_service");
    /// assert_eq!(export.registry_name("ping_service"), "ping.service");
    /// ```
    pub fn export_contracts<'a>(
        &self,
        contracts: impl IntoIterator<Item = &'a ToolContract>,
    ) -> Result<Export, ExportError> {
        let mut items = Vec::new();
        let mut names: Vec<(String, String)> = Vec::new();
        for contract in contracts {
            let item = self.one(contract)?;
            let exported = item
                .renamed
                .as_ref()
                .map_or(&contract.name, |r| &r.exported);
            if let Some((_, first)) = names.iter().find(|(e, _)| e == exported) {
                return Err(ExportError::NameCollision {
                    dialect: self.dialect,
                    exported: exported.clone(),
                    first: first.clone(),
                    second: contract.name.clone(),
                });
            }
            names.push((exported.clone(), contract.name.clone()));
            items.push((contract, item));
        }
        let mut warnings = Vec::new();
        if self.dialect == Dialect::Anthropic {
            self.anthropic_budgets(&mut items, &mut warnings)?;
        }
        let mut export = Export {
            dialect: self.dialect,
            tools: Vec::new(),
            renamed: Vec::new(),
            warnings,
        };
        for (_, item) in items {
            export.tools.push(item.value);
            export.renamed.extend(item.renamed);
            export.warnings.extend(item.warning);
        }
        Ok(export)
    }

    fn one(&self, contract: &ToolContract) -> Result<Exported, ExportError> {
        let scope = Scope {
            tool: &contract.name,
            dialect: self.dialect,
        };
        let name = names::exported(&contract.name, self.dialect)?;
        let renamed = (name != contract.name).then(|| Renamed {
            tool: contract.name.clone(),
            exported: name.clone(),
        });
        let strict = self.strict && self.dialect.has_strict_mode();
        let mut warning = None;
        let mut fallback = |err: ExportError| -> Result<(), ExportError> {
            if !self.fallback {
                return Err(err);
            }
            warning = Some(format!("{err}; exported without strict mode instead"));
            Ok(())
        };
        let desc = contract.description.as_str();
        let input = &contract.input_schema;
        let (value, strict) = match self.dialect {
            Dialect::JsonSchema => (json_schema::tool(contract), false),
            Dialect::Mcp => {
                let mut entry = mcp::tool_entry(contract);
                entry["name"] = Value::String(name.clone());
                (entry, false)
            }
            Dialect::OpenAi | Dialect::OpenAiResponses => {
                let build = match self.dialect {
                    Dialect::OpenAi => openai::chat_tool,
                    _ => openai::responses_tool,
                };
                match strict.then(|| openai::strict_parameters(input, scope)) {
                    Some(Ok(params)) => (build(&name, desc, params, true), true),
                    Some(Err(err)) => {
                        fallback(err)?;
                        (
                            build(&name, desc, rewrite::prompt_root(input), false),
                            false,
                        )
                    }
                    None => (
                        build(&name, desc, rewrite::prompt_root(input), false),
                        false,
                    ),
                }
            }
            Dialect::Anthropic => {
                match strict.then(|| anthropic::strict_input_schema(input, scope)) {
                    Some(Ok(schema)) => (anthropic::tool(&name, desc, schema, true), true),
                    Some(Err(err)) => {
                        fallback(err)?;
                        (
                            anthropic::tool(&name, desc, rewrite::prompt_root(input), false),
                            false,
                        )
                    }
                    None => (
                        anthropic::tool(&name, desc, rewrite::prompt_root(input), false),
                        false,
                    ),
                }
            }
            Dialect::Gemini => {
                let params = gemini::json_parameters(input, scope)?;
                (
                    gemini::declaration(&name, desc, "parametersJsonSchema", params),
                    false,
                )
            }
            Dialect::GeminiOpenApi => match gemini::openapi_parameters(input, scope) {
                Ok(params) => (
                    gemini::declaration(&name, desc, "parameters", params),
                    false,
                ),
                Err(err) => {
                    fallback(err)?;
                    let params = gemini::json_parameters(input, scope)?;
                    (
                        gemini::declaration(&name, desc, "parametersJsonSchema", params),
                        false,
                    )
                }
            },
        };
        let anthropic = if strict && self.dialect == Dialect::Anthropic {
            anthropic::usage(&value["input_schema"])
        } else {
            anthropic::Usage::default()
        };
        Ok(Exported {
            value,
            strict,
            renamed,
            warning,
            anthropic,
        })
    }

    /// Anthropic's per-request budgets; with the fallback, tools past a budget go non-strict,
    /// from the last one back.
    fn anthropic_budgets(
        &self,
        items: &mut [(&ToolContract, Exported)],
        warnings: &mut Vec<String>,
    ) -> Result<(), ExportError> {
        loop {
            let strict: Vec<&Exported> =
                items.iter().map(|(_, i)| i).filter(|i| i.strict).collect();
            let over = [
                ("strict tools", strict.len(), anthropic::MAX_STRICT_TOOLS),
                (
                    "optional parameters across strict tools",
                    strict.iter().map(|i| i.anthropic.optional).sum(),
                    anthropic::MAX_OPTIONAL,
                ),
                (
                    "union-typed parameters across strict tools",
                    strict.iter().map(|i| i.anthropic.unions).sum(),
                    anthropic::MAX_UNIONS,
                ),
            ]
            .into_iter()
            .find(|(_, actual, max)| actual > max);
            let Some((budget, actual, max)) = over else {
                return Ok(());
            };
            let err = ExportError::BudgetExceeded {
                dialect: self.dialect,
                budget,
                actual,
                max,
            };
            if !self.fallback {
                return Err(err);
            }
            let Some((contract, last)) = items.iter_mut().rev().find(|(_, i)| i.strict) else {
                return Err(err);
            };
            let name = last.value["name"].as_str().unwrap_or_default().to_owned();
            last.value = anthropic::tool(
                &name,
                &contract.description,
                rewrite::prompt_root(&contract.input_schema),
                false,
            );
            last.strict = false;
            warnings.push(format!(
                "{err}; `{}` exported without strict mode instead",
                contract.name
            ));
        }
    }
}
