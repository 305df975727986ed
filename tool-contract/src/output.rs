//! Stage 8, the output contract: a handler's output is serialized once, checked against the
//! tool's output schema, and only then becomes the envelope's data, with the provenance read
//! from it. An output that breaks its contract never reaches the model.

use std::borrow::Cow;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Serialize;
use serde_json::value::RawValue;

use crate::contract::ProvenanceSpec;
use crate::envelope::Provenance;
use crate::error::ToolError;
use crate::json::{Tree, TreeJson};

/// A handler's output after the check.
pub(crate) enum CheckedOutput {
    /// Met the output schema: the envelope's data, and the provenance read from it.
    Valid(Box<RawValue>, Provenance),
    /// Broke it: what the schema says, for the receipt (never for the model).
    Invalid(Vec<String>),
    /// Its JSON text is longer than the tool's cap, in bytes: withheld unread.
    TooLarge(u64),
}

/// Beyond this, an output's text grows as it is written rather than being reserved up front.
const MAX_TEXT_HINT: usize = 64 * 1024;

/// One tool version's output contract, compiled once.
pub(crate) struct OutputContract {
    schema: jsonschema::Validator<TreeJson>,
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
        provenance: Option<&'static ProvenanceSpec>,
        max_bytes: u64,
        default_source: &'static str,
    ) -> Self {
        OutputContract {
            schema,
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
    pub(crate) fn deliver<T: Serialize + ?Sized>(
        &self,
        output: &T,
    ) -> Result<CheckedOutput, ToolError> {
        let checked = crate::json::with_arena(|bump| {
            let tree = crate::json::to_tree(output, bump)?;
            // Sized from this tool's longest text so far: one allocation, no regrowth.
            let mut text = String::with_capacity(self.text_len.load(Ordering::Relaxed));
            crate::json::write_tree(&mut text, &tree);
            // Written only when the record grows, so the shared line stays read-mostly.
            if text.len() > self.text_len.load(Ordering::Relaxed) {
                self.text_len
                    .fetch_max(text.len().min(MAX_TEXT_HINT), Ordering::Relaxed);
            }
            let raw = crate::json::raw_value(text).ok()?;
            Some(self.check(raw, Some(&tree)))
        });
        if let Some(checked) = checked {
            return Ok(checked);
        }
        serde_json::value::to_raw_value(output)
            .map(|raw| self.check(raw, None))
            .map_err(|_| {
                ToolError::internal(
                    "OUTPUT_SERIALIZE_FAILED",
                    "the tool produced an output that cannot be serialized",
                )
            })
    }

    /// The contract on the one serialization that becomes the envelope's data: `tree` is that
    /// text's tree, or `None` to parse the text.
    fn check(&self, raw: Box<RawValue>, tree: Option<&Tree<'_>>) -> CheckedOutput {
        // The cap comes first: an output past it is withheld without being read any further.
        if raw.get().len() as u64 > self.max_bytes {
            return CheckedOutput::TooLarge(self.max_bytes);
        }
        let verdict = match tree {
            Some(tree) => self.verdict(tree),
            None => crate::json::with_arena(|bump| match crate::json::parse(raw.get(), bump) {
                Ok(tree) => self.verdict(&tree),
                Err(_) => Err(vec!["output is not JSON the tree can read".to_owned()]),
            }),
        };
        match verdict {
            Ok(provenance) => CheckedOutput::Valid(raw, provenance),
            Err(violations) => CheckedOutput::Invalid(violations),
        }
    }

    fn verdict(&self, tree: &Tree<'_>) -> Result<Provenance, Vec<String>> {
        if self.schema.is_valid(tree) {
            return Ok(self.provenance(Some(tree)));
        }
        Err(self
            .schema
            .iter_errors(tree)
            .take(16)
            .map(|e| {
                format!(
                    "output violates `{}` at `{}`",
                    e.kind().keyword(),
                    e.instance_path().as_str()
                )
            })
            .collect())
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
