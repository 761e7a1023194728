#!/usr/bin/env bash
# Create the peer venvs that `perspecta bench harness` compares against (lmms-eval, inspect_ai).
# Each peer gets its OWN venv; none of this touches the project's environment.
# Idempotent: a venv whose requirements file (and this script) have not changed since its
# last successful install is left alone (their sha256 is stored in the venv); a half-made
# venv (no stamp) is completed on the next call.
#
#   bash benchmarks/harness/setup_peers.sh            # both peers
#   bash benchmarks/harness/setup_peers.sh inspect-ai # one peer
#
# Venvs go to $PERSPECTA_PEER_VENVS (default ~/.cache/perspecta/bench-peers), outside the repo.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="${PERSPECTA_PEER_VENVS:-$HOME/.cache/perspecta/bench-peers}"
PYTHON="${PYTHON:-python3.11}"
PEERS=("$@")
if [ ${#PEERS[@]} -eq 0 ]; then PEERS=(lmms-eval inspect-ai); fi

# pip prints a warning per package for this machine's local index mirrors; keep errors only.
quiet_pip() { grep -v "is ignored: it is neither a file nor a directory" || true; }

install_peer() {
    local peer="$1"
    local req="$HERE/requirements-$peer.txt"
    local venv="$ROOT/$peer"
    if [ ! -f "$req" ]; then echo "unknown peer '$peer' (no $req)" >&2; return 2; fi
    local want; want="$(cat "$req" "${BASH_SOURCE[0]}" | sha256sum | cut -d' ' -f1)"
    if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.perspecta-req-sha256" 2>/dev/null)" = "$want" ]; then
        echo "[$peer] up to date: $venv"
        return 0
    fi
    echo "[$peer] installing into $venv"
    mkdir -p "$ROOT"
    [ -x "$venv/bin/python" ] || "$PYTHON" -m venv "$venv"
    rm -f "$venv/.perspecta-req-sha256"
    "$venv/bin/python" -m pip install --quiet --upgrade pip 2>&1 | quiet_pip
    "$venv/bin/python" -m pip install --quiet -r "$req" 2>&1 | quiet_pip
    if [ "$peer" = lmms-eval ]; then
        # PyPI's torchvision wheels are built against PyPI's (CUDA) torch; against the pinned CPU
        # torch its compiled ops fail to register and `import torchvision` raises, which breaks
        # importing transformers. lmms-eval's async_openai path never uses torchvision: remove it.
        "$venv/bin/python" -m pip uninstall --quiet --yes torchvision 2>&1 | quiet_pip
    fi
    local module; case "$peer" in lmms-eval) module=lmms_eval.evaluator ;; inspect-ai) module=inspect_ai ;; esac
    if ! "$venv/bin/python" -c "import $module" > /dev/null 2>&1; then
        echo "[$peer] '$module' does not import after the install; venv left unstamped" >&2
        return 1
    fi
    "$venv/bin/python" -m pip freeze > "$venv/.perspecta-freeze.txt"
    echo "$want" > "$venv/.perspecta-req-sha256"
    echo "[$peer] done ($(wc -l < "$venv/.perspecta-freeze.txt") packages)"
}

for peer in "${PEERS[@]}"; do install_peer "$peer"; done
