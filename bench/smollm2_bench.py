#!/usr/bin/env python3
"""transformers' side of bench/smollm2-bench.sh on SmolLM2-135M-Instruct (the directory `whale models
fetch smollm2-135m-instruct` imports), one intra-op thread:
    python bench/smollm2_bench.py inputs MODEL_DIR OUT.json   # the shared batch, as token ids
    python bench/smollm2_bench.py time MODEL_DIR IN.json      # generate and one LoRA SFT step
The batch: 64 arithmetic questions rendered with the model's chat template (generation prompt on),
64 new tokens each, greedy; SFT: 16 of them with a worked answer, LoRA rank 16 on q/k/v/o, AdamW,
gradient clipping at 1.0, loss on the answer tokens only (as whale's trainer).
"""
import json
import os
import random
import sys
import time

import torch
import transformers

BATCH, NEW, SFT_ROWS, REPEATS = 64, 64, 16, int(os.environ.get("REPEATS", "3"))
NAMES = ["Tom", "Ann", "Sam", "Mia", "Ben", "Zoe"]
THINGS = ["apples", "pens", "cards", "coins", "books", "shells"]


def question(rnd):
    a, b, c = rnd.randint(2, 20), rnd.randint(1, 9), rnd.randint(1, 9)
    who, what = rnd.choice(NAMES), rnd.choice(THINGS)
    return (f"{who} has {a} {what}. {who} gets {b} more and then gives away {c}. "
            f"How many {what} does {who} have now?", a + b - c, (a, b, c))


def inputs(model_dir, out):
    tok = transformers.AutoTokenizer.from_pretrained(model_dir)
    rnd = random.Random(1)
    prompts, sft = [], []
    for i in range(BATCH):
        q, ans, (a, b, c) = question(rnd)
        ids = tok.apply_chat_template([{"role": "user", "content": q}], add_generation_prompt=True,
                                      tokenize=True, return_dict=False)
        prompts.append(list(ids))
        if i < SFT_ROWS:
            done = tok(f"{a} + {b} = {a + b}, and {a + b} - {c} = {ans}. The answer is {ans}.<|im_end|>",
                       add_special_tokens=False)["input_ids"]
            sft.append({"prompt": list(ids), "completion": list(done)})
    with open(out, "w") as f:
        json.dump({"prompts": prompts, "sft": sft}, f)
    lens = [len(p) for p in prompts]
    print(f"{out}: {BATCH} prompts of {min(lens)}-{max(lens)} tokens, {SFT_ROWS} SFT rows")


def best(fn):
    fn()  # one warm-up, as SmolLm2Bench.java
    times = []
    for _ in range(REPEATS):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def timed(model_dir, path):
    import peft
    data = json.load(open(path))
    model = transformers.AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    model.eval()
    tok = transformers.AutoTokenizer.from_pretrained(model_dir)
    pad = tok.pad_token_id if tok.pad_token_id is not None else 0
    width = max(len(p) for p in data["prompts"])
    ids = torch.tensor([[pad] * (width - len(p)) + p for p in data["prompts"]])  # left padding
    mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in data["prompts"]])

    def gen():
        with torch.no_grad():
            model.generate(input_ids=ids, attention_mask=mask, do_sample=False, max_new_tokens=NEW,
                           min_new_tokens=NEW, pad_token_id=pad)
    t_gen = best(gen)

    lora = peft.get_peft_model(model, peft.LoraConfig(
        r=16, lora_alpha=32, lora_dropout=0.0,
        target_modules=["q_proj", "k_proj", "v_proj", "o_proj"]))
    lora.train()
    opt = torch.optim.AdamW([p for p in lora.parameters() if p.requires_grad], lr=1e-4)
    rows = [r["prompt"] + r["completion"] for r in data["sft"]]
    w = max(len(r) for r in rows)
    x = torch.tensor([r + [pad] * (w - len(r)) for r in rows])
    labels = torch.full_like(x, -100)
    for i, r in enumerate(data["sft"]):
        p, c = len(r["prompt"]), len(r["completion"])
        labels[i, p:p + c] = x[i, p:p + c]
    attn = (torch.arange(w)[None, :] < torch.tensor([len(r) for r in rows])[:, None]).long()
    tokens = sum(len(r) for r in rows)

    def step():
        logits = lora(input_ids=x, attention_mask=attn).logits[:, :-1]
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                 labels[:, 1:].reshape(-1), ignore_index=-100)
        loss.backward()
        torch.nn.utils.clip_grad_norm_([p for p in lora.parameters() if p.requires_grad], 1.0)
        opt.step()
        opt.zero_grad()
    t_sft = best(step)
    print(f"transformers {transformers.__version__} torch {torch.__version__}: generate_new_tok_s="
          f"{BATCH * NEW / t_gen:.1f} ({t_gen:.2f} s) lora_sft_tok_s={tokens / t_sft:.1f} ({t_sft:.2f} s, "
          f"{tokens} tokens)")


if __name__ == "__main__":
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    if sys.argv[1] == "inputs":
        inputs(sys.argv[2], sys.argv[3])
    else:
        timed(sys.argv[2], sys.argv[3])
