//! A backend watched on its way: [`Observed`] forwards every call to the backend it wraps and
//! shows each case declined, each request and each reply to an [`Observer`]. The request dump
//! (`--dump-requests`, `crate::backend::dump`) and `runner replay`'s transcript are observers;
//! the forwarding is written once, here.

use std::collections::BTreeMap;
use std::sync::Arc;

use opspec::DType;
use opspec_spec::Case;

use crate::backend::facts::Facts;
use crate::backend::interface::{Backend, BackendError, Exclusion, LateFault, Outcome};

/// What watches a backend. Each hook does nothing unless the observer says otherwise.
pub(crate) trait Observer: Send + Sync {
    /// The backend's hello declines `case`, for `exclusion`: it is not sent.
    fn declined(&self, _case: &Case, _exclusion: &Exclusion) {}

    /// `case` is about to be sent. An error stops it: the case is not sent, and the error is
    /// the request's.
    fn request(&self, _case: &Case) -> Result<(), BackendError> {
        Ok(())
    }

    /// What came back for `case`.
    fn reply(&self, _case: &Case, _reply: &Result<Outcome, BackendError>) {}
}

/// An observer shared with another owner watches as itself.
impl<T: Observer> Observer for Arc<T> {
    fn declined(&self, case: &Case, exclusion: &Exclusion) {
        (**self).declined(case, exclusion);
    }

    fn request(&self, case: &Case) -> Result<(), BackendError> {
        (**self).request(case)
    }

    fn reply(&self, case: &Case, reply: &Result<Outcome, BackendError>) {
        (**self).reply(case, reply);
    }
}

/// A backend whose cases, requests and replies an observer sees.
pub(crate) struct Observed<O> {
    inner: Arc<dyn Backend>,
    observer: O,
}

impl<O: Observer> Observed<O> {
    pub(crate) fn new(inner: Arc<dyn Backend>, observer: O) -> Observed<O> {
        Observed { inner, observer }
    }
}

impl<O: Observer> Backend for Observed<O> {
    fn name(&self) -> String {
        self.inner.name()
    }

    fn facts(&self) -> Facts {
        self.inner.facts()
    }

    fn composed(&self) -> BTreeMap<String, String> {
        self.inner.composed()
    }

    fn is_reference(&self) -> bool {
        self.inner.is_reference()
    }

    fn build_only(&self) -> bool {
        self.inner.build_only()
    }

    fn excluded_dtypes(&self, case: &Case) -> Vec<DType> {
        self.inner.excluded_dtypes(case)
    }

    fn batch(&self) -> usize {
        self.inner.batch()
    }

    fn plan(&self, cases: Vec<Case>) {
        self.inner.plan(cases);
    }

    fn supports(&self, case: &Case) -> Result<(), Exclusion> {
        let supported = self.inner.supports(case);
        if let Err(exclusion) = &supported {
            self.observer.declined(case, exclusion);
        }
        supported
    }

    fn run(&self, case: &Case) -> Result<Outcome, BackendError> {
        self.run_noting(case).map(|(outcome, _)| outcome)
    }

    fn run_noting(&self, case: &Case) -> Result<(Outcome, Vec<String>), BackendError> {
        self.observer.request(case)?;
        let reply = self.inner.run_noting(case);
        let (seen, composed) = match reply {
            Ok((outcome, composed)) => (Ok(outcome), composed),
            Err(e) => (Err(e), Vec::new()),
        };
        self.observer.reply(case, &seen);
        seen.map(|outcome| (outcome, composed))
    }

    fn halt(&self) {
        self.inner.halt();
    }

    fn finish(&self) -> Vec<LateFault> {
        self.inner.finish()
    }
}
