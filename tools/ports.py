"""Free TCP ports of 127.0.0.1 for servers the tools and tests start.

A port found free is released before its server binds it, which for a subprocess server is a second or more later. The
kernel hands out the ports of ``bind(("127.0.0.1", 0))`` and of outgoing connections from its ephemeral range
(``/proc/sys/net/ipv4/ip_local_port_range``, 32768-60999 by default), so a port picked there can be taken meanwhile by
any other server or client of the machine (CI once failed on ``address already in use`` that way). :func:`free_port`
picks at random from the 12,000 ports just below that range instead, where only another caller of this function
could land, and checks that nothing holds the port. A server that can take an already bound socket should get one
(``tests/support/webapp.py`` hands uvicorn its socket): no window at all.
"""

from __future__ import annotations

import random
import socket
from pathlib import Path

SPAN = 12_000  # how many ports below the ephemeral range free_port picks from
_RANDOM = random.SystemRandom()  # not the random module's generator: code that seeds it (a test, a library) would make
# every process that seeded it alike draw the same ports


def ephemeral_range() -> tuple[int, int]:
    """The kernel's ephemeral port range (Linux; the Linux default elsewhere)."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


def free_port() -> int:
    """A port of 127.0.0.1 that nothing is bound to now, outside the ephemeral range where the kernel can."""
    low = ephemeral_range()[0]
    first = max(1025, low - SPAN)
    for _ in range(100 if low - first >= 1000 else 0):
        port = _RANDOM.randrange(first, low)
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket() as probe:  # a machine whose ephemeral range starts near 1024: ask the kernel
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
