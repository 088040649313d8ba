//! STUB: to be implemented.
use super::{BuildCtx, MarkingScheme};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct CodelParams {}

pub struct Codel;

impl Codel {
    pub fn new(_p: &CodelParams, _ctx: &BuildCtx) -> Result<Self, String> {
        Ok(Codel)
    }
}

impl MarkingScheme for Codel {
    fn reset(&mut self) {}
}
