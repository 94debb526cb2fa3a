"""The engine and the schema: SQLite in the server's data folder by default, PostgreSQL through the
same code (a postgresql+psycopg:// URL). The schema is Alembic's migrations, applied at every start
(a no-op once at head), so an upgraded kata upgrades an existing database in place.
"""
from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, sessionmaker

from grader.errors import EnvironmentProblem, UsageError

MIGRATIONS = Path(__file__).with_name("migrations")


def data_folder(folder: str | os.PathLike | None = None) -> Path:
    """The server's folder: --data, else $KATA_HOME/server, else the user's data directory."""
    if folder:
        return Path(folder).expanduser().resolve()
    home = os.environ.get("KATA_HOME")
    if home:
        return Path(home).expanduser().resolve() / "server"
    import platformdirs

    return Path(platformdirs.user_data_dir("kata")) / "server"


def database_url(url: str | None, folder: Path) -> str:
    """--db URL, else $KATA_SERVER_DB, else sqlite:///<data folder>/server.db."""
    url = url or os.environ.get("KATA_SERVER_DB")
    if url:
        if url.startswith("postgresql://"):  # the driver kata installs: psycopg 3
            url = "postgresql+psycopg://" + url[len("postgresql://"):]
        if not url.startswith(("sqlite", "postgresql")):
            raise UsageError(f"--db {url.split(':')[0]}: kata serve speaks SQLite and PostgreSQL",
                             hint="use sqlite:///PATH or postgresql://USER@HOST/DB")
        return url
    folder.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{folder / 'server.db'}"


def engine_for(url: str) -> Engine:
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"timeout": 60, "check_same_thread": False})

        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_connection, _record):
            dbapi_connection.isolation_level = None  # we issue BEGIN ourselves, below
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=FULL")  # an answered upload survives a power cut
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _begin(conn):
            # Every transaction takes the write lock at its start: a deferred one that reads and
            # then writes can fail at once with "database is locked" instead of waiting its turn.
            conn.exec_driver_sql("BEGIN IMMEDIATE")

        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)


def migrate(engine: Engine) -> None:
    """Bring the schema to the newest migration."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    try:
        with engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, "head")
    except Exception as exc:  # an unreachable server, a wrong password: the deployment's problem
        from sqlalchemy.exc import OperationalError

        if isinstance(exc, OperationalError):
            raise EnvironmentProblem(f"cannot open the database {engine.url.render_as_string()}: "
                                     f"{str(exc.orig).strip().splitlines()[0]}",
                                     hint="check --db (docs/server.md: PostgreSQL)") from None
        raise


class Database:
    """An engine whose schema is current, and short transactions on it."""

    def __init__(self, url: str):
        self.url = url
        self.engine = engine_for(url)
        migrate(self.engine)
        self.sessions = sessionmaker(self.engine, expire_on_commit=False)

    def session(self) -> Session:
        """`with db.session() as s, s.begin(): ...` is one transaction."""
        return self.sessions()

    def close(self) -> None:
        self.engine.dispose()


def open_database(url: str | None = None, folder: str | os.PathLike | None = None) -> Database:
    return Database(database_url(url, data_folder(folder)))
