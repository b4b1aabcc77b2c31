# shellcheck shell=bash
# Shared by scripts/test and scripts/tox (sourced, not run): find the CPython versions the tox
# configurations test on, and keep tox in a tool environment of this checkout (.venv-tools/),
# never in the system's or pyenv's own Python.
#
# DSH_TOOLS_DIR moves .venv-tools/ elsewhere (the tests use it). After tools_setup:
#   TOOLS_PYTHON   the python of the tool environment .venv-tools/tox/ (tox runs as
#                  "$TOOLS_PYTHON" -m tox)
#   PYTHONS_FOUND / PYTHONS_MISSING   versions ("3.12") with / without an interpreter
#   PATH           starts with .venv-tools/pythons/, where python3.X links to each one found
#                  (tox-uv looks for python3.X on PATH; nothing else of pyenv's is put there;
#                  outside the tool venv, or uv would take the links for a venv's Pythons)

TOOLS_VERSIONS=(3.10 3.11 3.12 3.13)
TOOLS_REQUIREMENTS=("tox>=4.20" "tox-uv>=1.11")
TOOLS_DIR="${DSH_TOOLS_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.venv-tools}"
TOOLS_ENV="$TOOLS_DIR/tox"

tools_say() { echo "${TOOLS_NAME:-scripts}: $*" >&2; }

# True if $1 runs and is CPython $2. A pyenv shim for a version that is not activated exists
# but fails, so every candidate is run, not just looked up.
tools_is_python() {
    [ -x "$1" ] || return 1
    local got
    got="$("$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)" || return 1
    [ "$got" = "$2" ]
}

# Prints where CPython $1 is and how it was found: the newest pyenv build of it when pyenv is
# installed, else python$1 on PATH.
tools_find_python() {
    local version="$1" pyenv root dir name best="" best_patch=-1 found
    # pyenv on PATH, or installed in its usual place without being on PATH.
    pyenv="$(command -v pyenv 2>/dev/null || echo "${PYENV_ROOT:-$HOME/.pyenv}/bin/pyenv")"
    if [ -x "$pyenv" ] && root="$("$pyenv" root 2>/dev/null)"; then
        for dir in "$root/versions/$version".*; do
            name="${dir##*/}"
            [[ "$name" =~ ^${version//./\\.}\.([0-9]+)$ ]] || continue  # no -dev or t builds
            if ((BASH_REMATCH[1] > best_patch)) && tools_is_python "$dir/bin/python$version" "$version"; then
                best="$dir/bin/python$version"
                best_patch="${BASH_REMATCH[1]}"
            fi
        done
        if [ -n "$best" ]; then
            echo "$best pyenv"
            return 0
        fi
    fi
    if found="$(command -v "python$version" 2>/dev/null)" && tools_is_python "$found" "$version"; then
        echo "$found PATH"
        return 0
    fi
    return 1
}

tools_find_pythons() {
    local version found
    PYTHONS_FOUND=()
    PYTHONS_MISSING=()
    PYTHON_PATHS=()
    tools_say "CPython versions for the tox environments:"
    for version in "${TOOLS_VERSIONS[@]}"; do
        if found="$(tools_find_python "$version")"; then
            PYTHONS_FOUND+=("$version")
            PYTHON_PATHS+=("${found% *}")
            tools_say "  $version  found: ${found% *} (through ${found##* })"
        else
            PYTHONS_MISSING+=("$version")
            tools_say "  $version  MISSING: no pyenv build and no python$version on PATH"
        fi
    done
}

# .venv-tools/tox/ with tox and tox-uv, made with "python -m venv" (so pip installs there, never
# into an externally managed Python); remade when its Python is gone or the requirements changed.
tools_ensure_env() {
    local base stamp="$TOOLS_ENV/.requirements" wanted="${TOOLS_REQUIREMENTS[*]}"
    TOOLS_PYTHON="$TOOLS_ENV/bin/python"
    if "$TOOLS_PYTHON" -c '' 2>/dev/null && [ "$(cat "$stamp" 2>/dev/null)" = "$wanted" ]; then
        return 0
    fi
    # The newest CPython found runs tox; without any, python3 from PATH.
    if [ "${#PYTHON_PATHS[@]}" -gt 0 ]; then
        base="${PYTHON_PATHS[-1]}"
    elif ! base="$(command -v python3)"; then
        tools_say "ERROR: no Python to run tox: install python3 (3.10 or newer)"
        return 1
    fi
    tools_say "making the tool environment .venv-tools/tox/ with $base: ${TOOLS_REQUIREMENTS[*]}"
    if ! "$base" -m venv --clear "$TOOLS_ENV"; then
        tools_say "ERROR: '$base -m venv' failed: this Python lacks its venv module (ensurepip)."
        tools_say "  On Debian or Ubuntu: apt-get install python3-venv (python3.X-venv for python3.X)"
        return 1
    fi
    "$TOOLS_PYTHON" -m pip install --quiet --disable-pip-version-check "${TOOLS_REQUIREMENTS[@]}"
    echo "$wanted" >"$stamp"
}

# Puts only the interpreters found on PATH, as python3.X links in one folder.
tools_link_pythons() {
    local i
    rm -rf "$TOOLS_DIR/pythons"
    mkdir -p "$TOOLS_DIR/pythons"
    for i in "${!PYTHONS_FOUND[@]}"; do
        ln -s "${PYTHON_PATHS[i]}" "$TOOLS_DIR/pythons/python${PYTHONS_FOUND[i]}"
    done
    PATH="$TOOLS_DIR/pythons:$PATH"
    export PATH
}

tools_setup() {
    tools_find_pythons
    tools_ensure_env || return 1
    tools_link_pythons
    # Only this machine's interpreters: uv must never download one (each tox.ini says so too).
    export UV_PYTHON_DOWNLOADS=never
}
