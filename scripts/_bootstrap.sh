# shellcheck shell=bash
# Shared setup for scripts/test and friends. Source it; it only defines functions and variables.
#
#   source scripts/_bootstrap.sh
#   tn_setup_venv_main          # .venv              (Python >= 3.12, requirements/test.txt)
#   tn_setup_venv_mitmproxy11   # .venv-mitmproxy11  (Python 3.11,   requirements/test-mitmproxy11.txt)
#   tn_setup_msgspec11          # .venv-mitmproxy11-msgspec (msgspec for it, a --target folder)
#   tn_setup_mastra             # tests/e2e/mastra/node_modules (npm ci)
#   tn_setup_claude_code        # tests/e2e/claude_code/node_modules (npm ci)
#   tn_ensure_chromium          # /usr/bin/chromium (apt-get, root only); returns 1 if unavailable
#
# Every step is idempotent: a stamp file records what was installed (sha256 of the requirements
# file or package-lock.json), and a step whose stamp matches does nothing.
#
# Overrides: TOOLNAMES_PYTHON (an interpreter >= 3.12), TOOLNAMES_PYTHON311 (a 3.11 interpreter).

TOOLNAMES_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLNAMES_VENV="$TOOLNAMES_ROOT/.venv"
TOOLNAMES_VENV11="$TOOLNAMES_ROOT/.venv-mitmproxy11"
TOOLNAMES_MSGSPEC11="$TOOLNAMES_ROOT/.venv-mitmproxy11-msgspec"
TOOLNAMES_MASTRA_DIR="$TOOLNAMES_ROOT/tests/e2e/mastra"
TOOLNAMES_CLAUDE_CODE_DIR="$TOOLNAMES_ROOT/tests/e2e/claude_code"

tn_log() {
    printf '%s\n' "$*" >&2
}

tn_err() {
    printf 'error: %s\n' "$*" >&2
}

# tn_python_matches INTERPRETER MIN_MINOR MAX_MINOR
# Prints the interpreter's real sys.executable if it runs, is 3.MIN..3.MAX and can make venvs
# (Debian splits ensurepip/venv out into python3-venv). pyenv shims for versions that are not
# selected exit 127, so every candidate is really run.
tn_python_matches() {
    "$1" -c '
import sys
lo, hi = int(sys.argv[1]), int(sys.argv[2])
if sys.version_info[0] != 3 or not lo <= sys.version_info[1] <= hi:
    sys.exit(1)
import ensurepip, venv
print(sys.executable)
' "$2" "$3" 2>/dev/null
}

# tn_pyenv_pythons MINOR...: pyenv-installed CPython interpreters of the given 3.x minor
# versions, in that order, newest patch release first.
tn_pyenv_pythons() {
    local roots=() root minor v
    if command -v pyenv >/dev/null 2>&1; then
        root="$(pyenv root 2>/dev/null || true)"
        [[ -n "$root" ]] && roots+=("$root")
    fi
    [[ -n "${PYENV_ROOT:-}" ]] && roots+=("$PYENV_ROOT")
    roots+=("$HOME/.pyenv")
    for minor in "$@"; do
        for root in $(printf '%s\n' "${roots[@]}" | awk '!seen[$0]++'); do
            [[ -d "$root/versions" ]] || continue
            # Plain CPython releases only (not 3.13.0t, miniconda3-..., or virtualenvs).
            for v in $(find "$root/versions" -mindepth 1 -maxdepth 1 -name "3.$minor.*" -printf '%f\n' 2>/dev/null |
                grep -E "^3\.$minor\.[0-9]+$" | sort -rV || true); do
                printf '%s\n' "$root/versions/$v/bin/python3"
            done
        done
    done
}

