//! STUB: to be implemented.
use super::{BuildCtx, MarkingScheme};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct RedParams {}

pub struct Red;

impl Red {
    pub fn new(_p: &RedParams, _ctx: &BuildCtx) -> Result<Self, String> {
        Ok(Red)
    }
}

impl MarkingScheme for Red {
    fn reset(&mut self) {}
}
