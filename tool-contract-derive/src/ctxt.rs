//! Error accumulation (serde_derive `internals/ctxt.rs`): every rule runs and every violation is
//! reported in one build.

use std::cell::RefCell;
use std::fmt::Display;

use proc_macro2::TokenStream;
use quote::ToTokens;

#[derive(Default)]
pub struct Ctxt {
    // `None` once `check` ran; dropping an unchecked context is a bug in this crate.
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Ctxt {
    pub fn new() -> Self {
        Ctxt {
            errors: RefCell::new(Some(Vec::new())),
        }
    }

    /// Reports `msg` at the span of `obj`.
    pub fn error_spanned_by<A: ToTokens, T: Display>(&self, obj: A, msg: T) {
        self.syn_error(syn::Error::new_spanned(obj.into_token_stream(), msg));
    }

    /// Reports `msg` at `span`.
    pub fn error_at<T: Display>(&self, span: proc_macro2::Span, msg: T) {
        self.syn_error(syn::Error::new(span, msg));
    }

    pub fn syn_error(&self, err: syn::Error) {
        self.errors
            .borrow_mut()
            .as_mut()
            .expect("Ctxt used after check")
            .push(err);
    }

    /// Consumes the context: `Err` holds every error, combined into one `compile_error!` stream.
    pub fn check(self) -> Result<(), TokenStream> {
        let errors = self.errors.borrow_mut().take().expect("Ctxt checked twice");
        if errors.is_empty() {
            return Ok(());
        }
        Err(errors.into_iter().map(|e| e.to_compile_error()).collect())
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        if !std::thread::panicking() && self.errors.borrow().is_some() {
            panic!("forgot to check for errors");
        }
    }
}
