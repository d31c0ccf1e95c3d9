import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.verify import harness as H
from referee.verify.guard import scan

plain = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text()
    | st.binary(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=12,
)


@given(plain)
def test_plain_data_round_trips_exactly(value):
    encoded = H.encode(value)
    assert H.decode(encoded) == value
    assert H.same(encoded, H.encode(H.decode(encoded)))


@pytest.mark.parametrize("value", [True, 1, 1.0, "1", b"1", [1], (1,), None])
def test_types_are_distinguished(value):
    others = [v for v in [True, 1, 1.0, "1", b"1", [1], (1,), None] if type(v) is not type(value)]
    assert not any(H.same(H.encode(value), H.encode(o)) for o in others)


def test_subclasses_of_builtins_cannot_be_reported():
    class Sneaky(int):
        def __eq__(self, other):
            return True

    with pytest.raises(H.Unencodable):
        H.encode(Sneaky(3))
    with pytest.raises(H.Unencodable):
        H.encode([object()])


@pytest.mark.parametrize("bad", [[], ["int", 3], ["nope", 1], "x", ["list", "notalist"]])
def test_malformed_plain_data_is_refused(bad):
    with pytest.raises((ValueError, TypeError)):
        H.decode(bad)


@pytest.mark.parametrize(
    "code, kind",
    [
        ("import sys\nsys.exit(0)", "exit-call"),
        ("import os\nos._exit(0)", "exit-call"),
        ("raise SystemExit", "exit-call"),
        ("import inspect", "frame-inspection"),
        ("import sys\nf = sys._getframe(1)", "frame-inspection"),
        ("import builtins\nbuiltins.len = None", "module-patching"),
        ("class A:\n    def __eq__(self, o):\n        return True", "constant-comparison-dunder"),
        ("import atexit", "exit-hook"),
        ("import gc\ngc.get_objects()", "object-graph-inspection"),
        ("def f(:", "does-not-parse"),
    ],
)
def test_guard_flags_suspicious_code(code, kind):
    assert kind in {f.kind for f in scan(code)}


def test_guard_is_quiet_on_ordinary_code():
    assert scan("def f(xs):\n    return sorted(set(xs))[:3]\n") == []


def test_the_guard_parses_odd_literals_without_warning_on_the_host():
    # "1if" is valid Python that the parser warns about (an invalid decimal literal); a model
    # writes such code, and the warning used to land in the middle of referee train's output.
    import warnings

    from referee.verify.guard import scan

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert scan("def f(x):\n    return 1if x else 2\n") == []
