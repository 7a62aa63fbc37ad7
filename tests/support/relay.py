"""A slow link in user space: ``python relay.py IF_A IF_B DELAY_S`` forwards every Ethernet frame that
arrives on interface IF_A out of IF_B, and back, each DELAY_S seconds after it arrived (in order: the
delay is the same for every frame). Used by tests/support/netns.py where the kernel has no ``netem``
qdisc to delay a link; it runs in a namespace of its own holding the two interfaces, so it is ended
with the test hosts.

Frames larger than the link's MTU (segmentation offloads) cannot be sent on: the hosts' offloads are
turned off first (:func:`no_offloads`), and the relay counts what it drops on stderr at its end.
"""

from __future__ import annotations

import collections
import socket
import sys
import threading
import time

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4  # a frame this host sent, seen by the packet socket too: not forwarded again


def no_offloads(interface: str) -> None:
    """Turn off TCP segmentation, generic segmentation, scatter-gather and checksum offload on
    *interface* (of the caller's network namespace), so every frame is at most its MTU and summed: the
    ethtool ioctl's legacy set commands (``ethtool -K IF tso off gso off sg off tx off``; no ethtool
    binary needed)."""
    import ctypes
    import fcntl
    import struct

    SIOCETHTOOL = 0x8946
    # a frame with its checksum left to the device (veth's default) arrives unsummed, and would be
    # dropped by the receiver once relayed: the sender sums it
    for cmd in (0x1F, 0x24, 0x19, 0x17):  # ETHTOOL_STSO, ETHTOOL_SGSO, ETHTOOL_SSG, ETHTOOL_STXCSUM
        value = ctypes.create_string_buffer(struct.pack("II", cmd, 0))
        request = struct.pack("16sP", interface.encode(), ctypes.addressof(value))
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            fcntl.ioctl(s, SIOCETHTOOL, request)


def _one_way(src: socket.socket, dst: socket.socket, delay: float, dropped: list) -> None:
    queue: collections.deque = collections.deque()
    ready = threading.Condition()

    def send_on():
        while True:
            with ready:
                while not queue:
                    ready.wait()
                due, frame = queue[0]
            wait = due - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            with ready:
                queue.popleft()
            try:
                dst.send(frame)
            except OSError:
                dropped[0] += 1

    threading.Thread(target=send_on, daemon=True).start()
    while True:
        frame, address = src.recvfrom(65536)
        if address[2] == PACKET_OUTGOING:
            continue
        with ready:
            queue.append((time.monotonic() + delay, frame))
            ready.notify()


def main(a: str, b: str, delay: float) -> None:
    sockets = []
    for name in (a, b):
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        s.bind((name, ETH_P_ALL))
        sockets.append(s)
    dropped = [0]
    threading.Thread(target=_one_way, args=(sockets[0], sockets[1], delay, dropped), daemon=True).start()
    print("relaying", flush=True)
    try:
        _one_way(sockets[1], sockets[0], delay, dropped)
    finally:
        print(f"relay: {dropped[0]} frames dropped", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]))
