"""ecnlab: choose and tune ECN marking for datacenter switches.

The simulator and the marking library are Rust (``ecnlab._core``); this package reads
scenarios, runs them, and writes results. See ``ecnlab.api.run``.
"""

from .api import RunResult, SimulationError, resolve, run, validate
from .scenario import ScenarioError, builtin_names, load
from .sweep import Point
from . import sweep, reproduce  # noqa: E402  (callable modules: ecnlab.sweep(...), ecnlab.reproduce(...))

__all__ = ["run", "validate", "resolve", "load", "builtin_names", "sweep", "reproduce", "Point", "RunResult",
           "ScenarioError", "SimulationError"]
__version__ = "0.1.0"
