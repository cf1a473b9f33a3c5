"""Names stored before the whole-match rule of 2026-11-30 (`helper\\n`): renamed by schema 2.1 and
by an import, so a person can manage them again."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
from pathlib import Path

import pytest

from core.agents import AgentStatus, token_hash
from core.app import Cairn
from core.cli_archive import describe_import
from core.errors import AgentPaused, AgentRevoked
from core.keychain import open_token_store
from core.migrations import CURRENT, SchemaVersion, migrate, read_version
from core.model import Caller
from core.paths import Paths
from core.policy import POLICY_FILE, Mode
from core.requests import WriteRequest
from core.settings import Settings
from core.validation import content_hash
from tests.conftest import FakeClock, refusing_writes
from tests.serving import paths_for

OLD_TOKEN = "cairn_" + "x" * 43
POLICY_TEXT = """\
# my policy
paused = false

[kinds]
"decision\\n" = "ask"

[agents."helper\\n".kinds]
fact = "auto"   # the helper's facts land

[agents."bot\\n"]
extracted = "off"
"""


def old_store(paths: Paths) -> None:
    """A store of schema 2.0 holding what a Cairn before 2026-11-30 let in: the agents
    `helper\\n` (beside a `helper` of its own) and `bot\\n`, the helper's memory and identity
    document, a kind `decision\\n`, and a policy naming them; the helper's token kept."""
    paths.data.mkdir(parents=True, exist_ok=True, mode=0o700)
    conn = sqlite3.connect(paths.database, isolation_level=None)
    migrate(conn, target=SchemaVersion(2, 0))
    agents = [
        ("helper", None, "active", "self-declared"),
        ("helper\n", token_hash(OLD_TOKEN), "active", "human"),
        ("bot\n", None, "active", "self-declared"),
    ]
    for name, token, status, by in agents:
        conn.execute(
            "INSERT INTO agent (name, token_hash, status, created_at, created_by) "
            "VALUES (?, ?, ?, 1, ?)",
            (name, token, status, by),
        )
    conn.execute(
        "INSERT INTO memory (id, seq, revision, content, kind, scope, importance, status, tier, "
        "agent, created_at, updated_at, content_hash) VALUES ('m_' || ?, 1, 1, 'we decided X', "
        "'decision\n', 'global', 3, 'active', 'explicit', 'helper\n', 1, 1, ?)",
        ("0" * 28, content_hash("we decided X")),
    )
    conn.execute(
        "INSERT INTO revision (memory_id, revision, content, kind, scope, tags, importance, "
        "pinned, status, tier, actor, action, created_at) VALUES ('m_' || ?, 1, 'we decided X', "
        "'decision\n', 'global', '[]', 3, 0, 'active', 'explicit', 'helper\n', 'write', 1)",
        ("0" * 28,),
    )
    conn.execute(
        "INSERT INTO identity_version (doc, version, content, author_kind, author, created_at, "
        "content_hash) VALUES ('soul:helper\n', 1, 'You help.', 'human', 'human', 1, ?)",
        (content_hash("You help."),),
    )
    policy = {
        "paused": False,
        "kinds": {"decision\n": "ask"},
        "other_kinds": "ask",
        "scopes": {},
        "extracted": "ask",
        "agents": {"helper\n": {"kinds": {"fact": "auto"}}, "bot\n": {"extracted": "off"}},
    }
    conn.execute("INSERT INTO meta (key, value) VALUES ('policy', ?)", (json.dumps(policy),))
    conn.close()
    paths.config.mkdir(parents=True, exist_ok=True, mode=0o700)
    (paths.config / POLICY_FILE).write_text(POLICY_TEXT, encoding="utf-8")
    tokens, _ = open_token_store(paths)
    tokens.set("helper\n", OLD_TOKEN)


