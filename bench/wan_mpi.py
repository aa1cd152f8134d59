#!/usr/bin/env python3
"""wan_mpi - MPI ranks in network namespaces, one per cluster, joined
through a user-space delay line: PETSc under the wide-area latency that
Jace's virtual grids emulate in their transport.

This kernel has no netem (nor fq, nor etf): no qdisc can delay a packet.
So the clusters' namespaces are joined by veths to a router namespace,
which routes every packet between clusters into a TUN device; this
script reads it there, holds each packet for the one-way delay, and
writes it back through a second TUN device, whence the router forwards
it to its cluster.  Inside a cluster, ranks reach each other on their
namespace's own address, with no delay.

Open MPI's ranks reach their launcher through PMIx, on the root
namespace's loopback, which a namespace does not see: each rank is
started through this script, which bridges its namespace's loopback port
to the root namespace's before the rank starts.

Usage (root):
    wan_mpi.py run --delay-ms MS [--rate-mbps R] --ranks A:4,B:4 \\
        MPIRUN-OPTIONS -- PROGRAM ARGS...
        Makes the testbed, runs `mpirun MPIRUN-OPTIONS` with the ranks
        (in cluster order) in their namespaces, removes the testbed, and
        exits with mpirun's status.
    wan_mpi.py rank NAMESPACE -- PROGRAM ARGS...
        (what mpirun runs for each rank)
"""
import ctypes
import fcntl
import heapq
import os
import re
import select
import signal
import socket
import struct
import subprocess
import sys
import time

CLONE_NEWNET = 0x40000000
TUNSETIFF = 0x400454CA
IFF_TUN, IFF_NO_PI = 0x0001, 0x1000
SUBNET = "10.79"                #  Cluster i is 10.79.i.0/24, i from 1
LIBC = ctypes.CDLL("libc.so.6", use_errno=True)


def setns(path):
    """Move this thread into the network namespace at path."""
    fd = os.open(path, os.O_RDONLY)
    try:
        if LIBC.setns(fd, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "setns " + path)
    finally:
        os.close(fd)


def ip(*args):
    subprocess.run(("ip",) + args, check=True)


# ---------------------------------------------------------------------------
# The delay line, run in the router namespace

def tun_open(name):
    fd = os.open("/dev/net/tun", os.O_RDWR)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(),
                                           IFF_TUN | IFF_NO_PI))
    return fd


def delay_line(router, delay, rate):
    """Read packets from the router's `in` TUN, write each `delay`
    seconds later into its `out` TUN, at most `rate` bytes a second
    through (one link both ways, as a shared backbone; 0: no limit);
    never returns."""
    setns("/run/netns/" + router)
    tun_in, tun_out = tun_open("jdl-in"), tun_open("jdl-out")
    for name in ("jdl-in", "jdl-out"):
        ip("link", "set", name, "up")
    subprocess.run(("sysctl", "-q", "-w", "net.ipv4.conf.jdl-out.rp_filter=0",
                    "net.ipv4.conf.all.rp_filter=0"), check=True)
    #  Packets from a cluster's veth go into the line; out of it, the main
    #  table sends them to their cluster
    ip("rule", "add", "pref", "100", "iif", "jdl-out", "lookup", "main")
    ip("rule", "add", "pref", "200", "to", SUBNET + ".0.0/16",
       "lookup", "179")
    ip("route", "add", SUBNET + ".0.0/16", "dev", "jdl-in", "table", "179")
    os.write(1, b"ready\n")
    held = []                   #  (due, sequence, packet)
    sequence = 0
    free_at = 0.0               #  When the link has sent what it holds
    while True:
        wait = max(0.0, held[0][0] - time.monotonic()) if held else None
        ready, _, _ = select.select([tun_in], [], [], wait)
        if ready:
            packet = os.read(tun_in, 65536)
            sequence += 1
            now = time.monotonic()
            sent = now
            if rate > 0:
                free_at = max(free_at, now) + len(packet) / rate
                sent = free_at
            heapq.heappush(held, (sent + delay, sequence, packet))
        now = time.monotonic()
        while held and held[0][0] <= now:
            os.write(tun_out, heapq.heappop(held)[2])


