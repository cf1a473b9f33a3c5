"""The autostart entries themselves: which platform and kind, where each file goes, and its
content rendered from the templates in `installer/`, pointing at the installed program.
`core/autostart.py` writes, finds and removes them."""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath
from xml.sax.saxutils import escape as xml_escape

from core.errors import IOFault
from core.paths import HOME_ENV

ROOT = Path(__file__).resolve().parent.parent
INSTALLER = ROOT / "installer"
ICONS = ROOT / "resources" / "icons"

ENTRY_MODE = 0o644  # what desktop environments, systemd and launchd expect of these files
_PLACEHOLDER = re.compile(r"@[A-Z_]+@")


class Kind(Enum):
    """What starts with the session."""

    TRAY = "tray"
    HEADLESS = "headless"

    @property
    def title(self) -> str:
        return "the tray application" if self is Kind.TRAY else "the headless daemon"

    @property
    def other(self) -> Kind:
        return Kind.HEADLESS if self is Kind.TRAY else Kind.TRAY


class Platform(Enum):
    LINUX = "linux"
    MACOS = "macos"
    WINDOWS = "windows"

    @classmethod
    def current(cls) -> Platform:
        if sys.platform == "darwin":
            return cls.MACOS
        if sys.platform == "win32":
            return cls.WINDOWS
        return cls.LINUX


@dataclass(frozen=True)
class Program:
    """How to run the installed Cairn: the command for the tray and for the headless daemon."""

    tray: tuple[str, ...]
    headless: tuple[str, ...]

    def argv(self, kind: Kind) -> tuple[str, ...]:
        return self.tray if kind is Kind.TRAY else self.headless


def installed_program(
    platform: Platform | None = None, *, frozen: bool | None = None, executable: str | None = None
) -> Program:
    """The installed program: the bundle's executable when frozen, else the venv's `cairn`.

    On Windows the windowless variants are chosen (`cairnw.exe` in the bundle, `pythonw.exe` in
    a virtual environment), so nothing opens a console window at sign-in.
    """
    platform = platform or Platform.current()
    frozen = bool(getattr(sys, "frozen", False)) if frozen is None else frozen
    exe = executable or sys.executable
    pure: type[PurePath] = PureWindowsPath if platform is Platform.WINDOWS else PurePosixPath
    here = pure(exe)
    if frozen:
        if platform is Platform.WINDOWS:
            windowless = here.with_name("cairnw.exe")
            if Path(str(windowless)).exists() or not Path(exe).exists():
                here = windowless
        return Program(tray=(str(here),), headless=(str(here), "serve"))
    if platform is Platform.WINDOWS:
        pythonw = str(here.with_name("pythonw.exe"))
        return Program(
            tray=(pythonw, "-m", "desktop.main"), headless=(pythonw, "-m", "core.cli", "serve")
        )
    script = Path(exe).parent / "cairn"
    if script.exists():
        command: tuple[str, ...] = (str(script),)
    elif found := shutil.which("cairn"):
        command = (found,)
    else:
        command = (exe, "-m", "desktop.main")
    return Program(tray=command, headless=(*command, "serve"))


@dataclass(frozen=True)
class Locations:
    """Where one user's session looks for Cairn's autostart entries on a platform."""

    platform: Platform
    tray: PurePath
    headless: PurePath
    # systemd's own record that a unit is enabled: the unit linked into the target that wants it
    headless_link: PurePath | None = None

    def of(self, kind: Kind) -> PurePath:
        return self.tray if kind is Kind.TRAY else self.headless


def locations(
    platform: Platform | None = None, environ: Mapping[str, str] | None = None
) -> Locations:
    """The entries' paths for the user of `environ` (HOME, XDG_CONFIG_HOME, APPDATA)."""
    platform = platform or Platform.current()
    env = os.environ if environ is None else environ
    if platform is Platform.WINDOWS:
        appdata = env.get("APPDATA") or str(
            PureWindowsPath(env.get("USERPROFILE", "C:\\")) / "AppData" / "Roaming"
        )
        startup = PureWindowsPath(appdata, "Microsoft", "Windows", "Start Menu", "Programs")
        startup = startup / "Startup"
        return Locations(platform, startup / "Cairn.lnk", startup / "Cairn (headless).lnk")
    home = PurePosixPath(env.get("HOME") or os.path.expanduser("~"))
    if platform is Platform.MACOS:
        agents = home / "Library" / "LaunchAgents"
        return Locations(
            platform, agents / "org.cairn.Cairn.plist", agents / "org.cairn.Cairn.daemon.plist"
        )
    xdg = env.get("XDG_CONFIG_HOME", "")
    config = PurePosixPath(xdg) if xdg.startswith("/") else home / ".config"
    units = config / "systemd" / "user"
    return Locations(
        platform,
        tray=config / "autostart" / "cairn.desktop",
        headless=units / "cairn.service",
        headless_link=units / "default.target.wants" / "cairn.service",
    )


