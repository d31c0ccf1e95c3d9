"""A MySQL dump as SQLite statements (:mod:`referee.domains.sql.mysqldump`): the tables and
rows of a mysqldump load into SQLite, escapes and index syntax rewritten."""

from __future__ import annotations

import sqlite3

from referee.domains.sql.mysqldump import sqlite_databases, unescape_strings

DUMP = r"""-- MySQL dump
/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;
CREATE DATABASE IF NOT EXISTS `shop` /*!40100 DEFAULT CHARACTER SET utf8mb4 */;
USE `shop`;
DROP TABLE IF EXISTS `item`;
CREATE TABLE `item` (
  `id` int unsigned NOT NULL AUTO_INCREMENT,
  `name` varchar(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci DEFAULT NULL,
  `price` decimal(10,2) DEFAULT '0.00',
  PRIMARY KEY (`id`,`name`(10)),
  UNIQUE KEY `name_u` (`name`),
  KEY `price_k` (`price`)
) ENGINE=InnoDB AUTO_INCREMENT=4 DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci;
LOCK TABLES `item` WRITE;
INSERT INTO `item` VALUES (1,'O\'Brien\'s \\ pen',1.50),(2,'line\nbreak',2.00),(3,'it''s',NULL);
UNLOCK TABLES;
CREATE DATABASE IF NOT EXISTS `empty`;
USE `empty`;
CREATE TABLE `t` (
  `a` int DEFAULT NULL
) ENGINE=InnoDB;
"""


def test_each_database_loads_into_sqlite_with_its_rows() -> None:
    dbs = sqlite_databases(DUMP)
    assert list(dbs) == ["shop", "empty"]
    con = sqlite3.connect(":memory:")
    con.executescript(dbs["shop"][0])
    con.executescript(dbs["shop"][1])
    rows = con.execute("SELECT id, name, price FROM item ORDER BY id").fetchall()
    assert rows == [(1, "O'Brien's \\ pen", 1.5), (2, "line\nbreak", 2), (3, "it's", None)]
    with_dupe = "INSERT INTO item VALUES (9, 'line\nbreak', 1)"
    try:
        con.execute(with_dupe)
        raise AssertionError("the UNIQUE key was lost")
    except sqlite3.IntegrityError:
        pass
    ddl, inserts = dbs["empty"]
    assert inserts == "" and "ENGINE" not in ddl


def test_string_escapes() -> None:
    assert (
        unescape_strings(r"('a\'b', 'c\\d', 'e\"f', 'x''y')") == "('a''b', 'c\\d', 'e\"f', 'x''y')"
    )
    assert unescape_strings("no strings here") == "no strings here"