def test_agents_named_with_a_line_break_can_be_managed_after_the_migration(
    paths: Paths,
) -> None:
    """Until the migration, `cairn agent pause` could name neither 'helper\\n' (not a valid name)
    nor 'helper' (another agent); its identity document could not be read, its token not used,
    and the policy file naming it stopped applying."""
    old_store(paths)
    settings = Settings.defaults().with_values(memory__extra_kinds=("decision",))
    app = Cairn.open(paths, settings=settings, clock=FakeClock())
    try:
        conn = app.store.read_db.conn()
        # `helper` was taken by another agent, so `helper\n` became `helper-2`; `bot\n` is `bot`
        assert [a.name for a in app.agents.list()] == ["bot", "helper", "helper-2"]
        person = Caller.human()
        paused = app.agents.set_status(person, "helper-2", AgentStatus.PAUSED)
        assert paused.status is AgentStatus.PAUSED and paused.has_token
        # the token the helper was given still proves who it is, under its new name
        with pytest.raises(AgentPaused, match="helper-2"):
            app.agents.authenticate("helper-2", OLD_TOKEN, require_token=True)
        assert app.agents.set_status(person, "bot", AgentStatus.REVOKED).status is (
            AgentStatus.REVOKED
        )
        with pytest.raises(AgentRevoked):
            app.agents.authenticate("bot", None, require_token=False)
        # its document, memory, kind and history follow it
        assert app.identity.get(person, "soul:helper-2").content == "You help."
        memory = app.memories.get(person, "m_" + "0" * 28).memory
        assert (memory.agent, memory.kind) == ("helper-2", "decision")
        actors = {r[0] for r in conn.execute("SELECT actor FROM revision")}
        assert actors == {"helper-2"}
        # each rename audited, naming the old name and the new
        events = [
            json.loads(r[0])
            for r in conn.execute("SELECT detail FROM audit WHERE action = 'name_renamed'")
        ]
        # at the time Cairn's clock reads (until 2026-12-01 the system's)
        stamps = {r[0] for r in conn.execute("SELECT at FROM audit WHERE action = 'name_renamed'")}
        assert stamps == {app.clock.now_ms()}
        assert sorted((e["what"], e["was"], e["now"]) for e in events) == [
            ("agent", "bot\n", "bot"),
            ("agent", "helper\n", "helper-2"),
            ("kind", "decision\n", "decision"),
        ]
        # the policy file kept its comments and now names the new names: it applies again
        text = (paths.config / POLICY_FILE).read_text(encoding="utf-8")
        assert "# the helper's facts land" in text and "helper\\n" not in text
        policy = app.policy.current()
        assert set(policy.agents) == {"helper-2", "bot"} and "decision" in policy.kinds
        assert "policy_invalid" not in app.warnings.items
        # the token is kept under the new name
        assert app.agents.tokens.get("helper-2") == OLD_TOKEN
        assert app.agents.tokens.get("helper\n") is None
        assert read_version(conn) == CURRENT
    finally:
        app.close()
    # a second start has nothing left to rename or carry
    app = Cairn.open(paths, settings=settings, clock=FakeClock())
    try:
        conn = app.store.read_db.conn()
        assert conn.execute("SELECT count(*) FROM audit WHERE action = 'name_renamed'").fetchone()
        assert conn.execute("SELECT 1 FROM meta WHERE key = 'renames_to_carry'").fetchone() is None
    finally:
        app.close()


