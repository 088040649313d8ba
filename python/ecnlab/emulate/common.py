"""What every part of the emulation shares: its error types, addresses, wire header and
the Linux constants Python's socket module may lack."""

from __future__ import annotations

import socket
import struct

# How an emulation fails is decided with every other command's failures (ecnlab/exits.py).
from ..exits import EmulationError, Terminated as _Terminated  # noqa: F401


ERROR_PREFIX = "ecnlab: error: "
NEEDS = "emulation needs root and network namespaces"

# Addresses and ports, private to the namespaces this module creates.
SUBNET = "10.77.0"
TCP_PORT = 5001
# Before each message on a connection: flow id, size (0 = long-lived), and 0 for a
# [[flows]] flow or 1 + its DSCP for a [[traffic]] message (whose bytes the receiver counts
# per class, not per flow: thousands of flows would bloat every sample).
HEADER = struct.Struct("!IQB")
SIOCOUTQNSD = 0x894B  # bytes in a TCP socket's send queue not yet sent (sockios.h)
SOCKET_BUFFER = 4 << 20

# Linux constants not in the socket module of every Python.
SO_TIMESTAMPNS = 35
SO_MAX_PACING_RATE = getattr(socket, "SO_MAX_PACING_RATE", 47)
TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)
TCP_INFO = getattr(socket, "TCP_INFO", 11)
CLONE_NEWNET = 0x40000000
SIOCETHTOOL = 0x8946
# ethtool legacy "set" commands (include/uapi/linux/ethtool.h).
ETHTOOL_SRXCSUM, ETHTOOL_STXCSUM, ETHTOOL_SSG = 0x15, 0x17, 0x19
ETHTOOL_STSO, ETHTOOL_SGSO, ETHTOOL_SGRO = 0x1F, 0x24, 0x2C
