#!/usr/bin/env python3
"""Loads what HfExportTest exported (activities/target/hf-export/) with transformers and peft and
compares their last-position logits with whale's. Run after the test, with the venv of
make_hf_fixtures.py:
    /tmp/venv-hf/bin/python activities/src/test/python/check_hf_export.py [activities/target/hf-export]
Exits 1 if any max |logit difference| reaches 1e-4.
"""
import json
import os
import sys

import peft
import torch
import transformers

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "target", "hf-export")
with open(os.path.join(root, "whale-logits.json")) as f:
    runs = json.load(f)
worst = 0.0
for name, run in runs.items():
    model = transformers.AutoModelForCausalLM.from_pretrained(
        run["model"], dtype=torch.float32, attn_implementation="eager")
    if "adapter" in run:
        model = peft.PeftModel.from_pretrained(model, run["adapter"])
    model.eval()
    diff = 0.0
    with torch.no_grad():
        for ids, expected in zip(run["prompts"], run["lastLogits"]):
            got = model(input_ids=torch.tensor([ids])).logits[0, -1]
            diff = max(diff, (got - torch.tensor(expected)).abs().max().item())
    print(f"{name}: max |transformers - whale| = {diff:.3g}")
    worst = max(worst, diff)
sys.exit(0 if worst < 1e-4 else 1)
