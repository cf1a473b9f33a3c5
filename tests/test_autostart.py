"""`cairn autostart`: real files in a temporary HOME on Linux (the XDG autostart entry, the
systemd --user unit and its enablement link), never both at once; the macOS and Windows entries
rendered here and checked by content."""

from __future__ import annotations

import configparser
import os
import plistlib
import re
import shlex
import shutil
import stat
import subprocess
from pathlib import Path, PurePosixPath, PureWindowsPath

import pytest

from core import cli
from core.autostart import Autostart
from core.autostart_entries import (
    INSTALLER,
    Kind,
    Platform,
    Program,
    installed_program,
    locations,
    render,
)
from core.errors import CairnError, ErrorCode
from tests.conftest import disk_full, refusing_writes

pytestmark = pytest.mark.skipif(
    Platform.current() is not Platform.LINUX, reason="the real files are tested on Linux"
)


def cairn(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """`cairn autostart ...` through the command line's own entry (`core.cli.main`)."""
    status = cli.main(["autostart", *argv])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    return captured.out


def desktop_entry(path: Path) -> dict[str, str]:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    parser.read(path, encoding="utf-8")
    return dict(parser["Desktop Entry"])


def unit(path: Path) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(path, encoding="utf-8")
    return parser


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def home() -> Path:
    return Path(os.environ["HOME"])


def test_enabling_the_tray_writes_an_xdg_autostart_entry_that_runs_this_cairn(
    capsys: pytest.CaptureFixture[str], home: Path
) -> None:
    out = cairn(capsys, "enable")
    entry_path = home / ".config" / "autostart" / "cairn.desktop"
    assert f"enabled: the tray application starts when you log in\n  file  {entry_path}" in out
    assert "nothing was started now" in out
    assert mode(entry_path) == 0o644
    entry = desktop_entry(entry_path)
    assert entry["Type"] == "Application"
    assert entry["Name"] == "Cairn"
    assert entry["Terminal"] == "false"
    assert entry["X-GNOME-Autostart-enabled"] == "true"
    assert Path(entry["Icon"]).is_file() and entry["Icon"].endswith("cairn.svg")
    # the same store as the person who enabled it; the program is this installation's cairn
    words = shlex.split(entry["Exec"])
    assert words[:2] == ["env", f"CAIRN_HOME={os.environ['CAIRN_HOME']}"]
    program = tuple(words[2:])  # the venv's `cairn`, or its Python running desktop.main
    assert program == installed_program().tray
    done = subprocess.run([*program, "--version"], capture_output=True, text=True, timeout=60)
    assert done.stdout.startswith("cairn "), done.stderr

    status = cairn(capsys, "status")
    assert f"enabled: the tray application starts when you log in\n  file  {entry_path}" in status
    assert "note" not in status


def test_an_entry_that_cannot_be_written_is_said_and_the_old_one_kept(
    capsys: pytest.CaptureFixture[str], home: Path
) -> None:
    """The disk cannot take the new entry: `cairn autostart enable` says which file and why
    (until 2026-12-01 "[Errno 27] File too large"), the entry enabled before stays whole and
    no temporary file is left beside it."""
    cairn(capsys, "enable")
    entry_path = home / ".config" / "autostart" / "cairn.desktop"
    entry_path.write_text(entry_path.read_text(encoding="utf-8") + "# an older one\n", "utf-8")
    before = entry_path.read_bytes()
    with disk_full():
        status = cli.main(["autostart", "enable"])
    err = capsys.readouterr().err
    assert status == ErrorCode.IO.exit_status, err
    assert err.startswith(f"cairn: could not write the autostart entry {entry_path}: "), err
    assert "past the largest size this process may write" in err
    assert entry_path.read_bytes() == before
    assert sorted(p.name for p in entry_path.parent.iterdir()) == ["cairn.desktop"]


def test_a_unit_that_cannot_be_enabled_is_one_line_and_the_tray_stays_enabled(
    capsys: pytest.CaptureFixture[str], home: Path
) -> None:
    """The unit's link cannot be made (a file where systemd's wants folder goes): `cairn
    autostart enable --headless` says which path and why in one line, exit 74 (until 2026-12-01
    a traceback, exit 1, with the tray's entry already removed and the unit left unlinked); the
    tray still starts at login and no unit is left behind."""
    cairn(capsys, "enable")
    tray = home / ".config" / "autostart" / "cairn.desktop"
    units = home / ".config" / "systemd" / "user"
    units.mkdir(parents=True)
    (units / "default.target.wants").write_text("not a folder\n", encoding="utf-8")
    status = cli.main(["autostart", "enable", "--headless"])
    captured = capsys.readouterr()
    assert status == ErrorCode.IO.exit_status, captured.err
    assert captured.err == (
        f"cairn: could not enable the headless daemon: the link {units}/default.target.wants/"
        f"cairn.service cannot be made: {units}/default.target.wants is a file, not a folder; "
        "autostart is as it was\n"
    )
    assert tray.is_file()
    assert not (units / "cairn.service").exists()
    assert "the tray application starts when you log in" in cairn(capsys, "status")


def test_a_link_that_cannot_be_removed_is_one_line(
    capsys: pytest.CaptureFixture[str], home: Path
) -> None:
    """Nothing can be removed from systemd's wants folder: `cairn autostart disable` and
    `enable` say which link and why (until 2026-12-01 a PermissionError's traceback, exit 1)
    and leave the entries as they were."""
    cairn(capsys, "enable", "--headless")
    units = home / ".config" / "systemd" / "user"
    wants = units / "default.target.wants"
    with refusing_writes(wants):
        for argv in (["disable"], ["enable"]):
            status = cli.main(["autostart", *argv])
            err = capsys.readouterr().err
            assert status == ErrorCode.IO.exit_status, err
            assert err == (
                f"cairn: could not remove the autostart link {wants / 'cairn.service'}: "
                "permission denied; autostart is as it was\n"
            )
            assert (units / "cairn.service").is_file() and (wants / "cairn.service").is_symlink()
            assert not (home / ".config" / "autostart" / "cairn.desktop").exists()


def test_a_tray_entry_that_cannot_be_written_leaves_the_headless_unit_enabled(
    capsys: pytest.CaptureFixture[str], home: Path
) -> None:
    """The tray's folder is a file: `cairn autostart enable` says so, and the headless unit
    enabled before still starts at login (until 2026-12-01 it was removed first: neither did)."""
    cairn(capsys, "enable", "--headless")
    (home / ".config" / "autostart").write_text("", encoding="utf-8")
    status = cli.main(["autostart", "enable"])
    err = capsys.readouterr().err
    assert status == ErrorCode.IO.exit_status, err
    assert f"{home / '.config' / 'autostart'} is a file, not a folder" in err
    units = home / ".config" / "systemd" / "user"
    assert (units / "cairn.service").is_file()
    assert (units / "default.target.wants" / "cairn.service").is_symlink()


def test_the_entry_lands_in_xdg_config_home_when_set(
    capsys: pytest.CaptureFixture[str], home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = home / "elsewhere"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    cairn(capsys, "enable")
    assert (config / "autostart" / "cairn.desktop").is_file()
    assert not (home / ".config").exists()


def test_headless_writes_and_enables_a_systemd_user_unit_without_starting_it(
    capsys: pytest.CaptureFixture[str], home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No systemctl on the PATH: the unit is still written and enabled, and the person is told.
    monkeypatch.setenv("PATH", str(home))
    out = cairn(capsys, "enable", "--headless")
    units = home / ".config" / "systemd" / "user"
    service = units / "cairn.service"
    assert f"enabled: the headless daemon starts when you log in\n  file  {service}" in out
    assert "note: systemctl was not found: the unit is written and enabled" in out
    assert mode(service) == 0o644
    parsed = unit(service)
    exec_start = shlex.split(parsed["Service"]["ExecStart"])
    assert exec_start == [*installed_program().headless]
    assert exec_start[-1] == "serve"
    assert parsed["Service"]["Environment"] == f"CAIRN_HOME={os.environ['CAIRN_HOME']}"
    assert parsed["Service"]["RestartPreventExitStatus"] == "69"  # already running: no retry
    assert parsed["Install"]["WantedBy"] == "default.target"
    link = units / "default.target.wants" / "cairn.service"
    assert link.is_symlink() and link.resolve() == service.resolve()
    assert not (home / ".config" / "autostart" / "cairn.desktop").exists()


def test_systemd_itself_accepts_the_unit(capsys: pytest.CaptureFixture[str], home: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed")
    out = cairn(capsys, "enable", "--headless")
    # systemctl exists here: either it reloaded a user manager, or it said why it could not
    assert "systemd reloaded its user units" in out or "systemctl --user is not available" in out
    service = home / ".config" / "systemd" / "user" / "cairn.service"
    done = subprocess.run(
        [analyze, "verify", str(service)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr


def test_enabling_one_kind_disables_the_other_and_says_so(
    capsys: pytest.CaptureFixture[str], home: Path
) -> None:
    tray = home / ".config" / "autostart" / "cairn.desktop"
    service = home / ".config" / "systemd" / "user" / "cairn.service"
    link = service.parent / "default.target.wants" / "cairn.service"

    cairn(capsys, "enable")
    out = cairn(capsys, "enable", "--headless")
    assert f"disabled the tray application (removed {tray})" in out
    assert not tray.exists() and service.exists() and link.is_symlink()

    out = cairn(capsys, "enable")
    assert f"disabled the headless daemon (removed {service})" in out
    assert tray.exists() and not service.exists() and not link.is_symlink()

    status = cairn(capsys, "status", "--json")
    assert '"kind": "tray"' in status and '"headless"' not in status


def test_disable_removes_every_entry_and_status_says_it_is_off(
    capsys: pytest.CaptureFixture[str], home: Path
) -> None:
    cairn(capsys, "enable", "--headless")
    out = cairn(capsys, "disable")
    assert "disabled the headless daemon" in out
    assert "a Cairn running now keeps running; `cairn stop` stops it" in out
    assert not list((home / ".config" / "systemd" / "user").rglob("cairn.service"))

    assert "autostart was not enabled; nothing to remove" in cairn(capsys, "disable")
    status = cairn(capsys, "status")
    assert status.startswith("autostart: off")
    assert str(home / ".config" / "autostart" / "cairn.desktop") in status


def test_status_warns_about_both_and_about_an_entry_for_another_installation(
    capsys: pytest.CaptureFixture[str], home: Path
) -> None:
    autostart = Autostart.here()
    autostart.enable(Kind.TRAY)
    # a unit put there by hand (or by an older Cairn) alongside the tray's entry
    service = home / ".config" / "systemd" / "user" / "cairn.service"
    service.parent.mkdir(parents=True)
    service.write_text("[Service]\nExecStart=/opt/old-cairn/cairn serve\n", encoding="utf-8")
    (service.parent / "default.target.wants").mkdir()
    (service.parent / "default.target.wants" / "cairn.service").symlink_to(service)
    report = autostart.status()
    assert [f.kind for f in report.enabled] == [Kind.TRAY, Kind.HEADLESS]
    assert [f.current for f in report.enabled] == [True, False]
    out = cairn(capsys, "status")
    assert "both are enabled: whichever starts first holds your memories" in out
    assert "the entry for the headless daemon runs another installation or version" in out


def test_status_says_a_unit_without_its_link_does_not_start_at_login(
    capsys: pytest.CaptureFixture[str], home: Path
) -> None:
    """The unit file without its link in default.target.wants (removed by hand, or by
    `systemctl --user disable`): systemd does not start it at login, yet status said "enabled:
    the headless daemon starts when you log in" (until 2026-12-01). Now it says it will not, and
    how to enable it; the tray's entry beside it is not taken for "both are enabled"."""
    autostart = Autostart.here()
    autostart.enable(Kind.HEADLESS)
    service = home / ".config" / "systemd" / "user" / "cairn.service"
    link = service.parent / "default.target.wants" / "cairn.service"
    link.unlink()
    out = cairn(capsys, "status")
    assert "starts when you log in" not in out
    assert out.startswith("autostart: off")
    assert (
        f"note: the headless daemon's unit {service} is there but not enabled (no link "
        f"{link}), so it does not start when you log in; `cairn autostart enable --headless` "
        "enables it" in out
    ), out
    assert autostart.status().to_dict()["enabled"] == []

    # with the tray's entry too, only the tray starts: not "both are enabled"
    service.rename(home / "unit.keep")
    autostart.enable(Kind.TRAY)
    (home / "unit.keep").rename(service)
    out = cairn(capsys, "status")
    assert "enabled: the tray application starts when you log in" in out
    assert "both are enabled" not in out
    assert "the headless daemon's unit" in out and "is there but not enabled" in out

    # and `disable` still removes the unit file
    out = cairn(capsys, "disable")
    assert not service.exists()


def test_the_bundle_is_the_program_when_frozen() -> None:
    program = installed_program(Platform.LINUX, frozen=True, executable="/opt/cairn/cairn")
    assert program.tray == ("/opt/cairn/cairn",)
    assert program.headless == ("/opt/cairn/cairn", "serve")
    mac = installed_program(
        Platform.MACOS, frozen=True, executable="/Applications/Cairn.app/Contents/MacOS/cairn"
    )
    assert mac.headless == ("/Applications/Cairn.app/Contents/MacOS/cairn", "serve")


def test_awkward_paths_are_quoted_for_each_format() -> None:
    program = Program(tray=("/opt/my apps/ca$h 100%/cairn",), headless=("/opt/x%/cairn", "serve"))
    where = locations(Platform.LINUX, {"HOME": "/home/ana"})
    tray = render(Platform.LINUX, Kind.TRAY, program, where).content
    # Desktop Entry Specification: quoted, `$` escaped, `%` doubled, backslashes doubled again
    assert 'Exec="/opt/my apps/ca\\\\$h 100%%/cairn"\n' in tray
    service = render(Platform.LINUX, Kind.HEADLESS, program, where, cairn_home="/a b").content
    assert "ExecStart=/opt/x%%/cairn serve\n" in service
    assert 'Environment="CAIRN_HOME=/a b"\n' in service


def test_the_macos_launch_agents_by_content() -> None:
    exe = "/Applications/Cairn.app/Contents/MacOS/cairn"
    program = installed_program(Platform.MACOS, frozen=True, executable=exe)
    where = locations(Platform.MACOS, {"HOME": "/Users/ana"})
    assert where.tray == PurePosixPath("/Users/ana/Library/LaunchAgents/org.cairn.Cairn.plist")
    tray = render(Platform.MACOS, Kind.TRAY, program, where, cairn_home="/Users/ana/c&d")
    agent = plistlib.loads(tray.content.encode())
    assert agent["Label"] == "org.cairn.Cairn"
    assert agent["ProgramArguments"] == [exe]
    assert agent["RunAtLoad"] is True
    assert agent["LimitLoadToSessionType"] == "Aqua"
    assert agent["EnvironmentVariables"] == {"CAIRN_HOME": "/Users/ana/c&d"}

    log = "/Users/ana/Library/Application Support/cairn/logs/daemon.log"
    daemon = render(Platform.MACOS, Kind.HEADLESS, program, where, log_file=log)
    assert daemon.path.name == "org.cairn.Cairn.daemon.plist"
    agent = plistlib.loads(daemon.content.encode())
    assert agent["Label"] == "org.cairn.Cairn.daemon"
    assert agent["ProgramArguments"] == [exe, "serve"]
    assert agent["KeepAlive"] == {"SuccessfulExit": False}
    assert agent["StandardErrorPath"] == log
    assert "EnvironmentVariables" not in agent

    info = plistlib.loads((INSTALLER / "macos" / "Info.plist").read_bytes())
    assert info["CFBundleIdentifier"] == "org.cairn.Cairn"
    assert info["LSUIElement"] is True  # a menu-bar app: no Dock icon


def test_the_windows_startup_shortcuts_by_content() -> None:
    env = {"APPDATA": "C:\\Users\\O'Brien\\AppData\\Roaming"}
    where = locations(Platform.WINDOWS, env)
    startup = PureWindowsPath(env["APPDATA"], "Microsoft/Windows/Start Menu/Programs/Startup")
    assert where.tray == startup / "Cairn.lnk"
    assert where.headless == startup / "Cairn (headless).lnk"

    # the bundle's windowless executable, so no console window opens at sign-in
    program = installed_program(
        Platform.WINDOWS, frozen=True, executable="C:\\Program Files\\Cairn\\cairn.exe"
    )
    assert program.tray == ("C:\\Program Files\\Cairn\\cairnw.exe",)
    script = render(Platform.WINDOWS, Kind.HEADLESS, program, where).content
    shortcut = "C:\\Users\\O''Brien\\AppData\\Roaming\\Microsoft\\Windows\\Start Menu\\Programs"
    assert f"$shell.CreateShortcut('{shortcut}\\Startup\\Cairn (headless).lnk')" in script
    assert "$link.TargetPath = 'C:\\Program Files\\Cairn\\cairnw.exe'" in script
    assert "$link.Arguments = 'serve'" in script
    assert "$link.WorkingDirectory = 'C:\\Program Files\\Cairn'" in script
    assert "$link.IconLocation = 'C:\\Program Files\\Cairn\\cairnw.exe,0'" in script
    assert "$link.Save()" in script

    venv = installed_program(
        Platform.WINDOWS, frozen=False, executable="C:\\src\\cairn\\.venv\\Scripts\\python.exe"
    )
    tray = render(Platform.WINDOWS, Kind.TRAY, venv, where).content
    assert "$link.TargetPath = 'C:\\src\\cairn\\.venv\\Scripts\\pythonw.exe'" in tray
    assert "$link.Arguments = '-m desktop.main'" in tray


def test_every_template_is_filled_completely() -> None:
    program = Program(tray=("/x/cairn",), headless=("/x/cairn", "serve"))
    for platform in Platform:
        where = locations(platform, {"HOME": "/home/a", "APPDATA": "C:\\A"})
        for kind in Kind:
            content = render(platform, kind, program, where, cairn_home="/c", log_file="/l").content
            assert not re.search(r"@[A-Z_]+@", content), (platform, kind)


def test_a_missing_template_is_an_error_with_a_message(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr("core.autostart_entries.INSTALLER", tmp_path)
    with pytest.raises(CairnError, match=r"the autostart template .* is missing"):
        Autostart.here().enable(Kind.TRAY)
