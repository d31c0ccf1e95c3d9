"""The error tree and its one exit-code policy."""

import pytest

from referee.errors import (
    EXIT_CODES,
    ConfigError,
    NotFoundError,
    PolicyError,
    RefereeError,
    SandboxError,
    SandboxUnavailable,
    StoreError,
    TaskError,
    UnsafePathError,
    VerifierError,
    exit_code_for,
)


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (ConfigError, 2),
        (UnsafePathError, 2),  # a ConfigError
        (TaskError, 2),
        (SandboxUnavailable, 2),  # more specific than SandboxError
        (NotFoundError, 2),  # more specific than StoreError
        (SandboxError, 1),
        (VerifierError, 1),
        (StoreError, 1),
        (PolicyError, 1),
        (RefereeError, 1),
    ],
)
def test_each_error_class_has_its_exit_code(error, code):
    assert exit_code_for(error("x")) == code


def test_a_subclass_takes_its_nearest_listed_ancestors_code():
    class BadSample(TaskError):
        pass

    class Flaky(SandboxError):
        pass

    assert exit_code_for(BadSample("x")) == 2 and exit_code_for(Flaky("x")) == 1


def test_not_found_is_a_store_error_and_anything_else_is_1():
    assert issubclass(NotFoundError, StoreError)
    assert exit_code_for(ValueError("a bug")) == 1
    assert set(EXIT_CODES.values()) == {1, 2}
