"""A tiny imported tool world (a lending library), for the toolworld-rows import's tests."""


def find_book(db, title: str):
    """Books whose title contains the text: id, title, copies left."""
    rows = db.execute(
        "SELECT id, title, copies FROM books WHERE instr(lower(title), lower(?)) > 0", (title,)
    ).fetchall()
    return [{"book_id": r[0], "title": r[1], "copies": r[2]} for r in rows]


def lend(db, book_id: int, member: str):
    """Lend a copy of a book to a member (at most two loans a member)."""
    row = db.execute("SELECT copies FROM books WHERE id = ?", (book_id,)).fetchone()
    if row is None:
        raise ToolError(f"book {book_id} not found")  # noqa: F821 (given by the runner)
    if row[0] < 1:
        raise ToolError(f"no copy of book {book_id} left")  # noqa: F821
    loans = db.execute("SELECT COUNT(*) FROM loans WHERE member = ?", (member,)).fetchone()[0]
    if loans >= 2:
        violation("loan-limit")  # noqa: F821 (given by the runner)
    db.execute("UPDATE books SET copies = copies - 1 WHERE id = ?", (book_id,))
    cur = db.execute("INSERT INTO loans (book_id, member) VALUES (?, ?)", (book_id, member))
    return {"loan_id": cur.lastrowid}


TOOLS = [find_book, lend]
