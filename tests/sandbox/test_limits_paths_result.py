import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.errors import ConfigError, UnsafePathError
from referee.sandbox import ExecResult, Limits
from referee.sandbox.paths import safe_relpath
from referee.sandbox.result import decode_output


def test_limits_defaults_are_safe():
    lim = Limits()
    assert lim.timeout_s == 10 and lim.memory_mb == 512 and lim.max_processes == 64
    assert lim.cpu_seconds == 11


@pytest.mark.parametrize(
    "kwargs",
    [
        {"timeout_s": 0},
        {"timeout_s": float("nan")},
        {"memory_mb": 1},
        {"cpu_s": -1},
        {"max_processes": 0},
        {"stdout_bytes": -1},
    ],
)
def test_limits_reject_bad_values_with_the_field_name(kwargs):
    with pytest.raises(ConfigError, match=next(iter(kwargs))):
        Limits(**kwargs)


@pytest.mark.parametrize(
    "name", ["/etc/passwd", "../x", "a/../../b", "a/..", "", "a\x00b", "./", "."]
)
def test_unsafe_names_are_refused(name):
    with pytest.raises(UnsafePathError):
        safe_relpath(name)


def test_safe_names_are_normalised():
    assert safe_relpath("a//b/./c.py") == ("a", "b", "c.py")


@given(st.text())
def test_safe_relpath_never_yields_an_escape(name):
    try:
        parts = safe_relpath(name)
    except UnsafePathError:
        return
    assert ".." not in parts and "" not in parts and not name.startswith("/")


def test_decode_output_never_fails_on_binary():
    assert decode_output(b"ok\xff\xfe\x00") == "ok\ufffd\ufffd\x00"


def test_exec_result_round_trips_through_json():
    r = ExecResult(exit_code=None, signal=9, timed_out=True, violations=["timeout"])
    again = ExecResult.model_validate_json(r.model_dump_json())
    assert again == r and not again.ok
    assert "timed out" in r.summary()
