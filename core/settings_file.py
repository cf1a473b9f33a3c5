"""Changing a setting while Cairn runs: validated against the knob table, written back into
`settings.toml` atomically with the person's comments kept, handed to the services that follow
it, and announced on the change channel (`Topic.SETTINGS`).

The file is the truth: a setting no service follows applies at the next start.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

import tomlkit
import tomlkit.exceptions
from tomlkit.items import Table

from core.atomic_file import write_atomically
from core.changes import ChangeBus, ChangeSet, Topic
from core.errors import ConfigInvalid, Forbidden, InvalidInput
from core.model import Caller
from core.settings import KNOB_BY_NAME, Settings, Value, validate_document

log = logging.getLogger(__name__)

Apply = Callable[[Settings], None]


class SettingsService:
    """The settings in `settings.toml`, changed one at a time by a person."""

    def __init__(self, path: Path, settings: Settings, bus: ChangeBus) -> None:
        self._path = path
        self._current = settings
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
            table = doc.get(knob.section)
            if not isinstance(table, Table):
                table = tomlkit.table()
                doc[knob.section] = table
            table[knob.key] = list(checked) if isinstance(checked, tuple) else checked
            values, problems = validate_document(doc.unwrap())
            if problems:
                raise ConfigInvalid(
                    f"settings file {self._path} has problems to fix first: {'; '.join(problems)}",
                    data={"path": str(self._path), "problems": problems},
                )
            self._path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            write_atomically(self._path, tomlkit.dumps(doc))
            self._current = Settings(values, self._path)
            settings = self._current
        log.info("setting %s changed to %r", name, checked)
        for names, apply in self._followers:
            if name in names:
                apply(settings)
        self._bus.publish(ChangeSet((), frozenset({Topic.SETTINGS})))
        return settings

    def _document(self) -> tomlkit.TOMLDocument:
        try:
            text = self._path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return tomlkit.document()
        except (OSError, UnicodeDecodeError) as e:
            raise ConfigInvalid(
                f"cannot read settings file {self._path}: {e}", data={"path": str(self._path)}
            ) from e
        try:
            return tomlkit.parse(text)
        except tomlkit.exceptions.TOMLKitError as e:
            raise ConfigInvalid(
                f"settings file {self._path} is not valid TOML ({e}); fix it first",
                data={"path": str(self._path), "problems": [str(e)]},
            ) from e
