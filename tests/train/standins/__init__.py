"""Recorded-signature stand-ins for trainer packages that are not on the package index here
(rLLM, slime, NeMo RL). Each mirrors the signatures in tests/trainers/fixtures/signatures/ and
is checked against them by the tests that use it."""