def test_an_old_export_holding_such_names_imports_with_them_renamed(
    short_tmp: Path, paths: Paths
) -> None:
    """An export made before 2026-11-30 holds the names as they were stored ('helper\\n',
    'soul:helper\\n', kind 'decision\\n'): its import was refused whole ("names a document Cairn
    does not accept", "field 'kind' is not a kind's name"), so the person's own old export could
    not come back."""
    settings = Settings.defaults().with_values(memory__extra_kinds=("decision",))
    Cairn.open(paths, settings=settings, clock=FakeClock()).close()
    # rows as a store that was never migrated could hold them (its export copies them as they are)
    conn = sqlite3.connect(paths.database, isolation_level=None)
    conn.execute(
        "INSERT INTO memory (id, seq, revision, content, kind, scope, importance, status, tier, "
        "agent, created_at, updated_at, content_hash) VALUES ('m_' || ?, 1, 1, 'we decided X', "
        "'decision\n', 'global', 3, 'active', 'explicit', 'helper\n', 1, 1, ?)",
        ("0" * 28, content_hash("we decided X")),
    )
    conn.execute(
        "INSERT INTO revision (memory_id, revision, content, kind, scope, tags, importance, "
        "pinned, status, tier, actor, action, created_at) VALUES ('m_' || ?, 1, 'we decided X', "
        "'decision\n', 'global', '[]', 3, 0, 'active', 'explicit', 'helper\n', 'write', 1)",
        ("0" * 28,),
    )
    conn.execute(
        "INSERT INTO identity_version (doc, version, content, author_kind, author, created_at, "
        "content_hash) VALUES ('soul:helper\n', 1, 'You help.', 'agent', 'helper\n', 1, ?)",
        (content_hash("You help."),),
    )
    # a store from before 2.1 was not repaired at its next open: this one is told so, or it
    # would rename them as an older Cairn's writes (core/old_writes.py) before the export
    conn.execute("DELETE FROM meta WHERE key = 'old_writes'")
    conn.close()
    old = Cairn.open(paths, settings=settings, clock=FakeClock())
    try:
        old.archive.export(Caller.human(), short_tmp / "old.zip")
    finally:
        old.close()

    # another store, where an agent `helper` of its own works already
    other = paths_for(short_tmp / "other")
    app = Cairn.open(other, settings=settings, clock=FakeClock())
    try:
        app.agents.add(Caller.human(), "helper")
        report = app.archive.import_(Caller.human(), short_tmp / "old.zip").to_dict()
        assert report["added"] == 1 and report["identity_added"] == 1
        assert report["names_renamed"] == [
            {"what": "agent", "was": "helper\n", "now": "helper-2"},
            {"what": "kind", "was": "decision\n", "now": "decision"},
        ]
        person = Caller.human()
        memory = app.memories.get(person, "m_" + "0" * 28, history=True)
        assert (memory.memory.agent, memory.memory.kind) == ("helper-2", "decision")
        assert [r.actor for r in memory.revisions] == ["helper-2"]
        assert app.identity.get(person, "soul:helper-2").content == "You help."
        # a second import of the same export gives the same names, though `helper-2` now
        # holds memories here
        again = app.archive.import_(Caller.human(), short_tmp / "old.zip", dry_run=True)
        assert again.to_dict()["names_renamed"][0]["now"] == "helper-2"
    finally:
        app.close()


def test_names_ending_in_several_line_breaks_are_renamed_like_one(paths: Paths) -> None:
    """A name ending in "\\r\\n" or in two line breaks (no Cairn stored one, but a store edited by
    hand or an edited export may hold it) was left as it was by the migration, which renamed only
    the one "\\n" `$` let through: the agent could not be named again. Now it is renamed alike."""
    paths.data.mkdir(parents=True, exist_ok=True, mode=0o700)
    conn = sqlite3.connect(paths.database, isolation_level=None)
    migrate(conn, target=SchemaVersion(2, 0))
    for name in ("bot\r\n", "scout\n\n"):
        conn.execute(
            "INSERT INTO agent (name, token_hash, status, created_at, created_by) "
            "VALUES (?, NULL, 'active', 1, 'self-declared')",
            (name,),
        )
    conn.close()
    app = Cairn.open(paths, clock=FakeClock())
    try:
        assert [a.name for a in app.agents.list()] == ["bot", "scout"]
        app.agents.set_status(Caller.human(), "scout", AgentStatus.PAUSED)
    finally:
        app.close()


