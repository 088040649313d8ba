//! STUB: to be implemented.
use super::{BuildCtx, MarkingScheme};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct TcnParams {}

pub struct Tcn;

impl Tcn {
    pub fn new(_p: &TcnParams, _ctx: &BuildCtx) -> Result<Self, String> {
        Ok(Tcn)
    }
}

impl MarkingScheme for Tcn {
    fn reset(&mut self) {}
}
