"""How each trainer's own client code calls a server, one module per client.

Each module has small functions that take a base URL and drive the real client package (installed
by scripts/bootstrap-contracts.sh), and a ``__main__`` that runs them against a URL given on the
command line, e.g.::

    .venv/bin/python -m tests.service.contract_probes.sandbox_fusion_probe http://127.0.0.1:8080

tests/service/test_contract_probes.py runs them against a recording stub and keeps what they sent
in tests/service/fixtures/wire/. docs/wire-protocols.md describes the protocols.
"""
