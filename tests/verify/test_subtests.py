"""A failing unittest subTest fails its test, whatever the test's own call report says."""

from referee.verify.repo_run import run_pytest

FILES = {
    "tests/test_sub.py": (
        "import unittest\n\n\nclass T(unittest.TestCase):\n"
        "    def test_with_subtests(self):\n"
        "        for i in range(3):\n"
        "            with self.subTest(i=i):\n"
        "                self.assertNotEqual(i, 1)\n\n"
        "    def test_plain(self):\n        self.assertTrue(True)\n"
    )
}


def test_failing_subtest_fails_the_test(repo_sandbox):
    run = run_pytest(repo_sandbox, FILES, ["tests/test_sub.py"], conftests=[])
    assert run.ready
    assert run.status("tests/test_sub.py::T::test_with_subtests") == "failed"
    assert run.status("tests/test_sub.py::T::test_plain") == "passed"
