"""settings.toml: declared once, validated with key and reason, relocated by CAIRN_HOME."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from core.errors import ConfigInvalid
from core.knobs import KNOBS
from core.paths import resolve_paths
from core.settings import Settings, load_settings


def test_missing_file_means_defaults(short_tmp: Path) -> None:
    settings = load_settings(short_tmp / "absent.toml")
    for knob in KNOBS:
        assert settings.value(knob.name) == knob.default


def test_valid_values_are_read(short_tmp: Path) -> None:
    f = short_tmp / "settings.toml"
    f.write_text(
        '# my settings\n[store]\nsynchronous = "FULL"\n[limits]\nmax_tags = 4\n'
        '[memory]\nextra_kinds = ["decision"]\n',
        encoding="utf-8",
    )
    settings = load_settings(f)
    assert settings.text("store.synchronous") == "FULL"
    assert settings.integer("limits.max_tags") == 4
    assert settings.strings("memory.extra_kinds") == ("decision",)


def test_every_problem_is_reported_with_key_and_reason(short_tmp: Path) -> None:
    f = short_tmp / "settings.toml"
    f.write_text(
        '[store]\nsynchronous = "SOMETIMES"\nbusy_timeout_ms = "long"\nturbo = true\n'
        "[limits]\nmax_tags = -1\n[gui]\ncolour = 1\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigInvalid) as info:
        load_settings(f)
    problems = info.value.data["problems"]
    assert "store.synchronous: expected one of NORMAL, FULL, got 'SOMETIMES'" in problems
    assert "store.busy_timeout_ms: expected a whole number, got the string 'long'" in problems
    assert "store.turbo: unknown setting" in problems
    assert "limits.max_tags: must be at least 0, got -1" in problems
    assert any(p.startswith("[gui]: unknown section") for p in problems)
    assert len(problems) == 5
    assert str(f) in info.value.message


def test_broken_toml_is_reported(short_tmp: Path) -> None:
    f = short_tmp / "settings.toml"
    f.write_text("[store\nsynchronous = ", encoding="utf-8")
    with pytest.raises(ConfigInvalid, match="not valid TOML"):
        load_settings(f)


def test_with_values_checks_like_the_file() -> None:
    with pytest.raises(ConfigInvalid, match=r"limits\.max_tags"):
        Settings.defaults().with_values(limits__max_tags=10_000)


def test_cairn_home_relocates_everything(short_tmp: Path) -> None:
    paths = resolve_paths({"CAIRN_HOME": str(short_tmp / "elsewhere")})
    for p in (paths.data, paths.config, paths.state, paths.runtime):
        assert p.is_relative_to(short_tmp / "elsewhere")
    default = resolve_paths({})
    assert not default.data.is_relative_to(short_tmp / "elsewhere")


FLOAT_KNOBS = [k for k in KNOBS if k.kind is float]


@pytest.mark.parametrize("raw", ["nan", "inf", "-inf", "+nan"])
def test_nan_and_infinity_are_refused_for_every_number_setting(short_tmp: Path, raw: str) -> None:
    """TOML allows nan and inf: `expired_retention_days = nan` passed the checks and crashed
    `cairn serve` (cannot convert float NaN to integer); `backup.interval_hours = nan` silently
    stopped scheduled backups."""
    assert FLOAT_KNOBS
    sections: dict[str, list[str]] = {}
    for knob in FLOAT_KNOBS:
        sections.setdefault(knob.section, []).append(f"{knob.key} = {raw}")
    f = short_tmp / "settings.toml"
    f.write_text(
        "".join(f"[{s}]\n" + "\n".join(lines) + "\n" for s, lines in sections.items()),
        encoding="utf-8",
    )
    with pytest.raises(ConfigInvalid) as info:
        load_settings(f)
    problems = info.value.data["problems"]
    shown = raw.lstrip("+")
    assert problems == [f"{k.name}: expected a finite number, got {shown}" for k in FLOAT_KNOBS]


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_with_values_refuses_nan_and_infinity(value: float) -> None:
    for knob in FLOAT_KNOBS:
        with pytest.raises(ConfigInvalid, match=f"{knob.name}: expected a finite number"):
            Settings.defaults().with_values(**{knob.name.replace(".", "__"): value})


def test_values_cairn_cannot_use_are_named_at_start(short_tmp: Path) -> None:
    """`context.tiers = ["robot"]` crashed start with a ValueError traceback; an empty list took
    every tier (llm too); "Decision" in memory.extra_kinds was dropped without a word; and
    `notes.kind = "nonsense"` failed every note instead of the start."""
    f = short_tmp / "settings.toml"
    f.write_text(
        '[context]\ntiers = ["human", "robot"]\n'
        '[memory]\nextra_kinds = ["Decision", "api-contract", "two words", "", "decision\\n"]\n'
        '[notes]\nkind = "nonsense"\n',
        encoding="utf-8",
    )
    with pytest.raises(ConfigInvalid) as info:
        load_settings(f)
    assert info.value.data["problems"] == [
        "context.tiers: expected each of human, explicit, derived, llm, got 'robot'",
        "memory.extra_kinds: expected lowercase words (a letter, then up to 31 letters, digits, "
        "- or _), got 'Decision', 'two words', '', 'decision\\n'",
        "notes.kind: expected a built-in kind (fact, preference, convention, procedure, pitfall, "
        "correction, insight, idea) or one in memory.extra_kinds, got 'nonsense'",
    ]
    f.write_text("[context]\ntiers = []\n", encoding="utf-8")
    with pytest.raises(ConfigInvalid, match=r"context\.tiers: expected at least one of human"):
        load_settings(f)


def test_a_note_kind_from_extra_kinds_is_taken(short_tmp: Path) -> None:
    f = short_tmp / "settings.toml"
    f.write_text(
        '[memory]\nextra_kinds = ["decision"]\n[notes]\nkind = "Decision"\n'
        '[context]\ntiers = ["human", "llm"]\n',
        encoding="utf-8",
    )
    settings = load_settings(f)
    assert settings.text("notes.kind") == "Decision"  # in any case, as in a note's front matter
    assert settings.strings("context.tiers") == ("human", "llm")


def test_a_huge_number_is_shown_short(short_tmp: Path) -> None:
    """`interval_hours = 1e300` was refused with "got 1000000...", all 301 digits."""
    f = short_tmp / "settings.toml"
    f.write_text("[backup]\ninterval_hours = 1e300\nkeep_daily = 9999999999\n", encoding="utf-8")
    with pytest.raises(ConfigInvalid) as info:
        load_settings(f)
    assert info.value.data["problems"] == [
        "backup.interval_hours: must be at most 8760, got 1e+300",
        "backup.keep_daily: must be at most 366, got 9999999999",
    ]


def test_a_byte_order_mark_at_the_start_is_taken(short_tmp: Path) -> None:
    """A file saved with a UTF-8 byte order mark (as Windows Notepad does) stopped the start with
    "not valid TOML: Invalid statement (at line 1, column 1)", the mark itself invisible."""
    f = short_tmp / "settings.toml"
    f.write_bytes(b'\xef\xbb\xbf[store]\nsynchronous = "FULL"\n')
    assert load_settings(f).text("store.synchronous") == "FULL"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX's")
def test_a_settings_file_that_is_no_file_is_refused_not_waited_on(short_tmp: Path) -> None:
    """Until 2026-12-01 a FIFO in place of settings.toml (or a link to one) left the start
    waiting for a writer for good, and a link to /dev/urandom filled memory."""
    f = short_tmp / "settings.toml"
    os.mkfifo(f)
    refused: list[BaseException] = []

    def load() -> None:
        try:
            load_settings(f)
        except ConfigInvalid as e:
            refused.append(e)

    thread = threading.Thread(target=load, daemon=True)
    thread.start()
    thread.join(5)
    if thread.is_alive():  # free it: a writer that opens and closes the FIFO
        os.close(os.open(f, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(10)
        pytest.fail("load_settings waited on a FIFO")
    assert refused and "is not a regular file (a FIFO" in str(refused[0])
    f.unlink()
    f.symlink_to("/dev/urandom")
    with pytest.raises(ConfigInvalid, match="is not a regular file"):
        load_settings(f)


def test_a_huge_settings_file_is_refused_before_it_is_parsed(short_tmp: Path) -> None:
    f = short_tmp / "settings.toml"
    with f.open("wb") as out:
        out.write(b'[store]\nsynchronous = "FULL"\n')
        out.truncate(64 * 1024 * 1024)  # sparse: a NUL-filled tail, as a crashed write leaves
    with pytest.raises(ConfigInvalid, match=r"too big: 67,108,864 bytes.*1 MiB"):
        load_settings(f)


@pytest.mark.parametrize(
    "deep",
    [
        "[store]\nx." + ".".join(["a"] * 10_000) + " = 1",
        "[store]\nx = " + "[" * 3000 + "]" * 3000,
    ],
)
def test_a_settings_file_nested_past_reason_is_refused_naming_the_line(
    short_tmp: Path, deep: str
) -> None:
    """Until 2026-12-01 a dotted key 50,000 levels deep took the start 95 s to read, and one
    3,000 deep 4 s."""
    f = short_tmp / "settings.toml"
    f.write_text(deep + "\n", encoding="utf-8")
    with pytest.raises(ConfigInvalid, match=r"line 2: nested more than 32 levels deep"):
        load_settings(f)


def test_a_settings_file_that_is_not_utf8_is_said_in_words(short_tmp: Path) -> None:
    """Latin-1 text saved by an old editor: the message was Python's "'utf-8' codec can't decode
    byte 0xe9 in position 13: invalid continuation byte" (until 2026-12-01)."""
    f = short_tmp / "settings.toml"
    f.write_bytes('[notes]\nfolder = "/tmp/caf\u00e9"\n'.encode("latin-1"))
    with pytest.raises(ConfigInvalid) as raised:
        load_settings(f)
    assert raised.value.message == (
        f"cannot read settings file {f}: it is not UTF-8 text (byte 0xe9 at offset 26)"
    )
