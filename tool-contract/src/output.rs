//! Stage 8, the output contract: a handler's output is serialized once, checked against the
//! tool's output schema, and only then becomes the envelope's data, with the provenance read
//! from it. An output that breaks its contract never reaches the model.

use std::borrow::Cow;
use std::sync::atomic::{AtomicUsize, Ordering};

use bumpalo::Bump;
use serde::Serialize;
use serde_json::value::RawValue;

use crate::contract::ProvenanceSpec;
use crate::envelope::Provenance;
use crate::error::ToolError;
use crate::json::{Tree, TreeJson};

/// The error for an output that cannot be serialized.
#[cold]
pub(crate) fn unserializable() -> ToolError {
    ToolError::internal(
        "OUTPUT_SERIALIZE_FAILED",
        "the tool produced an output that cannot be serialized",
    )
}

/// A handler's output after the check.
///
/// Public only so the `#[tool]` expansion can name it (through `__private`); not API.
#[doc(hidden)]
pub enum CheckedOutput {
    /// Met the output schema: the envelope's data, and the provenance read from it.
    Valid(Box<RawValue>, Provenance),
    /// A tool with a model view: both the full output and the view met their schemas. The
    /// model gets `view`; the host keeps `full`; provenance is read from the full output.
    Viewed {
        /// What the model sees.
        view: Box<RawValue>,
        /// The full, validated output, for the host only.
        full: Box<RawValue>,
        /// Read from the full output.
        provenance: Provenance,
    },
    /// Broke it: what the schema says, for the receipt (never for the model).
    Invalid(Vec<String>),
    /// Its JSON text is longer than the tool's cap, in bytes: withheld unread.
    TooLarge(u64),
}

/// Beyond this, an output's text grows as it is written rather than being reserved up front.
const MAX_TEXT_HINT: usize = 64 * 1024;

/// One tool version's output contract, compiled once.
///
/// Public only so the `#[tool]` expansion can name it (through `__private`); not API.
#[doc(hidden)]
pub struct OutputContract {
    schema: jsonschema::Validator<TreeJson>,
    /// The model view's schema, for a tool that declares one (`#[tool(model_view = f)]`).
    view: Option<jsonschema::Validator<TreeJson>>,
    provenance: Option<&'static ProvenanceSpec>,
    /// The contract's `max_output_bytes`.
    max_bytes: u64,
    /// `tool://name@version`: the source when the data names none.
    pub(crate) default_source: &'static str,
    /// The longest output text this tool has written (capped at [`MAX_TEXT_HINT`]): the
    /// capacity the next output's text starts with.
    text_len: AtomicUsize,
}

impl OutputContract {
    pub(crate) fn new(
        schema: jsonschema::Validator<TreeJson>,
        view: Option<jsonschema::Validator<TreeJson>>,
        provenance: Option<&'static ProvenanceSpec>,
        max_bytes: u64,
        default_source: &'static str,
    ) -> Self {
        OutputContract {
            schema,
            view,
            provenance,
            max_bytes,
            default_source,
            text_len: AtomicUsize::new(256),
        }
    }

    /// Serializes `output` once, to the text the envelope will carry, and checks it.
    ///
    /// The output goes into a tree (in the thread's arena) that is checked and from which the
    /// text is written; for what a tree cannot stand for, straight to the text, which is then
    /// parsed to be checked. Like serializing, the check is part of the handler's attempt: its
    /// time counts as the attempt's, and a panic in it is the attempt's `HANDLER_PANICKED`.
    pub fn deliver<T: Serialize + ?Sized>(&self, output: &T) -> Result<CheckedOutput, ToolError> {
        self.deliver_to(output, &self.schema)
    }

    /// For a tool with a model view: checks the full output against the output schema, then
    /// the view against the view's schema; the model gets the view only if both hold. A view
    /// that breaks its schema is withheld like any broken output.
    pub fn deliver_viewed<T: Serialize + ?Sized, V: Serialize + ?Sized>(
        &self,
        full: &T,
        view: &V,
    ) -> Result<CheckedOutput, ToolError> {
        let Some(view_schema) = &self.view else {
            // The contract has no view schema to check the view against: nothing unchecked
            // reaches the model.
            return Ok(CheckedOutput::Invalid(vec![
                "the tool has a model view but its contract has no view schema".to_owned(),
            ]));
        };
        let (full, provenance) = match self.deliver(full)? {
            CheckedOutput::Valid(full, provenance) => (full, provenance),
            other => return Ok(other),
        };
        Ok(match self.deliver_to(view, view_schema)? {
            CheckedOutput::Valid(view, _) => CheckedOutput::Viewed {
                view,
                full,
                provenance,
            },
            CheckedOutput::Invalid(violations) => CheckedOutput::Invalid(
                violations
                    .into_iter()
                    .map(|v| format!("model view: {v}"))
                    .collect(),
            ),
            other => other,
        })
    }

