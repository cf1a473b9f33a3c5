# Shared by scripts/run and scripts/check: find a Python >= 3.11 and keep .venv installed.
# Sourced, not executed.

pick_python() {
    local candidate
    for candidate in "${CAIRN_PYTHON:-}" python3.11 python3.12 python3.13 python3; do
        [ -n "$candidate" ] || continue
        command -v "$candidate" >/dev/null 2>&1 || continue
        if "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null; then
            echo "$candidate"
            return 0
        fi
    done
    echo "cairn: Python 3.11 or newer is required (set CAIRN_PYTHON to its path)" >&2
    return 1
}

# ensure_venv KIND: KIND is "run" (the app) or "dev" (the app plus the checks' tools).
# Reinstalls only when pyproject.toml changed since the last install of that kind.
ensure_venv() {
    local kind="$1" python stamp want
    if [ ! -x .venv/bin/python ]; then
        python=$(pick_python) || return 1
        echo "cairn: creating .venv with $($python --version)" >&2
        "$python" -m venv .venv
        .venv/bin/python -m pip install --quiet --upgrade pip
    fi
    want=$(sha256sum pyproject.toml | cut -d' ' -f1)
    stamp=".venv/.installed-$kind"
    # The development install includes everything the app needs.
    if [ "$kind" = run ] && [ -f .venv/.installed-dev ] && [ "$(cat .venv/.installed-dev)" = "$want" ]; then
        return 0
    fi
    if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
        echo "cairn: installing dependencies ($kind) into .venv" >&2
        if [ "$kind" = dev ]; then
            .venv/bin/python -m pip install --quiet -e '.[dev]'
        else
            .venv/bin/python -m pip install --quiet -e .
        fi
        echo "$want" > "$stamp"
    fi
}
