from referee.synth.difficulty import estimate, features

ORIGINAL = "def f(x):\n    if x > 0:\n        return x\n    return -x\n"
BROKEN = ORIGINAL.replace("x > 0", "x >= 0")


def test_features_and_monotone_estimate():
    tests = {"tests/test_f.py": "from m import f\n\ndef test_f():\n    assert f(-1) == 1\n"}
    feats = features(
        ORIGINAL, BROKEN, function_names=["f"], f2p=["tests/test_f.py::test_f"],
        test_sources=tests, complexity=3, bugs=1, kind="bugfix",
    )  # fmt: skip
    assert feats["lines_changed"] == 2 and feats["fail_to_pass"] == 1
    assert feats["distance"] == 0.0  # the failing test names the function
    easy = estimate(feats)
    harder = estimate({**feats, "bugs": 3, "distance": 1.0, "complexity": 12})
    implement = estimate({**feats, "kind_implement": 1.0})
    assert 0 < easy < harder < 1 and easy < implement