def test_a_policy_file_that_is_not_utf8_does_not_stop_the_start_and_keeps_its_renames(
    paths: Paths,
) -> None:
    """A policy file holding a Latin-1 byte (a comment 'café'): after the migration to 2.1 every
    start stopped with a UnicodeDecodeError traceback, as carrying the renames read it as UTF-8.
    Now Cairn starts (as a fresh store with the same file does), Health says the renames wait
    for the file, and once the file is UTF-8 the next start carries them."""
    old_store(paths)
    settings = Settings.defaults().with_values(memory__extra_kinds=("decision",))
    policy = paths.config / POLICY_FILE
    policy.write_bytes(b"# caf\xe9\n" + POLICY_TEXT.encode())
    app = Cairn.open(paths, settings=settings, clock=FakeClock())
    try:
        said = app.warnings.items["policy_renames"]
        assert "is not valid UTF-8" in said and "'helper\\n' -> 'helper-2'" in said, said
        assert app.agents.tokens.get("helper-2") == OLD_TOKEN  # the token store was carried
    finally:
        app.close()
    assert policy.read_bytes().startswith(b"# caf\xe9\n")  # the person's file, untouched
    policy.write_text("# café\n" + POLICY_TEXT, encoding="utf-8")
    app = Cairn.open(paths, settings=settings, clock=FakeClock())
    try:
        assert "policy_renames" not in app.warnings.items
        assert set(app.policy.current().agents) == {"helper-2", "bot"}
        assert "helper\\n" not in policy.read_text(encoding="utf-8")
    finally:
        app.close()


def test_a_policy_file_that_cannot_be_written_keeps_the_renames_and_says_why(
    paths: Paths,
) -> None:
    """The policy file's folder takes no new file when the renames are carried to it: the
    renames were kept for the next start, but only the log said why, as "[Errno 1] Operation
    not permitted" with no file named (until 2026-12-01). Health now names the file and the
    reason, the file is left whole, and the next start that can write it carries them."""
    old_store(paths)
    settings = Settings.defaults().with_values(memory__extra_kinds=("decision",))
    policy = paths.config / POLICY_FILE
    with refusing_writes(paths.config):
        app = Cairn.open(paths, settings=settings, clock=FakeClock())
        try:
            said = app.warnings.items["policy_renames"]
            assert said.startswith(
                f"could not write the policy file {policy}: no new file can be made in "
                f"{paths.config}: permission denied; the names renamed in the store ("
            ), said
            assert "'helper\\n' -> 'helper-2'" in said and said.endswith("at the next start")
            assert app.agents.tokens.get("helper-2") == OLD_TOKEN  # the token store was carried
        finally:
            app.close()
    assert policy.read_text(encoding="utf-8") == POLICY_TEXT
    assert sorted(p.name for p in paths.config.iterdir()) == [POLICY_FILE]
    app = Cairn.open(paths, settings=settings, clock=FakeClock())
    try:
        assert "policy_renames" not in app.warnings.items
        assert set(app.policy.current().agents) == {"helper-2", "bot"}
    finally:
        app.close()


@pytest.mark.skipif(os.name == "nt", reason="symbolic links need privileges on Windows")
def test_the_renames_go_into_the_file_a_linked_policy_file_points_to(
    paths: Paths, tmp_path: Path
) -> None:
    """A policy.toml that is a link into the person's dotfiles was replaced by a file of its
    own when the renames were carried (until 2026-12-01), cutting it from the dotfiles; a
    change through Cairn already went into the file the link points to."""
    old_store(paths)
    policy = paths.config / POLICY_FILE
    target = tmp_path / "dotfiles" / "policy.toml"
    target.parent.mkdir()
    os.replace(policy, target)
    policy.symlink_to(target)
    settings = Settings.defaults().with_values(memory__extra_kinds=("decision",))
    app = Cairn.open(paths, settings=settings, clock=FakeClock())
    try:
        assert set(app.policy.current().agents) == {"helper-2", "bot"}
    finally:
        app.close()
    assert policy.is_symlink() and policy.resolve() == target
    assert "helper-2" in target.read_text(encoding="utf-8")


