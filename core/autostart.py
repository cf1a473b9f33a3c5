"""Starting Cairn with the user's session: the per-platform autostart entries.

The tray application is what starts with a desktop session; the headless daemon (`cairn serve`)
is the alternative for machines without a desktop - never both, because whichever starts first
holds the store and the other would only exit. Each entry is rendered from its template in
`installer/` (shipped inside the bundle too), pointing at the installed program: the bundle's
executable when frozen, else the virtual environment's `cairn`.

- Linux: XDG autostart `autostart/cairn.desktop` (tray), systemd --user
  `systemd/user/cairn.service` (headless);
- macOS: LaunchAgents `org.cairn.Cairn.plist` (tray), `org.cairn.Cairn.daemon.plist` (headless);
- Windows: Startup-folder shortcuts `Cairn.lnk` (tray), `Cairn (headless).lnk` (headless).

Nothing here starts or stops a running Cairn: enabling takes effect at the next login.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.atomic_file import reason_for, write_atomically
from core.autostart_entries import (
    Entry,
    Kind,
    Locations,
    Platform,
    Program,
    installed_program,
    locations,
    render,
)
from core.errors import IOFault
from core.paths import cairn_home as home_named
from core.paths import resolve_paths

SYSTEMCTL_TIMEOUT_S = 10.0


# -- enabling, disabling, status --------------------------------------------------------------


@dataclass(frozen=True)
class Found:
    """An autostart entry present on disk."""

    kind: Kind
    path: str
    current: bool  # it runs this installation (False: another one, or an older version)
    # it starts at login: False for a systemd unit without its link in default.target.wants
    starts: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "path": self.path, "current": self.current}


@dataclass(frozen=True)
class Report:
    """What a command did or found, and what the person should know about it."""

    platform: Platform
    enabled: list[Found] = field(default_factory=list)
    written: str | None = None
    removed: list[Found] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "platform": self.platform.value,
            "enabled": [f.to_dict() for f in self.enabled],
            "written": self.written,
            "removed": [f.to_dict() for f in self.removed],
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class Autostart:
    """The autostart entries of one user on one platform, for one installed program."""

    platform: Platform
    where: Locations
    program: Program
    cairn_home: str | None
    log_file: str

    @classmethod
    def here(cls, environ: Mapping[str, str] | None = None) -> Autostart:
        """This machine, this user, this installation."""
        env = os.environ if environ is None else environ
        platform = Platform.current()
        home = home_named(env)
        return cls(
            platform=platform,
            where=locations(platform, env),
            program=installed_program(platform),
            cairn_home=str(home) if home is not None else None,
            log_file=str(resolve_paths(env).logs / "daemon.log"),
        )

    def entry(self, kind: Kind) -> Entry:
        return render(
            self.platform,
            kind,
            self.program,
            self.where,
            cairn_home=self.cairn_home,
            log_file=self.log_file,
        )

    def _found(self, kind: Kind) -> Found | None:
        path = Path(str(self.where.of(kind)))
        if not path.exists():
            return None
        current = True
        if self.platform is not Platform.WINDOWS:  # a .lnk is binary; its script is not kept
            try:
                current = path.read_text(encoding="utf-8") == self.entry(kind).content
            except (OSError, UnicodeDecodeError):
                current = False
        link = self.where.headless_link
        starts = True
        if self.platform is Platform.LINUX and kind is Kind.HEADLESS and link is not None:
            # systemd starts the unit at login only through this link (what `systemctl --user
            # enable` makes); a link that points elsewhere still names cairn.service.
            starts = os.path.lexists(str(link))
        return Found(kind, str(path), current, starts)

    def status(self) -> Report:
        """The entries that start Cairn at login, and notes on anything else found: both
        kinds, an entry of another installation, a unit that is not enabled (until 2026-12-01 a
        unit without its link was said to start at login)."""
        present = [f for kind in Kind if (f := self._found(kind)) is not None]
        found = [f for f in present if f.starts]
        notes = [
            f"{f.kind.title}'s unit {f.path} is there but not enabled (no link "
            f"{self.where.headless_link}), so it does not start when you log in; `cairn "
            "autostart enable --headless` enables it"
            for f in present
            if not f.starts
        ]
        if len(found) == len(Kind):
            notes.append(
                "both are enabled: whichever starts first holds your memories and the other "
                "exits; run `cairn autostart enable` (tray) or `--headless` to keep one"
            )
        notes += [
            f"the entry for {f.kind.title} runs another installation or version; run `cairn "
            f"autostart enable{' --headless' if f.kind is Kind.HEADLESS else ''}` to update it"
            for f in found
            if not f.current
        ]
        return Report(self.platform, enabled=found, notes=notes)

    def enable(self, kind: Kind) -> Report:
        """Write the entry for `kind`, then remove the other kind's: never both at once. The new
        entry is in place before the other goes, so a step that fails leaves autostart as it was
        (until 2026-12-01 the other entry was removed first: a failed write left neither).

        Raises:
            IOFault: an entry or the unit's link could not be written or removed: which path and
                why; autostart is as it was.
        """
        entry = self.entry(kind)
        path = Path(str(entry.path))
        existed = path.exists()
        notes: list[str] = []
        if self.platform is Platform.WINDOWS:
            notes += _run_powershell(entry.content)
        else:
            _write(path, entry.content, entry.mode)
        try:
            if self.platform is Platform.LINUX and kind is Kind.HEADLESS:
                notes += self._link_unit()
            if self.platform is Platform.MACOS and kind is Kind.HEADLESS:
                logs = Path(self.log_file).parent
                try:
                    logs.mkdir(parents=True, exist_ok=True, mode=0o700)  # launchd makes none
                except OSError as e:
                    raise _fault(f"could not make the daemon's log folder {logs}", e, logs) from e
            removed, said = self._remove(kind.other)
        except IOFault:
            if not existed:  # as it was: the new entry goes again, with a link made for it
                link = self.where.headless_link
                if self.platform is Platform.LINUX and kind is Kind.HEADLESS and link:
                    with contextlib.suppress(OSError):
                        os.unlink(str(link))
                with contextlib.suppress(OSError):
                    path.unlink()
            raise
        found = self._found(kind)
        return Report(
            self.platform,
            enabled=[found] if found else [],
            written=str(path),
            removed=removed,
            notes=notes + said,
        )

    def disable(self) -> Report:
        """Remove every autostart entry of Cairn's. A running Cairn keeps running.

        Raises:
            IOFault: an entry or the unit's link could not be removed: which path and why, and
                which entry was removed before it (else autostart is as it was).
        """
        removed: list[Found] = []
        notes: list[str] = []
        for kind in Kind:
            outcome = "; ".join(f"{f.kind.title} was disabled ({f.path} removed)" for f in removed)
            gone, said = self._remove(kind, outcome=outcome or _AS_IT_WAS)
            removed += gone
            notes += said
        return Report(self.platform, removed=removed, notes=notes)

    # -- the parts ---------------------------------------------------------------------------

    def _remove(self, kind: Kind, *, outcome: str = "") -> tuple[list[Found], list[str]]:
        """Remove `kind`'s entry (and the unit's link). Raises IOFault ending in `outcome`
        (by default: autostart is as it was); the link goes back when the unit cannot go."""
        found = self._found(kind)
        if found is None:
            return [], []
        outcome = outcome or _AS_IT_WAS
        notes: list[str] = []
        link = self.where.headless_link
        unlinked = False
        if self.platform is Platform.LINUX and kind is Kind.HEADLESS and link is not None:
            link_path = Path(str(link))
            try:
                os.unlink(link_path)
                unlinked = True
            except FileNotFoundError:
                pass
            except OSError as e:
                doing = f"could not remove the autostart link {link_path}"
                raise _fault(doing, e, link_path.parent, outcome) from e
        try:
            os.unlink(found.path)
        except OSError as e:
            if unlinked:
                with contextlib.suppress(OSError):
                    Path(str(link)).symlink_to(found.path)
            doing = f"could not remove the autostart entry {found.path}"
            raise _fault(doing, e, Path(found.path).parent, outcome) from e
        if self.platform is Platform.LINUX and kind is Kind.HEADLESS:
            notes += _systemctl("daemon-reload", quiet_when_missing=True)
        return [found], notes

    def _link_unit(self) -> list[str]:
        """Enable the unit as `systemctl --user enable` would: link it into default.target's
        wants. Done by hand so it works where no user manager runs now (a container, ssh).

        Raises:
            IOFault: the link cannot be made (which path, why); an old link stays.
        """
        link = self.where.headless_link
        assert link is not None
        link_path = Path(str(link))
        # Made beside it and renamed over it: a link that cannot be made leaves the old one.
        temp = link_path.with_name(f".{link_path.name}.tmp")
        try:
            link_path.parent.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(FileNotFoundError):
                temp.unlink()
            temp.symlink_to(str(self.where.headless))
            os.replace(temp, link_path)
        except OSError as e:
            with contextlib.suppress(OSError):
                temp.unlink()
            doing = f"could not enable {Kind.HEADLESS.title}: the link {link_path} cannot be made"
            raise _fault(doing, e, link_path.parent) from e
        return _systemctl("daemon-reload")


_AS_IT_WAS = "autostart is as it was"


def _fault(doing: str, e: OSError, folder: Path, outcome: str = _AS_IT_WAS) -> IOFault:
    """`doing` (what could not be done, naming the path), why in words, and `outcome`."""
    return IOFault(f"{doing}: {reason_for(e, folder)}; {outcome}", data={"path": str(folder)})


def _write(path: Path, content: str, mode: int) -> None:
    """Replace `path` atomically with `content`, with exactly `mode` whatever the umask (its
    folder made as the umask says, as the person's other programs make theirs)."""
    write_atomically(
        path, content, what="autostart entry", mode=mode, folder_mode=0o777, outcome=_AS_IT_WAS
    )


def _systemctl(action: str, *, quiet_when_missing: bool = False) -> list[str]:
    """Tell a running systemd user manager the units changed. Without one the files on disk
    still count at the next login, so its absence is a note, never an error."""
    systemctl = shutil.which("systemctl")
    later = (
        "the unit is written and enabled (linked into default.target.wants) and takes effect "
        "at your next login; to start it now: systemctl --user daemon-reload && "
        "systemctl --user start cairn.service"
    )
    if systemctl is None:
        return [] if quiet_when_missing else [f"systemctl was not found: {later}"]
    try:
        done = subprocess.run(
            [systemctl, "--user", action],
            capture_output=True,
            text=True,
            timeout=SYSTEMCTL_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return [] if quiet_when_missing else [f"systemctl --user is not available ({e}): {later}"]
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[0]
        return [] if quiet_when_missing else [f"systemctl --user is not available ({why}): {later}"]
    return [] if quiet_when_missing else ["systemd reloaded its user units"]


def _run_powershell(script: str) -> list[str]:
    try:
        done = subprocess.run(
            ["powershell.exe", "-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-"],
            input=script,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise IOFault(f"could not create the Startup-folder shortcut: {e}") from e
    if done.returncode != 0:
        raise IOFault(f"could not create the Startup-folder shortcut: {done.stderr.strip()}")
    return []