# tn_first_python MIN_MINOR MAX_MINOR CANDIDATE...: prints the first candidate (a path or a
# command name) that is a working Python 3.MIN..3.MAX.
tn_first_python() {
    local min="$1" max="$2" c found
    shift 2
    for c in "$@"; do
        [[ -n "$c" ]] || continue
        if [[ "$c" != */* ]]; then
            c="$(command -v "$c" 2>/dev/null)" || continue
        fi
        [[ -x "$c" ]] || continue
        if found="$(tn_python_matches "$c" "$min" "$max")" && [[ -n "$found" ]]; then
            printf '%s\n' "$found"
            return 0
        fi
    done
    return 1
}

tn_pyenv_root_hint() {
    pyenv root 2>/dev/null || echo "${PYENV_ROOT:-$HOME/.pyenv}"
}

# A Python >= 3.12 for .venv (mitmproxy 12 needs it): $TOOLNAMES_PYTHON, else python3.14/3.13/3.12
# on PATH, else the newest pyenv 3.14/3.13/3.12, else python3 if it is new enough.
tn_find_python312() {
    local found
    if [[ -n "${TOOLNAMES_PYTHON:-}" ]]; then
        tn_first_python 12 99 "$TOOLNAMES_PYTHON" && return 0
        tn_err "TOOLNAMES_PYTHON=$TOOLNAMES_PYTHON is not a working Python >= 3.12 with venv"
        return 1
    fi
    local pyenv_candidates=()
    mapfile -t pyenv_candidates < <(tn_pyenv_pythons 14 13 12)
    if found="$(tn_first_python 12 99 python3.14 python3.13 python3.12 "${pyenv_candidates[@]}" python3)"; then
        printf '%s\n' "$found"
        return 0
    fi
    tn_err "no Python >= 3.12 found (tried python3.14, python3.13, python3.12 and python3 on PATH" \
        "and pyenv versions in $(tn_pyenv_root_hint)/versions). mitmproxy 12 needs Python >= 3.12:" \
        "install one (e.g. 'pyenv install 3.12') or point TOOLNAMES_PYTHON at it."
    return 1
}

# A Python 3.11 for .venv-mitmproxy11: $TOOLNAMES_PYTHON311, else python3.11 on PATH, else the
# newest pyenv 3.11, else python3 or /usr/bin/python3.11 if they are 3.11.
tn_find_python311() {
    local found
    if [[ -n "${TOOLNAMES_PYTHON311:-}" ]]; then
        tn_first_python 11 11 "$TOOLNAMES_PYTHON311" && return 0
        tn_err "TOOLNAMES_PYTHON311=$TOOLNAMES_PYTHON311 is not a working Python 3.11 with venv"
        return 1
    fi
    local pyenv_candidates=()
    mapfile -t pyenv_candidates < <(tn_pyenv_pythons 11)
    if found="$(tn_first_python 11 11 python3.11 "${pyenv_candidates[@]}" python3 /usr/bin/python3.11)"; then
        printf '%s\n' "$found"
        return 0
    fi
    tn_err "no Python 3.11 found (tried python3.11 and python3 on PATH, pyenv versions in" \
        "$(tn_pyenv_root_hint)/versions and /usr/bin/python3.11). The mitmproxy 11 run needs one:" \
        "install it (e.g. 'pyenv install 3.11') or point TOOLNAMES_PYTHON311 at it."
    return 1
}

tn_sha256() {
    sha256sum "$1" | cut -d' ' -f1
}

# tn_pinned_version FILE PACKAGE: the version pinned with == in a requirements file.
tn_pinned_version() {
    sed -nE "s/^$2==([^ ;#]+).*/\1/p" "$1" | head -n1
}

# tn_setup_venv VENV REQUIREMENTS MIN_MINOR MAX_MINOR FINDER
# Creates VENV with the interpreter FINDER prints (unless it exists with a fitting Python), then
# pip-installs REQUIREMENTS unless the stamp says exactly this file is already installed.
tn_setup_venv() {
    local venv="$1" req="$2" min="$3" max="$4" finder="$5"
    local name stamp want have py pyver log mitm
    name="$(basename "$venv")"
    stamp="$venv/.toolnames-requirements.sha256"
    if [[ ! -f "$req" ]]; then
        tn_err "missing $req"
        return 1
    fi

    if [[ -e "$venv" ]] && ! tn_python_matches "$venv/bin/python" "$min" "$max" >/dev/null; then
        tn_log "$name: broken or wrong Python version, recreating it"
        rm -rf "$venv"
    fi
    if [[ ! -e "$venv" ]]; then
        py="$("$finder")" || return 1
        tn_log "creating $name with $py"
        if ! "$py" -m venv "$venv"; then
            tn_err "could not create $venv with $py"
            rm -rf "$venv"
            return 1
        fi
    fi

    pyver="$("$venv/bin/python" -c 'import platform; print(platform.python_version())')" || return 1
    tn_link_project "$venv" || return 1
    want="$(tn_sha256 "$req") python-$pyver"
    have="$(cat "$stamp" 2>/dev/null || true)"
    mitm="$(tn_pinned_version "$req" mitmproxy)"
    if [[ "$have" == "$want" ]]; then
        tn_log "$name is up to date (mitmproxy $mitm, Python $pyver)"
        return 0
    fi

    tn_log "setting up $name (mitmproxy $mitm, Python $pyver)…"
    rm -f "$stamp"
    log="$venv/.toolnames-pip.log"
    if ! "$venv/bin/python" -m pip install --disable-pip-version-check --no-input -r "$req" >"$log" 2>&1; then
        # Leave out pip's noise about absent optional local index folders.
        grep -v 'is ignored: it is neither a file nor a directory' "$log" | tail -n 40 >&2
        tn_err "pip install -r ${req#"$TOOLNAMES_ROOT"/} into $name failed (full log: $log)"
        return 1
    fi
    printf '%s\n' "$want" >"$stamp"
}

# The one way the project's code is found: a .pth file in the venv's site-packages names
# addon/ (toolnames.py, toolnames_core, toolnames_mitm) and scripts/ (scanner, standin,
# harness, ...), as an editable install would. Every process run with the venv's Python
# (pytest, the stand-in, mitmdump, scan, bench, soak, demo) imports them with no sys.path
# or PYTHONPATH of its own. Rewritten on every run, so a moved clone stays right.
tn_link_project() {
    local venv="$1" site
    site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')" || return 1
    printf '%s\n%s\n' "$TOOLNAMES_ROOT/addon" "$TOOLNAMES_ROOT/scripts" >"$site/toolnames-project.pth"
}

tn_setup_venv_main() {
    tn_setup_venv "$TOOLNAMES_VENV" "$TOOLNAMES_ROOT/requirements/test.txt" 12 99 tn_find_python312
}

tn_setup_venv_mitmproxy11() {
    tn_setup_venv "$TOOLNAMES_VENV11" "$TOOLNAMES_ROOT/requirements/test-mitmproxy11.txt" 11 11 \
        tn_find_python311
}

# msgspec for .venv-mitmproxy11's Python, in a folder of its own (requirements/
# msgspec-mitmproxy11.txt says why): put it on PYTHONPATH to run that venv with the fast reader.
tn_setup_msgspec11() {
    local dir="$TOOLNAMES_MSGSPEC11" req="$TOOLNAMES_ROOT/requirements/msgspec-mitmproxy11.txt"
    local stamp want have log
    stamp="$dir/.toolnames-requirements.sha256"
    want="$(tn_sha256 "$req") $("$TOOLNAMES_VENV11/bin/python" -c 'import platform; print(platform.python_version())')"
    have="$(cat "$stamp" 2>/dev/null || true)"
    if [[ "$have" == "$want" ]]; then
        tn_log "$(basename "$dir") is up to date"
        return 0
    fi
    tn_log "setting up $(basename "$dir")…"
    rm -rf "$dir"
    mkdir -p "$dir"
    log="$dir/.toolnames-pip.log"
    if ! "$TOOLNAMES_VENV11/bin/python" -m pip install --disable-pip-version-check --no-input \
        --target "$dir" -r "$req" >"$log" 2>&1; then
        grep -v 'is ignored: it is neither a file nor a directory' "$log" | tail -n 40 >&2
        tn_err "pip install --target $(basename "$dir") -r ${req#"$TOOLNAMES_ROOT"/} failed (full log: $log)"
        return 1
    fi
    printf '%s\n' "$want" >"$stamp"
}

# tn_setup_npm_project DIR WHAT: npm ci in DIR when node_modules is missing or was installed
# from another package-lock.json (or another Node.js); npm install only if there is no lock
# file. WHAT names the tests that need it, for the error message.
tn_setup_npm_project() {
    local dir="$1" what="$2" stamp want have lockfile log rel
    local cmd=()
    rel="${dir#"$TOOLNAMES_ROOT"/}"
    if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
        tn_err "node/npm not found; the $what end-to-end tests need Node.js and npm"
        return 1
    fi
    stamp="$dir/node_modules/.toolnames-lock.sha256"
    if [[ -f "$dir/package-lock.json" ]]; then
        lockfile="$dir/package-lock.json"
        cmd=(npm ci)
    else
        lockfile="$dir/package.json"
        cmd=(npm install)
    fi
    want="$(tn_sha256 "$lockfile") node-$(node --version)"
    have="$(cat "$stamp" 2>/dev/null || true)"
    if [[ -d "$dir/node_modules" && "$have" == "$want" ]]; then
        tn_log "$rel/node_modules is up to date"
        return 0
    fi
    tn_log "installing $rel/node_modules (${cmd[*]})…"
    log="$(mktemp "${TMPDIR:-/tmp}/toolnames-npm.XXXXXX")"
    # --loglevel=error hides the expected EBADENGINE warnings (@mastra/core and Claude Code
    # 2.x ask for node >= 22; what the tests run works on 20).
    if ! (cd "$dir" && "${cmd[@]}" --no-audit --no-fund --loglevel=error) >"$log" 2>&1; then
        tail -n 40 "$log" >&2
        tn_err "${cmd[*]} in $rel failed (full log: $log)"
        return 1
    fi
    rm -f "$log"
    printf '%s\n' "$want" >"$stamp"
}

tn_setup_mastra() {
    tn_setup_npm_project "$TOOLNAMES_MASTRA_DIR" Mastra
}

# Two pinned Claude Codes (tests/e2e/test_claude_code.py says why): 1.0.83 is a cli.js run by node; 2.1.332 is
# a native binary that comes in a per-platform package (@anthropic-ai/claude-code-linux-x64,
# about 400 MB), put in place by the package's postinstall.
tn_setup_claude_code() {
    tn_setup_npm_project "$TOOLNAMES_CLAUDE_CODE_DIR" "Claude Code"
}

# Makes sure Debian's chromium is installed, for browser tests: installs it with apt-get when
# running as root. Returns 1 (with a warning) if it is not available.
tn_ensure_chromium() {
    local log
    # The colour emoji font makes the flow markers (⚠ 🛠 ⛔) visible in browser screenshots.
    if [[ -x /usr/bin/chromium && -e /usr/share/fonts/truetype/noto/NotoColorEmoji.ttf ]]; then
        return 0
    fi
    if [[ "$(id -u)" != 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
        tn_log "warning: /usr/bin/chromium is missing and cannot be installed here (needs root and apt-get)"
        return 1
    fi
    tn_log "installing chromium and an emoji font (apt-get)…"
    log="$(mktemp "${TMPDIR:-/tmp}/toolnames-apt.XXXXXX")"
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-color-emoji; } >"$log" 2>&1; then
        tail -n 40 "$log" >&2
        tn_log "warning: apt-get install chromium failed (full log: $log)"
        return 1
    fi
    rm -f "$log"
    if [[ ! -x /usr/bin/chromium ]]; then
        tn_log "warning: apt-get installed chromium but /usr/bin/chromium is missing"
        return 1
    fi
}