def test_a_policy_syntax_error_at_the_first_start_keeps_the_renames_for_the_next(
    paths: Paths,
) -> None:
    """A typo in the policy file at the first start after the migration: the renames were
    skipped for the file yet marked carried, so after the person fixed the typo the file still
    named `[agents."bot\\n"]` and stayed invalid for good. Now they wait for a valid file, and
    the policy's message shows such a key escaped, not with a raw line break."""
    old_store(paths)
    settings = Settings.defaults().with_values(memory__extra_kinds=("decision",))
    policy = paths.config / POLICY_FILE
    policy.write_text(POLICY_TEXT.replace("false\n", "fals\n"), encoding="utf-8")
    app = Cairn.open(paths, settings=settings, clock=FakeClock())
    try:
        assert "is not valid TOML" in app.warnings.items["policy_renames"]
    finally:
        app.close()
    policy.write_text(policy.read_text(encoding="utf-8").replace("fals\n", "false\n"), "utf-8")
    app = Cairn.open(paths, settings=settings, clock=FakeClock())
    try:
        assert "policy_invalid" not in app.warnings.items, app.warnings.items
        assert set(app.policy.current().agents) == {"helper-2", "bot"}
    finally:
        app.close()
    # a key no rename covers is named as the file spells it, on one line
    policy.write_text('[agents."scout\\n"]\nextracted = "off"\n', encoding="utf-8")
    app = Cairn.open(paths, settings=settings, clock=FakeClock())
    try:
        said = app.warnings.items["policy_invalid"]
        assert 'agents."scout\\n": not a valid agent name' in said and "\n" not in said, said
    finally:
        app.close()


def test_a_kind_named_twice_in_the_policy_file_is_merged_the_stricter_winning(
    paths: Paths,
) -> None:
    """A policy file naming both `decision` and `"decision\\n"`: the rename was skipped, as the
    new name was taken, and the file stayed invalid for good ("kinds.decision⏎: unknown kind").
    Both spellings are one kind now, so the two rules are merged: the stricter one wins (a
    person who turned one spelling off did not mean agents to store it unasked), and a comment
    in the file says what was merged."""
    old_store(paths)
    policy = paths.config / POLICY_FILE
    text = POLICY_TEXT.replace('"decision\\n" = "ask"', 'decision = "auto"\n"decision\\n" = "off"')
    policy.write_text(text, encoding="utf-8")
    settings = Settings.defaults().with_values(memory__extra_kinds=("decision",))
    app = Cairn.open(paths, settings=settings, clock=FakeClock())
    try:
        assert "policy_invalid" not in app.warnings.items, app.warnings.items
        assert app.policy.current().kinds["decision"] is Mode.OFF
        written = policy.read_text(encoding="utf-8")
        assert '"decision\\n" =' not in written
        [line] = [x for x in written.splitlines() if x.startswith("decision")]
        assert line.startswith('decision = "off"') and "the stricter kept" in line, line
    finally:
        app.close()


def test_an_old_export_holding_an_agent_named_human_imports_with_it_renamed(
    short_tmp: Path, paths: Paths
) -> None:
    """Until 2026-11-30 an agent could be named `human` (or `cairn`, `system`...). An export of a
    store holding one - its memory's agent `human`, its soul `soul:human` - was refused whole on
    import ("'human' is Cairn's own name for who acted, never an agent's"), so the person's own
    old export could not come back. Now the agent is renamed `human-2`, as an old name taken by
    another is, the report says so, and nothing else is dropped: the person's own memory and
    the revisions the person wrote stay the person's."""
    Cairn.open(paths, settings=Settings.defaults(), clock=FakeClock()).close()
    conn = sqlite3.connect(paths.database, isolation_level=None)
    conn.execute(
        "INSERT INTO agent (name, token_hash, status, created_at, created_by) "
        "VALUES ('human', NULL, 'active', 1, 'self-declared')"
    )
    conn.execute(
        "INSERT INTO memory (id, seq, revision, content, kind, scope, importance, status, tier, "
        "agent, created_at, updated_at, content_hash) VALUES ('m_' || ?, 900, 1, 'we decided X', "
        "'fact', 'global', 3, 'active', 'explicit', 'human', 1, 1, ?)",
        ("0" * 28, content_hash("we decided X")),
    )
    conn.execute(
        "INSERT INTO revision (memory_id, revision, content, kind, scope, tags, importance, "
        "pinned, status, tier, actor, action, created_at) VALUES ('m_' || ?, 1, 'we decided X', "
        "'fact', 'global', '[]', 3, 0, 'active', 'explicit', 'human', 'write', 1)",
        ("0" * 28,),
    )
    conn.execute(
        "INSERT INTO identity_version (doc, version, content, author_kind, author, created_at, "
        "content_hash) VALUES ('soul:human', 1, 'You help.', 'human', 'human', 1, ?)",
        (content_hash("You help."),),
    )
    conn.close()
    old = Cairn.open(paths, settings=Settings.defaults(), clock=FakeClock())
    try:
        person = Caller.human()
        note = {"content": "my own note", "kind": "fact", "scope": "user"}
        mine = old.memories.write(person, WriteRequest.from_params(note)).id
        assert mine is not None
        old.archive.export(person, short_tmp / "old.zip")
    finally:
        old.close()

    other = paths_for(short_tmp / "other")
    app = Cairn.open(other, settings=Settings.defaults(), clock=FakeClock())
    try:
        person = Caller.human()
        report = app.archive.import_(person, short_tmp / "old.zip").to_dict()
        assert report["added"] == 2 and report["identity_added"] == 1, report
        assert report["names_renamed"] == [{"what": "agent", "was": "human", "now": "human-2"}]
        said = describe_import(report)  # what `cairn import` prints
        assert "agent 'human' is 'human-2' here: no agent may take a name Cairn keeps" in said
        memory = app.memories.get(person, "m_" + "0" * 28, history=True)
        assert memory.memory.agent == "human-2"
        assert app.identity.get(person, "soul:human-2").content == "You help."
        # the person's own memory and what the person did stay the person's
        own = app.memories.get(person, mine, history=True)
        assert own.memory.agent is None and [r.actor for r in own.revisions] == ["human"]
        # a second import maps the name the same way
        again = app.archive.import_(person, short_tmp / "old.zip", dry_run=True).to_dict()
        assert again["names_renamed"] == report["names_renamed"]
    finally:
        app.close()


