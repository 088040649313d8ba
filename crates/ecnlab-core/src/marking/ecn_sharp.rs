//! STUB: to be implemented.
use super::{BuildCtx, MarkingScheme};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct EcnSharpParams {}

pub struct EcnSharp;

impl EcnSharp {
    pub fn new(_p: &EcnSharpParams, _ctx: &BuildCtx) -> Result<Self, String> {
        Ok(EcnSharp)
    }
}

impl MarkingScheme for EcnSharp {
    fn reset(&mut self) {}
}
