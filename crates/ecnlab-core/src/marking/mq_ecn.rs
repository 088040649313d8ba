//! STUB: to be implemented.
use super::{BuildCtx, MarkingScheme};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct MqEcnParams {}

pub struct MqEcn;

impl MqEcn {
    pub fn new(_p: &MqEcnParams, _ctx: &BuildCtx) -> Result<Self, String> {
        Ok(MqEcn)
    }
}

impl MarkingScheme for MqEcn {
    fn reset(&mut self) {}
}
