"""The history file's schema, as the migrations that build it (grader/practice/store.py applies them)."""

# Each entry upgrades the schema by one version; PRAGMA user_version holds the version reached.
# Append, never edit: a learner's file at version N gets exactly migrations N+1.. applied.
MIGRATIONS: list[str] = [
    """
    CREATE TABLE workspaces (
        id INTEGER PRIMARY KEY,
        kata TEXT NOT NULL,
        path TEXT NOT NULL,
        started_at REAL NOT NULL,
        session_id TEXT
    );
    CREATE INDEX workspaces_kata ON workspaces(kata, started_at);
    CREATE INDEX workspaces_path ON workspaces(path, started_at);
    CREATE TABLE attempts (
        id INTEGER PRIMARY KEY,
        kata TEXT NOT NULL,
        workspace TEXT NOT NULL,
        time REAL NOT NULL,
        verdict TEXT NOT NULL,
        score REAL,
        backend TEXT NOT NULL,
        source_hash TEXT NOT NULL,
        elapsed REAL,
        session_id TEXT,
        phase TEXT NOT NULL DEFAULT 'practice',
        headline TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX attempts_kata ON attempts(kata, time);
    CREATE TABLE hints (
        id INTEGER PRIMARY KEY,
        kata TEXT NOT NULL,
        idx INTEGER NOT NULL,
        time REAL NOT NULL,
        session_id TEXT
    );
    CREATE INDEX hints_kata ON hints(kata, time);
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        created_at REAL NOT NULL,
        deadline REAL NOT NULL,
        folder TEXT NOT NULL,
        secret_seed INTEGER NOT NULL,
        state TEXT NOT NULL DEFAULT 'open',
        submitted_at REAL,
        report_path TEXT
    );
    CREATE TABLE session_katas (
        session_id TEXT NOT NULL REFERENCES sessions(id),
        position INTEGER NOT NULL,
        kata TEXT NOT NULL,
        workspace TEXT NOT NULL,
        frozen_sources TEXT,
        outcome TEXT,
        PRIMARY KEY (session_id, kata)
    );
    CREATE TABLE events (
        id INTEGER PRIMARY KEY,
        time REAL NOT NULL,
        kind TEXT NOT NULL,
        kata TEXT,
        session_id TEXT,
        detail TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX events_kata ON events(kata, kind, time);
    """,
]
SCHEMA_VERSION = len(MIGRATIONS)
