"""Chat sessions in the home: what `loci chat` said and heard, and the state it ended in.

A chat is a session (`chat_sessions`: id, when it began, which model) and
its messages in order (`chat_messages`: session, seq, role, text, the
working state after the message, when). The role is `user`, `assistant`,
or `error` for a line whose run failed (the error, shown and kept). The log is written as the chat
goes, so a killed process loses nothing it acknowledged: the user's line is
committed before the agent runs on it, and the answer is committed, with
the state it left, before it is shown. `--resume` reads the messages back
and continues from the last state.

A session belongs to the project `ChatLog` was built for (`memory.projects`),
and its messages with it: another project's session is "no chat session",
as one that never was, and `--resume` without an id takes the project's
latest. `project=ALL` reads every project's sessions and starts none.

The tables belong to their own migration set, `chat`, which
`memory.engines.sqlite.migrations.MIGRATION_SETS` lists, so every home has them.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import sqlite_utils
from sqlite_utils import Migrations

from loci.memory.engines.base import Engine
from loci.memory.errors import NotFoundError
from loci.memory.projects import ALL, DEFAULT_PROJECT, check_project, in_project, writable_project

__all__ = ["ChatLog", "ChatMessage", "ChatSession"]

MIGRATIONS = Migrations("chat")


@MIGRATIONS()
def create_chat_tables(db: sqlite_utils.Database) -> None:
    db.execute("CREATE TABLE chat_sessions (id INTEGER PRIMARY KEY, created REAL NOT NULL, model TEXT NOT NULL)")
    db.execute(
        "CREATE TABLE chat_messages ("
        " id INTEGER PRIMARY KEY, session_id INTEGER NOT NULL REFERENCES chat_sessions(id),"
        " seq INTEGER NOT NULL, role TEXT NOT NULL, text TEXT NOT NULL,"
        " state TEXT NOT NULL DEFAULT '', created REAL NOT NULL,"
        " window TEXT NOT NULL DEFAULT '[]',"  # the window's ids after an answer: --resume restores it
        " UNIQUE (session_id, seq))"
    )


@MIGRATIONS()
def chat_by_project(db: sqlite_utils.Database) -> None:
    """Every session belongs to a project (its messages through it); a home's old sessions are `default`'s."""
    db.execute("ALTER TABLE chat_sessions ADD COLUMN project TEXT NOT NULL DEFAULT 'default'")
    db.execute("CREATE INDEX chat_sessions_project ON chat_sessions (project, id)")


@dataclass(frozen=True)
class ChatSession:
    id: int
    created: float
    model: str
    project: str = DEFAULT_PROJECT


@dataclass(frozen=True)
class ChatMessage:
    seq: int
    role: str  # "user", "assistant", or "error" (a run that failed; the text says why)
    text: str
    state: str
    created: float
    window: tuple[str, ...] = ()


class ChatLog:
    """The chat sessions of one project of a store (`project=ALL`: of every project, for reading)."""

    def __init__(self, store: Engine, *, project: str | None = DEFAULT_PROJECT) -> None:
        self.store = store
        self.project = project if project is ALL else check_project(project)

    async def start(self, model: str) -> ChatSession:
        project = writable_project(self.project)

        def insert(db: Any) -> ChatSession:
            created = time.time()
            row = db.execute(
                "INSERT INTO chat_sessions (created, model, project) VALUES (?, ?, ?) RETURNING id",
                [created, model, project],
            ).fetchone()
            return ChatSession(int(row[0]), created, model, project)

        return await self.store.write(insert)

    async def find(self, session_id: int | None = None) -> ChatSession:
        """The session `session_id`, or the latest one; a clear error when there is none."""
        return await self.store.read(lambda db: self._find(db, session_id))

    def _find(self, db: Any, session_id: int | None) -> ChatSession:
        where, args = in_project(self.project)
        if session_id is None:
            rows = list(db.query(f"SELECT * FROM chat_sessions WHERE TRUE{where} ORDER BY id DESC LIMIT 1", args))
            missing = "there is no chat to resume in this home; start one with `loci chat`"
        else:
            rows = list(db.query(f"SELECT * FROM chat_sessions WHERE id = ?{where}", [session_id, *args]))
            missing = f"no chat session {session_id} in this home"
        if not rows:
            raise NotFoundError(missing)
        return ChatSession(rows[0]["id"], rows[0]["created"], rows[0]["model"], rows[0]["project"])

    async def add(
        self, session_id: int, role: str, text: str, state: str = "", window: list[str] | None = None
    ) -> ChatMessage:
        """Append one message to a session of this project, committed before this returns."""
        writable_project(self.project)

        def insert(db: Any) -> ChatMessage:
            self._find(db, session_id)
            row = db.execute(
                "SELECT COALESCE(MAX(seq), 0) + 1 FROM chat_messages WHERE session_id = ?", [session_id]
            ).fetchone()
            message = ChatMessage(int(row[0]), role, text, state, time.time(), tuple(window or ()))
            db.execute(
                'INSERT INTO chat_messages (session_id, seq, role, text, state, created, "window")'
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                [session_id, message.seq, role, text, state, message.created, json.dumps(list(message.window))],
            )
            return message

        return await self.store.write(insert)

    async def messages(self, session_id: int) -> list[ChatMessage]:
        """The session's messages in order; none for a session that is not this project's."""
        where, args = in_project(self.project, "s.project")
        sql = (
            'SELECT m.seq, m.role, m.text, m.state, m.created, m."window" FROM chat_messages m'
            f" JOIN chat_sessions s ON s.id = m.session_id WHERE m.session_id = ?{where} ORDER BY m.seq"
        )

        def fetch(db: Any) -> list[ChatMessage]:
            rows = db.query(sql, [session_id, *args])
            return [
                ChatMessage(r["seq"], r["role"], r["text"], r["state"], r["created"], tuple(json.loads(r["window"])))
                for r in rows
            ]

        return await self.store.read(fetch)