# ---------------------------------------------------------------------------
# The PMIx bridge, started by a rank's wrapper

def bridge(namespace, port, ready_fd, pid_dir):
    """Listen on 127.0.0.1:port in the namespace, forward each connection
    to 127.0.0.1:port in the root namespace, until the run that started
    the testbed kills it (its pid is in pid_dir); exit at once if another
    rank's bridge has the port."""
    root = os.open("/proc/self/ns/net", os.O_RDONLY)
    setns("/run/netns/" + namespace)
    listener = socket.socket()
    try:
        listener.bind(("127.0.0.1", port))
        listener.listen(16)
    except OSError:
        os.write(ready_fd, b"x")        #  A bridge is there already
        os._exit(0)
    if LIBC.setns(root, CLONE_NEWNET) != 0:
        os._exit(1)
    with open(os.path.join(pid_dir, str(os.getpid())), "w"):
        pass
    os.write(ready_fd, b"y")
    os.close(ready_fd)
    peers = {}
    while True:
        ready, _, _ = select.select([listener] + list(peers), [], [])
        for sock in ready:
            if sock is listener:
                inner, _ = listener.accept()
                outer = socket.create_connection(("127.0.0.1", port))
                peers[inner], peers[outer] = outer, inner
                continue
            if sock not in peers:
                continue        #  Closed with its peer in this pass
            data = b""
            try:
                data = sock.recv(65536)
            except OSError:
                pass
            if data:
                try:
                    peers[sock].sendall(data)
                    continue
                except OSError:
                    pass
            other = peers.pop(sock)
            peers.pop(other, None)
            sock.close()
            other.close()


def rank(namespace, command):
    """Bridge PMIx into the namespace, then become the rank there."""
    uri = next((value for key, value in os.environ.items()
                if key.startswith("PMIX_SERVER_URI")), "")
    match = re.search(r"tcp4://127\.0\.0\.1:(\d+)", uri)
    if match:
        read_fd, write_fd = os.pipe()
        if os.fork() == 0:
            #  Nothing of the rank's: mpirun waits for the end of its
            #  output pipes, which the bridge must not hold
            os.setsid()
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            os.closerange(3, write_fd)
            os.closerange(write_fd + 1, 65536)
            bridge(namespace, int(match.group(1)), write_fd,
                   os.environ["JACE_WAN_DIR"])
        os.close(write_fd)
        os.read(read_fd, 1)
    setns("/run/netns/" + namespace)
    os.execvp(command[0], command)


# ---------------------------------------------------------------------------
# The testbed

def testbed_names(tag, clusters):
    """The router's namespace and each cluster's, in order."""
    return ("jwan-%s-r" % tag,
            ["jwan-%s-%s" % (tag, name) for name, _ in clusters])


def testbed_up(tag, clusters):
    router, namespaces = testbed_names(tag, clusters)
    ip("netns", "add", router)
    ip("-n", router, "link", "set", "lo", "up")
    subprocess.run(("ip", "netns", "exec", router, "sysctl", "-q", "-w",
                    "net.ipv4.ip_forward=1"), check=True)
    for index, namespace in enumerate(namespaces, 1):
        inside, outside = "jw%s%dc" % (tag, index), "jw%s%dr" % (tag, index)
        ip("netns", "add", namespace)
        ip("link", "add", inside, "netns", namespace, "type", "veth",
           "peer", "name", outside, "netns", router)
        ip("-n", namespace, "addr", "add", "%s.%d.2/24" % (SUBNET, index),
           "dev", inside)
        ip("-n", router, "addr", "add", "%s.%d.1/24" % (SUBNET, index),
           "dev", outside)
        for ns, device in ((namespace, inside), (router, outside),
                           (namespace, "lo")):
            ip("-n", ns, "link", "set", device, "up")
        ip("-n", namespace, "route", "add", "default", "via",
           "%s.%d.1" % (SUBNET, index))


