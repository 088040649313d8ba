//! STUB: to be implemented.
use super::{BuildCtx, MarkingScheme};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct DualAqmParams {}

pub struct DualAqm;

impl DualAqm {
    pub fn new(_p: &DualAqmParams, _ctx: &BuildCtx) -> Result<Self, String> {
        Ok(DualAqm)
    }
}

impl MarkingScheme for DualAqm {
    fn reset(&mut self) {}
}
