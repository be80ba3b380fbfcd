#!/usr/bin/env bash
# The fresh-clone run: clone HEAD into an empty temporary folder (nothing beside it, no
# ../shared) and run the unit tests there with the project venv's python, as a new user's
# `git clone` + `make test` would, minus the browser tests and the installs.
#
#   scripts/fresh_clone_check.sh [extra pytest arguments, e.g. -k "not wiki"]
#
# PYTHON: the interpreter to test with (default: .venv/bin/python of this checkout).
# KEEP=1 keeps the clone for inspection. No WB_* variable reaches the tests.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
python="${PYTHON:-$repo/.venv/bin/python}"
[ -x "$python" ] || { echo "fresh-clone-check: no python at $python (run make setup-dev)" >&2; exit 2; }

parent="$(mktemp -d "${TMPDIR:-/tmp}/fresh-clone.XXXXXX")"
if [ "${KEEP:-0}" = 1 ]; then
    echo "fresh-clone-check: keeping $parent" >&2
else
    trap 'rm -rf "$parent"' EXIT
fi
clone="$parent/repo"

head="$(git -C "$repo" rev-parse HEAD)"
git clone --quiet --no-checkout "$repo" "$clone"
git -C "$clone" -c advice.detachedHead=false checkout --quiet "$head"
if [ -n "$(git -C "$repo" status --porcelain --untracked-files=no)" ]; then
    echo "fresh-clone-check: uncommitted changes are not tested (HEAD $head)" >&2
fi

cd "$clone"
# The clone's own core must be the one imported (not an installed or editable copy elsewhere).
for name in $(env | sed -n 's/^\(WB_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$name"; done
unset PYTHONPATH
core="$("$python" -c 'import core, pathlib; print(pathlib.Path(core.__file__).resolve().parent.parent)')"
[ "$core" = "$(pwd -P)" ] || { echo "fresh-clone-check: core imports from $core, not the clone" >&2; exit 2; }

echo "fresh-clone-check: $head in $clone" >&2
"$python" -m pytest -q -p no:cacheprovider -m "not browser" "$@"
