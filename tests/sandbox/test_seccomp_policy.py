import pytest

from referee.sandbox.seccomp_policy import (
    DENIED_SYSCALLS,
    base_filter,
    base_filter_bpf,
    child_filter_bpf,
)


def test_filters_compile_to_classic_bpf():
    for bpf in (base_filter_bpf(), child_filter_bpf((1, 2))):
        assert len(bpf) > 0 and len(bpf) % 8 == 0  # struct sock_filter is 8 bytes


def test_the_denylist_covers_the_known_escape_routes():
    for name in (
        "ptrace",
        "mount",
        "unshare",
        "setns",
        "bpf",
        "keyctl",
        "perf_event_open",
        "io_uring_setup",
        "kexec_load",
        "init_module",
        "userfaultfd",
    ):
        assert name in DENIED_SYSCALLS


def test_base_filter_object_is_buildable():
    assert base_filter() is not None


@pytest.mark.parametrize("pids", [(1, 2), (1, 3, 7)])
def test_child_filter_grows_with_protected_pids(pids):
    assert len(child_filter_bpf(pids)) >= len(child_filter_bpf((1,)))
