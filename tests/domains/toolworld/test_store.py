"""Store dumps and diffs: inserted keys masked, free text by presence, whole tables counted."""

import sqlite3

from referee.domains.toolworld.store import dump_store, open_read_only, store_diff


def db_with(sql):
    db = sqlite3.connect(":memory:")
    db.executescript(sql)
    return db


def test_inserted_keys_are_masked_so_the_order_of_calls_does_not_matter():
    base = "CREATE TABLE r(id INTEGER PRIMARY KEY, order_id INT, body TEXT); INSERT INTO r VALUES (1, 5, 'x');"
    a, b = db_with(base), db_with(base)
    before = dump_store(a)
    a.executescript(
        "INSERT INTO r (order_id, body) VALUES (7, 'hi'); INSERT INTO r (order_id, body) VALUES (8, 'yo');"
    )
    b.executescript(
        "INSERT INTO r (order_id, body) VALUES (8, 'other'); INSERT INTO r (order_id, body) VALUES (7, 'words');"
    )
    free = {"r": ["body"]}
    assert store_diff(before, dump_store(a), free_text=free) == store_diff(
        before, dump_store(b), free_text=free
    )
    assert store_diff(before, dump_store(a), free_text=free) == {
        "r": {"added": [[None, 7, True], [None, 8, True]], "removed": []}
    }
    assert store_diff(before, dump_store(a)) != store_diff(before, dump_store(b))  # words count


def test_an_existing_row_changed_or_a_table_dropped_shows_in_the_diff():
    db = db_with(
        "CREATE TABLE t(id INTEGER PRIMARY KEY, v INT); CREATE TABLE u(x); INSERT INTO t VALUES (1, 1), (2, 2); INSERT INTO u VALUES (3);"
    )
    before = dump_store(db)
    db.executescript("UPDATE t SET v = 9 WHERE id = 2; DROP TABLE u;")
    assert store_diff(before, dump_store(db)) == {
        "t": {"added": [[2, 9]], "removed": [[2, 2]]},
        "u": {"added": [], "removed": [[3]]},
    }


def test_a_store_file_is_opened_read_only(tmp_path):
    path = tmp_path / "s.db"
    db = sqlite3.connect(path)
    db.executescript("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
    db.commit()
    db.close()
    ro = open_read_only(path)
    try:
        assert ro.execute("SELECT x FROM t").fetchall() == [(1,)]
        try:
            ro.execute("INSERT INTO t VALUES (2)")
            raise AssertionError("wrote to a read-only store")
        except sqlite3.OperationalError:
            pass
    finally:
        ro.close()
