#!/usr/bin/env python3
"""transformers' side of bench/hf-bench.sh: makes the ~10M-parameter bench model (random weights,
the fixture tokenizer) and times generate (batch 64, 32-token prompts, 64 new tokens, greedy, KV
cache) and one SFT training step (forward, backward, AdamW) with one intra-op thread.
    python bench/hf_bench.py make OUT_DIR
    python bench/hf_bench.py time MODEL_DIR [MODEL_DIR...]
"""
import os
import shutil
import sys
import time

import torch
import transformers

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "..", "activities", "src", "test", "resources", "hf", "llama")
BATCH, PROMPT, NEW = 64, 32, 64
SFT_ROWS, SFT_LEN = 16, 96


def make(out):
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(vocab_size=384, hidden_size=256, intermediate_size=688,
                                   num_hidden_layers=12, num_attention_heads=4,
                                   num_key_value_heads=2, max_position_embeddings=256,
                                   tie_word_embeddings=False, eos_token_id=2, pad_token_id=0)
    model = transformers.LlamaForCausalLM(cfg)
    model.save_pretrained(out)
    for f in ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja"):
        shutil.copy(os.path.join(FIXTURE, f), out)
    print(out, sum(p.numel() for p in model.parameters()), "parameters")


def best(fn, repeats=int(os.environ.get("REPEATS", "10"))):
    fn()  # two warm-ups, as HfBench.java
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


# DEVICE=cuda (bench/gpu-check): the same runs on the GPU, synchronized before each clock read
DEVICE = os.environ.get("DEVICE", "cpu")


def sync():
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def timed(path):
    model = transformers.AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).to(DEVICE)
    model.eval()
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(3, model.config.vocab_size, (BATCH, PROMPT), generator=g).to(DEVICE)
    mask = torch.ones_like(ids)

    def gen():
        with torch.no_grad():
            model.generate(input_ids=ids, attention_mask=mask, do_sample=False, max_new_tokens=NEW,
                           min_new_tokens=NEW, pad_token_id=0)
        sync()
    t_gen = best(gen)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    batch = torch.randint(3, model.config.vocab_size, (SFT_ROWS, SFT_LEN), generator=g).to(DEVICE)

    def step():
        logits = model(input_ids=batch[:, :-1]).logits
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                 batch[:, 1:].reshape(-1))
        loss.backward()
        # as whale's trainer (and transformers' Trainer, max_grad_norm 1.0) does before each update
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad()
        sync()
    t_sft = best(step)
    params = sum(p.numel() for p in model.parameters())
    print(f"transformers {os.path.basename(path.rstrip('/'))} device={DEVICE} params={params} "
          f"generate_new_tok_s={BATCH * NEW / t_gen:.0f} sft_tok_s={SFT_ROWS * (SFT_LEN - 1) / t_sft:.0f}")


if __name__ == "__main__":
    torch.set_num_threads(1)
    if sys.argv[1] == "make":
        make(sys.argv[2])
    else:
        for p in sys.argv[2:]:
            timed(p)
