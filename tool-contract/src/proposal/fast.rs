//! The fast path's reading of a proposal: the common shape, parsed into a [`Tree`] in the
//! thread's arena under the same rules as the full parser.
//!
//! It decides nothing on its own. Whatever it does not plainly accept (another shape, string
//! arguments, a number other than a plain integer, any broken rule) it refuses, and the full
//! parser then reads the text and gives the verdict and the error. What it accepts, it reads
//! exactly as the full parser would.

use bumpalo::Bump;

use super::rules::{self, ProposalChecks};
use super::ProposalLimits;
use crate::json::Tree;

/// A proposal of the common shape `{"name": .., "id": .., "arguments": {..}}`, read.
pub(crate) struct Read<'a> {
    /// The tool name (a valid one: [`rules::tool_name_ok`]).
    pub(crate) name: &'a str,
    /// The provider's call id, when it is one the full parser keeps ([`rules::call_id_ok`]).
    pub(crate) call_id: Option<&'a str>,
    /// The arguments object.
    pub(crate) arguments: Tree<'a>,
}

/// Reads `raw`, or `None` to leave it to the full parser.
pub(crate) fn read<'a>(raw: &'a str, bump: &'a Bump, limits: &ProposalLimits) -> Option<Read<'a>> {
    if rules::check_size(raw, limits).is_err() {
        return None;
    }
    let Tree::Object(members) =
        crate::json::parse_with(raw, bump, &mut ProposalChecks::new(limits)).ok()?
    else {
        return None;
    };
    let (mut name, mut id, mut arguments) = (None, None, None);
    for (key, value) in members {
        let slot = match *key {
            "name" => &mut name,
            "id" => &mut id,
            "arguments" => &mut arguments,
            _ => return None,
        };
        *slot = Some(value);
    }
    let (Tree::Str(name), arguments @ Tree::Object(_)) = (name?, arguments?) else {
        return None;
    };
    if !rules::tool_name_ok(name) {
        return None;
    }
    let call_id = match id {
        None => None,
        Some(Tree::Str(id)) => Some(*id).filter(|id| rules::call_id_ok(id)),
        Some(_) => return None,
    };
    Some(Read {
        name,
        call_id,
        arguments: arguments.clone(),
    })
}