def testbed_down(router, namespaces):
    for namespace in [router] + namespaces:
        subprocess.run(("ip", "netns", "del", namespace),
                       stderr=subprocess.DEVNULL)


def run(argv):
    delay, rate, clusters, options = 0.0, 0.0, [], []
    while argv and argv[0] != "--":
        if argv[0] == "--delay-ms":
            delay = float(argv[1]) / 1000
            argv = argv[2:]
        elif argv[0] == "--rate-mbps":
            rate = float(argv[1]) * 1e6 / 8
            argv = argv[2:]
        elif argv[0] == "--ranks":
            if not re.fullmatch(r"[A-Za-z0-9]{1,8}:[1-9][0-9]*"
                                r"(,[A-Za-z0-9]{1,8}:[1-9][0-9]*)*", argv[1]):
                sys.exit("wan_mpi: --ranks takes NAME:COUNT,... (names of"
                         " 1-8 letters or digits), not '%s'" % argv[1])
            clusters = [(name, int(count)) for name, count in
                        (item.split(":") for item in argv[1].split(","))]
            argv = argv[2:]
        else:
            options.append(argv.pop(0))
    command = argv[1:]
    if len({name for name, _ in clusters}) != len(clusters):
        sys.exit("wan_mpi: --ranks names a cluster twice")
    if not clusters or not command:
        sys.exit("wan_mpi: run needs --ranks NAME:COUNT,... and -- PROGRAM")
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: sys.exit(130))
    tag = "%x" % (os.getpid() % 0xFFFF)
    pid_dir = "/run/jace-wan-" + tag
    os.makedirs(pid_dir, exist_ok=True)
    router, namespaces = testbed_names(tag, clusters)
    line = None
    status = 1
    try:
        #  Inside: a testbed half made is removed as a whole one
        testbed_up(tag, clusters)
        line = subprocess.Popen((sys.executable, os.path.abspath(__file__),
                                 "line", router, str(delay), str(rate)),
                                stdout=subprocess.PIPE)
        if line.stdout.readline().strip() != b"ready":
            sys.exit("wan_mpi: the delay line did not start")
        os.environ["JACE_WAN_DIR"] = pid_dir
        mpirun = ["mpirun", "-x", "JACE_WAN_DIR", "--mca", "btl", "self,tcp",
                  "--mca", "btl_tcp_if_include", SUBNET + ".0.0/16"] + options
        for (_, count), namespace in zip(clusters, namespaces):
            mpirun += ["-n", str(count), sys.executable,
                       os.path.abspath(__file__), "rank", namespace,
                       "--"] + command + [":"]
        #  A session of its own: mpirun's kills on an error must not
        #  take this script, which still has the testbed to remove
        status = subprocess.run(mpirun[:-1],
                                start_new_session=True).returncode
    finally:
        if line:
            line.send_signal(signal.SIGTERM)
            line.wait()
        for pid in os.listdir(pid_dir):
            try:
                os.kill(int(pid), signal.SIGTERM)
            except (OSError, ValueError):
                pass
            os.unlink(os.path.join(pid_dir, pid))
        os.rmdir(pid_dir)
        testbed_down(router, namespaces)
    sys.exit(status)


def main():
    if os.geteuid() != 0:
        sys.exit("wan_mpi: needs root (network namespaces)")
    if len(sys.argv) >= 2 and sys.argv[1] == "run":
        run(sys.argv[2:])
    elif len(sys.argv) >= 5 and sys.argv[1] == "line":
        delay_line(sys.argv[2], float(sys.argv[3]), float(sys.argv[4]))
    elif len(sys.argv) >= 5 and sys.argv[1] == "rank" and sys.argv[3] == "--":
        rank(sys.argv[2], sys.argv[4:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
