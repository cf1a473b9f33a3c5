"""Changing a setting while Cairn runs: validated against the knob table, written back into
`settings.toml` atomically with the person's comments kept, handed to the services that follow
it, and announced on the change channel (`Topic.SETTINGS`).

The file is the truth: a setting no service follows applies at the next start.
"""

from __future__ import annotations

import logging
import threading
import tomllib
from collections.abc import Callable, Iterable, MutableMapping
from pathlib import Path

import tomlkit
import tomlkit.exceptions

from core.atomic_file import write_atomically
from core.changes import ChangeBus, ChangeSet, Topic
from core.errors import ConfigInvalid, Forbidden, InvalidInput
from core.knob import Value
from core.knobs import KNOB_BY_NAME
from core.model import BUILTIN_KINDS, Caller
from core.settings import Settings, read_settings_text, validate_document
from core.toml_text import TextRefused, TooDeep, unreadable

log = logging.getLogger(__name__)

Apply = Callable[[Settings], None]


class SettingsService:
    """The settings in `settings.toml`, changed one at a time by a person."""

    def __init__(self, path: Path, settings: Settings, bus: ChangeBus) -> None:
        self._path = path
        self._current = settings
        self._started = settings  # what the running services took
        self._bus = bus
        self._lock = threading.Lock()
        self._followers: list[tuple[frozenset[str], Apply]] = []

    @property
    def path(self) -> Path:
        return self._path

    def current(self) -> Settings:
        """The settings as the file says (start-up values until a change is made here)."""
        return self._current

    def follow(self, names: Iterable[str], apply: Apply) -> None:
        """Call `apply(settings)` after any of `names` changed here (the composition root wires
        the services that can take a change while running)."""
        self._followers.append((frozenset(names), apply))

    def live(self, name: str) -> bool:
        """Whether a change of `name` applies at once (else at the next start)."""
        return any(name in names for names, _ in self._followers)

    def set(self, caller: Caller, name: str, value: Value) -> Settings:
        """Change one setting: check it, write it into the file, apply it, announce it.

        Raises:
            Forbidden: the caller is not a person.
            InvalidInput: an unknown setting, or a value its knob refuses.
            ConfigInvalid: the file on disk is not valid (fix it first); nothing is written.
            FileNotWritten: the file cannot be written (a full disk; the file, the step and why);
                the setting is unchanged.
        """
        if not caller.is_human:
            raise Forbidden("only a person can change Cairn's settings")
        knob = KNOB_BY_NAME.get(name)
        if knob is None:
            raise InvalidInput(f"unknown setting {name!r}", data={"field": name})
        checked, reason = knob.check(list(value) if isinstance(value, tuple) else value)
        if reason is not None or checked is None:
            raise InvalidInput(f"{name}: {reason}", data={"field": name})
        with self._lock:
            doc = self._document()
            _, problems_before = validate_document(doc.unwrap())
            section = doc.get(knob.section)
            if section is None:
                section = tomlkit.table()
                doc[knob.section] = section
            # A section may be a [table], an inline table or dotted keys (`backup.keep_daily`),
            # which tomlkit hands back as different mappings: the key is set inside whichever it
            # is, so the section's other keys and comments stay. (Until 2026-11-30 anything but
            # a [table] was replaced by one holding only this key.) A section that is not a
            # table at all is left for the check below to name.
            if isinstance(section, MutableMapping):
                section[knob.key] = list(checked) if isinstance(checked, tuple) else checked
            text = tomlkit.dumps(doc)
            # Checked as the loader will read it back, so what is written is what starts.
            values, problems = validate_document(tomllib.loads(text))
            made = [p for p in problems if p not in problems_before]
            if made:  # this value, or one the file holds that it no longer fits (notes.kind)
                raise InvalidInput("; ".join(made), data={"field": name, "problems": made})
            if name.startswith("notes.") and self.live(name):
                # the notes folder takes the file's notes.kind with any of its settings
                self._refuse_a_kind_not_started(Settings(values, self._path).text("notes.kind"))
            if problems:
                raise ConfigInvalid(
                    f"settings file {self._path} has problems to fix first: {'; '.join(problems)}",
                    data={"path": str(self._path), "problems": problems},
                )
            write_atomically(
                self._path,
                text,
                what="settings file",
                folder_mode=0o700,
                outcome="the setting is unchanged",
            )
            self._current = Settings(values, self._path)
            settings = self._current
        log.info("setting %s changed to %r", name, checked)
        for names, apply in self._followers:
            if name in names:
                apply(settings)
        self._bus.publish(ChangeSet((), frozenset({Topic.SETTINGS})))
        return settings

    def _refuse_a_kind_not_started(self, kind: str) -> None:
        """`notes.kind` applies at once, `memory.extra_kinds` at the next start: a kind added
        there since is not one the running Cairn knows, and every note would fail with it
        (until 2026-11-30 it was taken)."""
        running = BUILTIN_KINDS + self._started.strings("memory.extra_kinds")
        if kind.lower() not in running:
            raise InvalidInput(
                f"notes.kind: {kind!r} is not a kind the running Cairn knows; a kind added to "
                "memory.extra_kinds takes effect at the next start - restart Cairn, then set "
                "notes.kind",
                data={"field": "notes.kind"},
            )

    def _document(self) -> tomlkit.TOMLDocument:
        try:
            text = read_settings_text(self._path)
        except FileNotFoundError:
            return tomlkit.document()
        except TooDeep as e:
            raise ConfigInvalid(
                f"settings file {self._path}, line {e.line}: {e.reason}; fix it first",
                data={"path": str(self._path), "problems": [f"line {e.line}: {e.reason}"]},
            ) from e
        except TextRefused as e:
            raise ConfigInvalid(
                f"settings file {self._path} {e}; fix it first", data={"path": str(self._path)}
            ) from e
        except (OSError, UnicodeDecodeError) as e:
            raise ConfigInvalid(
                f"cannot read settings file {self._path}: {unreadable(e, self._path)}",
                data={"path": str(self._path)},
            ) from e
        try:
            return tomlkit.parse(text)
        except tomlkit.exceptions.TOMLKitError as e:
            raise ConfigInvalid(
                f"settings file {self._path} is not valid TOML ({e}); fix it first",
                data={"path": str(self._path), "problems": [str(e)]},
            ) from e