    fn deliver_to<T: Serialize + ?Sized>(
        &self,
        output: &T,
        schema: &jsonschema::Validator<TreeJson>,
    ) -> Result<CheckedOutput, ToolError> {
        // Only building the tree depends on the output's type; the rest is compiled once,
        // behind `dyn`, not once per output type in the crate that registers the tools.
        match self.deliver_tree(&mut |bump| crate::json::to_tree(output, bump), schema) {
            Some(checked) => Ok(checked),
            None => self.deliver_slow(output, schema),
        }
    }

    /// The output's tree (in the thread's arena), its text written from it, and the check;
    /// `None` when the output has no plain tree.
    fn deliver_tree(
        &self,
        to_tree: &mut dyn for<'b> FnMut(&'b Bump) -> Option<Tree<'b>>,
        schema: &jsonschema::Validator<TreeJson>,
    ) -> Option<CheckedOutput> {
        crate::json::with_arena(|bump| {
            let tree = to_tree(bump)?;
            // Sized from this tool's longest text so far: one allocation, no regrowth.
            let mut text = String::with_capacity(self.text_len.load(Ordering::Relaxed));
            crate::json::write_tree(&mut text, &tree);
            // Written only when the record grows, so the shared line stays read-mostly.
            if text.len() > self.text_len.load(Ordering::Relaxed) {
                self.text_len
                    .fetch_max(text.len().min(MAX_TEXT_HINT), Ordering::Relaxed);
            }
            let raw = crate::json::raw_value(text).ok()?;
            Some(self.check(raw, Some(&tree), schema))
        })
    }

    /// An output with no plain tree (`f32`s, 128-bit integers, non-finite floats, map keys
    /// that are not strings, `RawValue`s; see `crate::json::to_tree`): serialized by
    /// serde_json, then checked from that text.
    // Cold and out of line: keeps this path's parser out of the code every call runs.
    #[cold]
    #[inline(never)]
    fn deliver_slow<T: Serialize + ?Sized>(
        &self,
        output: &T,
        schema: &jsonschema::Validator<TreeJson>,
    ) -> Result<CheckedOutput, ToolError> {
        serde_json::value::to_raw_value(output)
            .map(|raw| self.check(raw, None, schema))
            .map_err(|_| unserializable())
    }

    /// The contract on the one serialization that becomes the envelope's data: `tree` is that
    /// text's tree, or `None` to parse the text.
    fn check(
        &self,
        raw: Box<RawValue>,
        tree: Option<&Tree<'_>>,
        schema: &jsonschema::Validator<TreeJson>,
    ) -> CheckedOutput {
        // The cap comes first: an output past it is withheld without being read any further.
        if raw.get().len() as u64 > self.max_bytes {
            return CheckedOutput::TooLarge(self.max_bytes);
        }
        let verdict = match tree {
            Some(tree) => self.verdict(tree, schema),
            None => crate::json::with_arena(|bump| match crate::json::parse(raw.get(), bump) {
                Ok(tree) => self.verdict(&tree, schema),
                Err(_) => Err(vec!["output is not JSON the tree can read".to_owned()]),
            }),
        };
        match verdict {
            Ok(provenance) => CheckedOutput::Valid(raw, provenance),
            Err(violations) => CheckedOutput::Invalid(violations),
        }
    }

    fn verdict(
        &self,
        tree: &Tree<'_>,
        schema: &jsonschema::Validator<TreeJson>,
    ) -> Result<Provenance, Vec<String>> {
        if schema.is_valid(tree) {
            return Ok(self.provenance(Some(tree)));
        }
        Err(violations(tree, schema))
    }

    /// Source and revision from the data when the contract points at them, else the tool
    /// itself.
    pub(crate) fn provenance(&self, data: Option<&Tree<'_>>) -> Provenance {
        let pick = |ptr: Option<&String>| -> Option<String> {
            match data?.pointer(ptr?)? {
                Tree::Str(s) => Some(s.chars().take(256).collect()),
                Tree::Number(n) => Some(n.to_string()),
                _ => None,
            }
        };
        let source = match pick(self.provenance.map(|s| &s.source)) {
            Some(s) => Cow::Owned(s),
            None => Cow::Borrowed(self.default_source),
        };
        let revision = pick(self.provenance.and_then(|s| s.revision.as_ref()));
        Provenance::untrusted(source, revision)
    }
}

/// Up to 16 of the output schema's errors, for the receipt.
#[cold]
#[inline(never)]
fn violations(tree: &Tree<'_>, schema: &jsonschema::Validator<TreeJson>) -> Vec<String> {
    schema
        .iter_errors(tree)
        .take(16)
        .map(|e| {
            format!(
                "output violates `{}` at `{}`",
                e.kind().keyword(),
                e.instance_path().as_str()
            )
        })
        .collect()
}
