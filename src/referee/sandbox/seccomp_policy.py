"""The seccomp filters, built with libseccomp's Python bindings (``pyseccomp``).

Two filters, stacked:

* the **base filter** goes to bubblewrap (``--seccomp FD``) and binds every process of the sandbox:
  no sockets but ``AF_UNIX``, no ptrace, no mounts, no new namespaces, no kernel keyrings, no BPF,
  no perf events, no io_uring, no kernel modules or reboot, no clock changes. Denied calls fail
  with ``EPERM`` so programs see an ordinary error, not a crash.
* the **child filter** is added by the fork server to each run's process (and inherited by all it
  forks): it cannot signal or open a pidfd on the server or the namespace's init. Filters only
  ever add restrictions, so the child keeps everything the base filter denies.

Syscall arguments are compared on their low 32 bits, because the kernel truncates ``int``
arguments: ``kill(0xffffffff, ...)`` is ``kill(-1, ...)``.
"""

from __future__ import annotations

import errno
import socket
import tempfile

import pyseccomp as sc

__all__ = ["DENIED_SYSCALLS", "base_filter", "base_filter_bpf", "child_filter", "child_filter_bpf"]

DENIED_SYSCALLS = (
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsmount",
    "fsconfig",
    "fspick",
    "mount_setattr",
    "unshare",
    "setns",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "fanotify_init",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "quotactl",
    "syslog",
    "vhangup",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "iopl",
    "ioperm",
    "open_by_handle_at",
    "name_to_handle_at",
    "lookup_dcookie",
    "personality",
    "uselib",
)

_CLONE_NS_FLAGS = (
    0x10000000,  # CLONE_NEWUSER
    0x00020000,  # CLONE_NEWNS
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
    0x08000000,  # CLONE_NEWIPC
    0x04000000,  # CLONE_NEWUTS
    0x02000000,  # CLONE_NEWCGROUP
)
_TIOCSTI = 0x5412
_TIOCLINUX = 0x541C
_LOW32 = 0xFFFFFFFF


def _export(f: sc.SyscallFilter) -> bytes:
    with tempfile.TemporaryFile() as t:
        f.export_bpf(t)
        t.seek(0)
        return t.read()


def _deny(f: sc.SyscallFilter, name: str, *args: sc.Arg) -> None:
    try:
        f.add_rule(sc.ERRNO(errno.EPERM), name, *args)
    except (RuntimeError, OSError, ValueError):
        # A name this kernel/libseccomp does not know cannot be called either.
        pass


def base_filter() -> sc.SyscallFilter:
    f = sc.SyscallFilter(defaction=sc.ALLOW)
    for name in DENIED_SYSCALLS:
        _deny(f, name)
    # Network: a socket of any family but AF_UNIX fails. The network namespace has no interface
    # beyond loopback anyway; this also closes loopback, raw sockets, netlink and packet sockets.
    _deny(f, "socket", sc.Arg(0, sc.NE, socket.AF_UNIX))
    _deny(f, "socketpair", sc.Arg(0, sc.NE, socket.AF_UNIX))
    for flag in _CLONE_NS_FLAGS:
        _deny(f, "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    # clone3 passes flags in memory, out of a filter's reach: ENOSYS makes libc fall back to clone.
    f.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    for request in (_TIOCSTI, _TIOCLINUX):
        _deny(f, "ioctl", sc.Arg(1, sc.MASKED_EQ, _LOW32, request))
    return f


def base_filter_bpf() -> bytes:
    """The compiled base filter, in the form ``bwrap --seccomp FD`` reads."""
    return _export(base_filter())


def child_filter(protected_pids: tuple[int, ...]) -> sc.SyscallFilter:
    """A filter that forbids signalling ``protected_pids`` (and every process via ``kill(-1)``).

    Process groups of the protected pids are covered too (``kill(-pid)``); ``pidfd_open`` on
    them is refused, and so is ``pidfd_send_signal`` outright (the child has no business with it).
    """
    f = sc.SyscallFilter(defaction=sc.ALLOW)
    targets = {(-1) & _LOW32}
    for pid in protected_pids:
        targets.add(pid & _LOW32)
        targets.add((-pid) & _LOW32)
    for value in sorted(targets):
        _deny(f, "kill", sc.Arg(0, sc.MASKED_EQ, _LOW32, value))
    for pid in protected_pids:
        _deny(f, "tkill", sc.Arg(0, sc.MASKED_EQ, _LOW32, pid))
        _deny(f, "tgkill", sc.Arg(0, sc.MASKED_EQ, _LOW32, pid))
        _deny(f, "tgkill", sc.Arg(1, sc.MASKED_EQ, _LOW32, pid))
        _deny(f, "pidfd_open", sc.Arg(0, sc.MASKED_EQ, _LOW32, pid))
        _deny(f, "rt_sigqueueinfo", sc.Arg(0, sc.MASKED_EQ, _LOW32, pid))
        _deny(f, "rt_tgsigqueueinfo", sc.Arg(0, sc.MASKED_EQ, _LOW32, pid))
        _deny(f, "prlimit64", sc.Arg(0, sc.MASKED_EQ, _LOW32, pid))
    _deny(f, "pidfd_send_signal")
    return f


def child_filter_bpf(protected_pids: tuple[int, ...]) -> bytes:
    """The compiled child filter, ready for ``prctl(PR_SET_SECCOMP)`` in the fork server."""
    return _export(child_filter(protected_pids))
