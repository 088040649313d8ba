//! STUB: to be implemented.
use super::{BuildCtx, MarkingScheme};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct IdealParams {}

pub struct IdealEcn;

impl IdealEcn {
    pub fn new(_p: &IdealParams, _ctx: &BuildCtx) -> Result<Self, String> {
        Ok(IdealEcn)
    }
}

impl MarkingScheme for IdealEcn {
    fn reset(&mut self) {}
}