# -- rendering the entries from the installer's templates ------------------------------------


@dataclass(frozen=True)
class Entry:
    """One autostart entry: the file to write (on Windows, the script that makes the shortcut)."""

    kind: Kind
    path: PurePath
    content: str
    mode: int = ENTRY_MODE


_DESKTOP_RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")


def _desktop_arg(arg: str) -> str:
    """One argument of a desktop entry's Exec key (Desktop Entry Specification, "Exec key")."""
    arg = arg.replace("%", "%%")
    if any(ch in _DESKTOP_RESERVED for ch in arg):
        arg = '"' + re.sub(r'(["`$\\])', r"\\\1", arg) + '"'
    # the string-value escape applies before the quoting rule: every backslash doubles again
    return arg.replace("\\", "\\\\")


def _systemd_arg(arg: str) -> str:
    """One word of a systemd command line or assignment: specifiers and variables escaped."""
    arg = arg.replace("%", "%%").replace("$", "$$")
    if re.search(r"[\s\"'\\;]", arg) or not arg:
        arg = '"' + arg.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return arg


def _template(name: str) -> str:
    path = INSTALLER / name
    try:
        return path.read_text(encoding="utf-8")
    except OSError as e:
        raise IOFault(f"the autostart template {path} is missing from this installation") from e


def _fill(template: str, values: Mapping[str, str]) -> str:
    for key, value in values.items():
        template = template.replace(f"@{key}@", value)
    left = _PLACEHOLDER.search(template)
    if left:  # a template and this code out of step: a bug, not the user's problem
        raise AssertionError(f"unfilled placeholder {left.group()} in an autostart template")
    return template


def render(
    platform: Platform,
    kind: Kind,
    program: Program,
    where: Locations,
    *,
    cairn_home: str | None = None,
    log_file: str | None = None,
) -> Entry:
    """The autostart entry for `kind` on `platform`, as the session will read it.

    `cairn_home`, when given, is passed on (`CAIRN_HOME`), so the Cairn that starts at login
    opens the same store as the one that enabled it. `log_file` is where launchd writes the
    headless daemon's output on macOS.
    """
    argv = program.argv(kind)
    path = where.of(kind)
    if platform is Platform.LINUX:
        if kind is Kind.TRAY:
            words = [*(["env", f"{HOME_ENV}={cairn_home}"] if cairn_home else []), *argv]
            content = _fill(
                _template("linux/cairn-autostart.desktop"),
                {
                    "EXEC": " ".join(_desktop_arg(w) for w in words),
                    "ICON": str(ICONS / "cairn.svg").replace("\\", "\\\\"),
                },
            )
        else:
            env_line = (
                f"Environment={_systemd_arg(f'{HOME_ENV}={cairn_home}')}" if cairn_home else ""
            )
            content = _fill(
                _template("linux/cairn.service"),
                # the template appends `serve` itself
                {"EXEC": " ".join(_systemd_arg(w) for w in argv[:-1]), "ENVIRONMENT": env_line},
            )
        return Entry(kind, path, content)
    if platform is Platform.MACOS:
        name = "org.cairn.Cairn.plist" if kind is Kind.TRAY else "org.cairn.Cairn.daemon.plist"
        args = argv if kind is Kind.TRAY else argv[:-1]  # the daemon's template adds `serve`
        environment = ""
        if cairn_home:
            environment = (
                "\t<key>EnvironmentVariables</key>\n\t<dict>\n"
                f"\t\t<key>{HOME_ENV}</key>\n\t\t<string>{xml_escape(cairn_home)}</string>\n"
                "\t</dict>"
            )
        values = {
            "PROGRAM_ARGUMENTS": "\n".join(f"\t\t<string>{xml_escape(w)}</string>" for w in args),
            "ENVIRONMENT": environment,
        }
        if kind is Kind.HEADLESS:
            values["LOG"] = xml_escape(log_file or "/dev/null")
        return Entry(kind, path, _fill(_template(f"macos/{name}"), values))
    target = PureWindowsPath(argv[0])

    def ps(text: str) -> str:  # inside a PowerShell single-quoted string
        return text.replace("'", "''")

    # A shortcut cannot set a variable: on Windows CAIRN_HOME must be in the user's environment.
    arguments = " ".join(f'"{a}"' if " " in a else a for a in argv[1:])
    description = (
        "Cairn in the system tray" if kind is Kind.TRAY else "Cairn's headless daemon (cairn serve)"
    )
    content = _fill(
        _template("windows/startup-shortcut.ps1"),
        {
            "SHORTCUT": ps(str(path)),
            "TARGET": ps(str(target)),
            "ARGUMENTS": ps(arguments),
            "WORKDIR": ps(str(target.parent)),
            "ICON": ps(f"{target},0"),
            "DESCRIPTION": ps(description),
        },
    )
    return Entry(kind, path, content)
