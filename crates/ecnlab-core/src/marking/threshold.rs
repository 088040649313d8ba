//! STUB: to be implemented.
use super::{BuildCtx, MarkingScheme};
use serde::{Deserialize, Serialize};

/// Which occupancy DCTCP-RED compares with K.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    #[default]
    Queue,
    Port,
    Pool,
}

/// Where the comparison happens.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Hook {
    #[default]
    Enqueue,
    Dequeue,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct ThresholdParams {
    pub scope: Scope,
    pub at: Hook,
}

pub struct ThresholdEcn;

impl ThresholdEcn {
    pub fn new(_p: &ThresholdParams, _ctx: &BuildCtx) -> Result<Self, String> {
        Ok(ThresholdEcn)
    }
}

impl MarkingScheme for ThresholdEcn {
    fn reset(&mut self) {}
}
