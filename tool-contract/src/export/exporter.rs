//! [`Exporter`] and what it returns.

use serde_json::{json, Value};

use super::rewrite::{self, Scope};
use super::{anthropic, gemini, json_schema, mcp, names, openai, Dialect, ExportError};
use crate::contract::{ContractSource, ToolContract};

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
    pub fn export_registry(&self, registry: &impl ContractSource) -> Result<Export, ExportError> {
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
        let desc = contract.description.as_str();
        let input = &contract.input_schema;
        let loose = || Ok(rewrite::prompt_root(input));
        let (value, strict) = match self.dialect {
            Dialect::JsonSchema => (json_schema::tool(contract), false),
            Dialect::Mcp => {
                let mut entry = mcp::tool_entry(contract);
                entry["name"] = Value::String(name.clone());
                (entry, false)
            }
            Dialect::OpenAi | Dialect::OpenAiResponses => {
                let strict_params = || openai::strict_parameters(input, scope);
                let (params, strict) = self.pick(strict, strict_params, loose, &mut warning)?;
                let tool = match self.dialect {
                    Dialect::OpenAi => openai::chat_tool(&name, desc, params, strict),
                    _ => openai::responses_tool(&name, desc, params, strict),
                };
                (tool, strict)
            }
            Dialect::Anthropic => {
                let strict_schema = || anthropic::strict_input_schema(input, scope);
                let (schema, strict) = self.pick(strict, strict_schema, loose, &mut warning)?;
                (anthropic::tool(&name, desc, schema, strict), strict)
            }
            Dialect::Gemini => {
                let params = gemini::json_parameters(input, scope)?;
                let decl = gemini::declaration(&name, desc, "parametersJsonSchema", params);
                (decl, false)
            }
            Dialect::GeminiOpenApi => {
                let openapi = || gemini::openapi_parameters(input, scope);
                let json = || gemini::json_parameters(input, scope);
                let (params, openapi) = self.pick(true, openapi, json, &mut warning)?;
                let key = if openapi {
                    "parameters"
                } else {
                    "parametersJsonSchema"
                };
                (gemini::declaration(&name, desc, key, params), false)
            }
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

    /// The strict form when `strict` and it succeeds (then `true`); else the loose form, if
    /// the fallback is on, with a warning.
    fn pick(
        &self,
        strict: bool,
        strict_form: impl FnOnce() -> Result<Value, ExportError>,
        loose_form: impl FnOnce() -> Result<Value, ExportError>,
        warning: &mut Option<String>,
    ) -> Result<(Value, bool), ExportError> {
        if strict {
            match strict_form() {
                Ok(value) => return Ok((value, true)),
                Err(err) if self.fallback => {
                    let instead = match self.dialect {
                        Dialect::GeminiOpenApi => "with `parametersJsonSchema`",
                        _ => "without strict mode",
                    };
                    *warning = Some(format!("{err}; exported {instead} instead"));
                }
                Err(err) => return Err(err),
            }
        }
        Ok((loose_form()?, false))
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