def test_an_old_soul_document_of_an_agent_named_human_alone_is_renamed_too(
    short_tmp: Path, paths: Paths
) -> None:
    """An old store whose agent `human` had a soul document and no memory: the rename looked
    only at memories' agents, so `soul:human` came in as it was - a document no agent can ever
    read, since no agent may be called `human`."""
    Cairn.open(paths, settings=Settings.defaults(), clock=FakeClock()).close()
    conn = sqlite3.connect(paths.database, isolation_level=None)
    conn.execute(
        "INSERT INTO identity_version (doc, version, content, author_kind, author, created_at, "
        "content_hash) VALUES ('soul:human', 1, 'You help.', 'human', 'human', 1, ?)",
        (content_hash("You help."),),
    )
    conn.close()
    old = Cairn.open(paths, settings=Settings.defaults(), clock=FakeClock())
    try:
        old.archive.export(Caller.human(), short_tmp / "old.zip")
    finally:
        old.close()
    app = Cairn.open(
        paths_for(short_tmp / "other"), settings=Settings.defaults(), clock=FakeClock()
    )
    try:
        report = app.archive.import_(Caller.human(), short_tmp / "old.zip").to_dict()
        assert report["names_renamed"] == [{"what": "agent", "was": "human", "now": "human-2"}]
        assert app.identity.get(Caller.human(), "soul:human-2").content == "You help."
    finally:
        app.close()


def test_a_policy_file_that_is_a_fifo_keeps_the_renames_and_lets_cairn_start(
    paths: Paths,
) -> None:
    """Carrying the renames read the policy file whole: a FIFO in its place left the start
    waiting for a writer for good (until 2026-12-01)."""
    old_store(paths)
    settings = Settings.defaults().with_values(memory__extra_kinds=("decision",))
    policy = paths.config / POLICY_FILE
    policy.unlink(missing_ok=True)
    os.mkfifo(policy)
    opened: list[Cairn] = []
    thread = threading.Thread(
        target=lambda: opened.append(Cairn.open(paths, settings=settings, clock=FakeClock())),
        daemon=True,
    )
    thread.start()
    thread.join(10)
    hung = thread.is_alive()
    while thread.is_alive():  # free the waiting reads (a writer that opens and closes)
        with contextlib.suppress(OSError):
            os.close(os.open(policy, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(0.2)
    app = opened[0]
    try:
        assert not hung, "the start waited on a FIFO"
        assert "is not a regular file (a FIFO" in app.warnings.items["policy_renames"]
        assert app.agents.tokens.get("helper-2") == OLD_TOKEN  # the token store was carried
    finally:
        app.close()
