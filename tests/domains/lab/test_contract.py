"""The lab domain keeps referee's contract: ``referee domains check lab``."""

from referee.discovery import domain_record
from referee.domains.contract import check_domain


def test_referee_finds_the_domain_with_its_parts():
    record = domain_record("lab")
    assert record.ok, record.error
    assert record.parts["family"] == [
        "lab-kinetics",
        "lab-population",
        "lab-pharmacology",
        "lab-circuits",
    ]
    assert record.parts["kind"] == ["lab"] and record.parts["env"] == ["lab"]
    assert record.parts["corpus"] == ["lab"]


def test_the_contract_holds():
    results = check_domain("lab", per_family=3, seed=21)
    assert all(r.ok for r in results), [(r.name, r.detail) for r in results if not r.ok]
    assert [r.name for r in results] == [
        "loads",
        "tasks made",
        "gold passes",
        "empty fails",
        "exploits held",
        "hidden not in view",
    ]
