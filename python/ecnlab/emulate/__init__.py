"""``ecnlab emulate``: a scenario on real Linux TCP through the emulated switch.

The TCN paper evaluated its schemes on a server-emulated switch carrying real TCP (TCN §5,
§6.1). This module does the same on one machine:

- a network namespace per host and one for the switch (names ``ecnlab-<pid>x<start>-<n>-*``
  so that parallel runs never collide and a later run can tell a crashed run's leftovers
  from a live one's), veth pairs between them, addresses in 10.77.0.0/24 on those veths
  only, static ARP entries, offloads off on both ends (TSO/GSO/GRO and checksum: the
  switch must see real, MTU-sized frames with real checksums, TCN §6.1), IPv6 off;
- ``ecnlab-switch`` (crates/ecnlab-emu) in the switch namespace, with the scenario's
  ``[switch]`` and ``[marking]`` tables: the simulator's own port, marking and scheduling
  code, shaped per port at 99.5 % of the (scaled) line rate as the TCN prototype;
- link propagation delays inside the switch (a delay line per direction and port; netem
  is not built into every kernel, e.g. this VM's), and the host's link rate with tbf on
  the host's side;
- a small traffic agent per host (this module, ``--agent``): long-lived, rate-limited
  (kernel-paced) and sized TCP flows with DSCP set per socket (IP_TOS) and congestion
  control per socket (TCP_CONGESTION); ``[[traffic]]`` messages (the simulator's own flow
  arrivals, drawn into the emulation plan) over persistent connections, DSCP set per message,
  FCT per message; ICMP echo probes with the probe's DSCP, timed with the kernel's receive
  timestamp; application-layer byte counts sampled over time;
- DCTCP in the kernel: ecnlab's own BPF struct_ops congestion controls
  (crates/ecnlab-emu/bpf: ``ecnlab_dctcp``, RFC 8257; ``ecnlab_dctcp_dq``, the dual-AQM
  paper's), registered by ``ecnlab-cc-loader`` for the run and unregistered by the kernel
  when that process dies; a refusal stops the run unless ``--allow-fallback``;
- a reaper process that deletes the namespaces of a run killed with SIGKILL;
- ``summary.json`` with the same keys as ``ecnlab run``, plus ``emulation`` details.

Rates and scaling (``--rate``). This machine cannot carry 1 Gbit/s for many flows through
a userspace switch. ``--rate R`` runs the scenario with host links at R instead of the
scenario's ``topology.link_rate`` (factor s = link_rate / R), in one of two ways:

- ``--scale dilate`` (default): time dilation. Every rate is divided by s and every time
  (link delays, TCN's threshold, CoDel's target and interval, RTO_min, flow start times,
  the duration, probe intervals...) multiplied by s; sizes (buffers, queue-length
  thresholds, MSS) stay. Bandwidth-delay products, queue thresholds and windows are then
  the same *in packets* as in the original scenario, so TCP and the marking schemes see
  the same dynamics, s times slower. Measured times (probe RTTs, sojourn) are s times the
  original's; the summary gives both (``emulation.unscaled``).
- ``--scale rate``: only rates are divided by s; times stay. Then BDPs shrink by s, and so
  must queue-length thresholds: ``marking.*.k``, ``k_per_queue``, ``min_th``, ``max_th``
  and ``dq_thresh`` are divided by s, while time thresholds (TCN's T, CoDel's target) do
  not change (T = RTT x lambda does not depend on the rate; K = C x RTT x lambda does).
  Buffers are not scaled. With small s this keeps the base RTT; with large s the
  thresholds fall to a packet or two and the emulation says little.

Measured here: one TCP flow through the switch sustains about 300 Mbit/s on this 2-core
VM (the switch's thread also carries the kernel's veth delivery work); ``--rate auto``
picks 100 Mbit/s for faster scenarios.

Python API: :func:`emulate`. Command line: :func:`main` (``ecnlab emulate``). The package:
``common`` (errors, constants), ``units`` (the resolved scenario, units), ``plan`` (the
emulation plan the core builds: scaling, units, flows, the switch's configuration),
``namespaces`` (the environment), ``kernel_cc`` (BPF DCTCP), ``agent`` (traffic agents),
``run`` (the run: plan, namespaces, switch, agents), ``collect`` (its results in the files
of ``ecnlab run``), ``command`` (the command line).
"""

from __future__ import annotations

# The package's names, as when it was one module (tests and ecnlab.validation use some of
# the private ones).
from .common import *  # noqa: F401,F403
from .common import _Terminated  # noqa: F401
from .units import *  # noqa: F401,F403
from .namespaces import *  # noqa: F401,F403
from .namespaces import (_delete_namespaces, _in_netns, _new_prefix, _offloads_off, _die_with_run, _run,  # noqa: F401
                         _write_sysctls)
from .kernel_cc import *  # noqa: F401,F403
from .kernel_cc import _core_defaults  # noqa: F401
from .plan import *  # noqa: F401,F403
from .collect import *  # noqa: F401,F403
from .run import *  # noqa: F401,F403
from .run import _fill_ideal_fct, _readline, _why  # noqa: F401
from .command import main  # noqa: F401
