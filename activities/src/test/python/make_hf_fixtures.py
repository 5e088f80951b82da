#!/usr/bin/env python3
"""Builds the tiny Hugging Face fixtures under activities/src/test/resources/hf/ and the golden
outputs the Java parity tests (whale.model.hf.*Test) compare against. The Java tests need no Python.

Regenerate (CPU is enough; about 2 GB of wheels):
    python3 -m venv /tmp/venv-hf
    /tmp/venv-hf/bin/pip install torch transformers tokenizers peft safetensors
    /tmp/venv-hf/bin/python activities/src/test/python/make_hf_fixtures.py
then commit activities/src/test/resources/hf/. Everything is seeded, but the goldens are whatever
the installed transformers computes: golden.json records its version.

Per model directory (random weights, float32 unless noted):
  llama    LlamaForCausalLM, untied head, 4 query heads per 2 KV heads, default RoPE
  llama3   LlamaForCausalLM, tied head, 4 query heads per KV head, rope_scaling type llama3
  qwen2    Qwen2ForCausalLM, q/k/v bias, tied head, 4 query heads per 2 KV heads
  qwen3    Qwen3ForCausalLM, q/k RMSNorm, explicit head_dim 24 (not hidden/heads), untied head
  mistral  MistralForCausalLM saved in BF16 and sharded (model.safetensors.index.json)
Each has tokenizer.json (a byte-level BPE trained here) with a ChatML chat template, and
generation_config.json (mistral's lists two EOS ids, as Llama 3 and Qwen instruct models do).
llama/lora and qwen2/lora are PEFT adapters (rank 4, alpha 8, all seven projections) whose B is
random, not zero, so that they change the logits.

check_hf_export.py (beside this script) is the other direction: it loads what HfExportTest exported
with transformers and peft and compares their logits with whale's.

golden.json, per model: prompts (text and token ids), last-position logits of each prompt alone,
greedy continuations (new token ids, stopping at EOS like generate), and for a fixed right-padded
SFT batch the loss on completion tokens only and each parameter's gradient L2 norm; for the LoRA
adapters the same logits, loss and LoRA-parameter gradient norms with the adapter applied.
"""
import json
import os
import shutil

import peft
import safetensors.torch
import tokenizers
import torch
import transformers
from tokenizers import decoders, models, pre_tokenizers, processors, trainers

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "resources", "hf")
VOCAB = 384
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHATML = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content']"
    " + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n'"
    " }}{% endif %}"
)
CORPUS = [
    "What is 17 + 25? The answer is 42.",
    "Question: who wrote the book? Answer: the author wrote it in 1999.",
    "The quick brown fox jumps over the lazy dog. Numbers: 0 1 2 3 4 5 6 7 8 9.",
    "e2e4 e7e5 g1f3 b8c6 f1b5 a7a6 b5a4 g8f6 e1g1 f8e7",
    "def add(a, b):\n    return a + b\n",
    "Search the corpus, read the passage, then answer with one short phrase.",
    "Café, naïve, straße, 東京, emoji 🙂 and tabs\tare bytes too.",
] * 20
PROMPTS = [
    "What is 3 + 4?",
    "The quick brown",
    "Question: who wrote the book? Answer:",
    "e2e4 e7e5 g1f3",
]
SFT = [
    ("What is 17 + 25?", " 42\n"),
    ("Question: who wrote it? Answer:", " the author\n"),
    ("e2e4", " e7e5 g1f3 b8c6\n"),
]
GREEDY_NEW = 12
LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def train_tokenizer():
    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB, special_tokens=SPECIALS, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(CORPUS, trainer)
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>", bos_token=None
    )
    fast.chat_template = CHATML
    return fast


def configs(tok):
    eos = tok.convert_tokens_to_ids("<|im_end|>")
    pad = tok.convert_tokens_to_ids("<|endoftext|>")
    common = dict(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, max_position_embeddings=256, rms_norm_eps=1e-6,
        initializer_range=0.2, eos_token_id=eos, pad_token_id=pad, bos_token_id=None,
    )
    return {
        "llama": transformers.LlamaConfig(
            num_key_value_heads=2, tie_word_embeddings=False, rope_theta=10000.0, **common),
        "llama3": transformers.LlamaConfig(
            num_key_value_heads=1, tie_word_embeddings=True, rope_theta=500000.0,
            rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                          "high_freq_factor": 4.0, "original_max_position_embeddings": 64},
            **common),
        "qwen2": transformers.Qwen2Config(
            num_key_value_heads=2, tie_word_embeddings=True, rope_theta=1000000.0,
            use_sliding_window=False, **common),
        "qwen3": transformers.Qwen3Config(
            num_key_value_heads=2, head_dim=24, tie_word_embeddings=False, rope_theta=1000000.0,
            use_sliding_window=False, **common),
        "mistral": transformers.MistralConfig(
            num_key_value_heads=2, tie_word_embeddings=False, rope_theta=10000.0,
            sliding_window=None, **common),
    }, eos, pad


def sft_batch(tok, pad):
    """Right-padded inputs, attention mask and labels (-100 on prompt and padding)."""
    rows = []
    for prompt, completion in SFT:
        p = tok(prompt, add_special_tokens=False)["input_ids"]
        c = tok(completion, add_special_tokens=False)["input_ids"]
        rows.append((p, c))
    width = max(len(p) + len(c) for p, c in rows)
    ids, mask, labels = [], [], []
    for p, c in rows:
        seq = p + c
        n = len(seq)
        ids.append(seq + [pad] * (width - n))
        mask.append([1] * n + [0] * (width - n))
        labels.append([-100] * len(p) + c + [-100] * (width - n))
    return rows, torch.tensor(ids), torch.tensor(mask), torch.tensor(labels)


def masked_loss(model, ids, mask, labels):
    logits = model(input_ids=ids, attention_mask=mask).logits.float()
    # logits at t predict token t+1: shift, then average over completion targets only
    logp = torch.log_softmax(logits[:, :-1], dim=-1)
    target = labels[:, 1:]
    keep = target != -100
    picked = logp.gather(-1, target.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    return -(picked * keep).sum() / keep.sum()


def grad_norms(model, only_trainable=True):
    return {n: p.grad.norm().item() for n, p in model.named_parameters()
            if p.grad is not None and (p.requires_grad or not only_trainable)}


def last_logits(model, ids):
    with torch.no_grad():
        return model(input_ids=torch.tensor([ids])).logits[0, -1].float().tolist()


def greedy(model, ids, eos):
    with torch.no_grad():
        out = model.generate(
            input_ids=torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long),
            do_sample=False, max_new_tokens=GREEDY_NEW, eos_token_id=eos, pad_token_id=eos[0])
    return out[0, len(ids):].tolist()


def main():
    if os.path.isdir(ROOT):
        shutil.rmtree(ROOT)
    os.makedirs(ROOT)
    tok = train_tokenizer()
    cfgs, eos, pad = configs(tok)
    golden = {"versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                           "peft": peft.__version__, "tokenizers": tokenizers.__version__},
              "eosId": eos, "padId": pad, "models": {}}
    for seed, (name, cfg) in enumerate(cfgs.items()):
        torch.manual_seed(1000 + seed)
        cfg._attn_implementation = "eager"
        model = transformers.AutoModelForCausalLM.from_config(cfg, attn_implementation="eager")
        with torch.no_grad():
            for n, p in model.named_parameters():
                if "norm" in n:  # norms start at 1 in HF; perturb so a norm wired wrongly shows
                    p.add_(torch.randn_like(p) * 0.1)
                if n.endswith(".bias"):
                    p.normal_(0, 0.2)
        model.eval()
        out = os.path.join(ROOT, name)
        eos_ids = [eos]
        if name == "mistral":
            eos_ids = [eos, pad]
            model.to(torch.bfloat16)
            model.generation_config.eos_token_id = eos_ids
            model.save_pretrained(out, max_shard_size="150KB")
            # goldens from the checkpoint as a user loads it in float32 (bf16 -> f32 is exact);
            # model.to(float32) would keep RoPE's inv_freq buffer rounded to bf16
            model = transformers.AutoModelForCausalLM.from_pretrained(
                out, dtype=torch.float32, attn_implementation="eager")
            model.eval()
        else:
            model.generation_config.eos_token_id = eos
            model.save_pretrained(out)
        tok.save_pretrained(out)
        prompts = [{"text": t, "ids": tok(t, add_special_tokens=False)["input_ids"]} for t in PROMPTS]
        g = {"prompts": prompts, "eos": eos_ids,
             "lastLogits": [last_logits(model, p["ids"]) for p in prompts],
             "greedy": [greedy(model, p["ids"], eos_ids) for p in prompts]}
        rows, ids, mask, labels = sft_batch(tok, pad)
        g["sft"] = {"rows": [{"prompt": p, "completion": c} for p, c in rows]}
        model.train()
        model.zero_grad()
        loss = masked_loss(model, ids, mask, labels)
        loss.backward()
        g["sft"]["loss"] = loss.item()
        g["sft"]["gradNorms"] = grad_norms(model)
        model.zero_grad()
        model.eval()
        if name in ("llama", "qwen2"):
            g["lora"] = lora(model, out, prompts, ids, mask, labels, seed)
        golden["models"][name] = g
        print(name, "params", sum(p.numel() for p in model.parameters()), "loss", g["sft"]["loss"])
    with open(os.path.join(ROOT, "golden.json"), "w") as f:
        json.dump(golden, f, indent=1)


def lora(model, out, prompts, ids, mask, labels, seed):
    torch.manual_seed(2000 + seed)
    cfg = peft.LoraConfig(r=4, lora_alpha=8, lora_dropout=0.0, target_modules=LORA_TARGETS,
                          task_type="CAUSAL_LM")
    pm = peft.get_peft_model(model, cfg)
    with torch.no_grad():
        for n, p in pm.named_parameters():
            if "lora_B" in n:  # peft starts B at zero (a no-op adapter); random B tests the wiring
                p.normal_(0, 0.1)
    pm.save_pretrained(os.path.join(out, "lora"))
    os.remove(os.path.join(out, "lora", "README.md"))  # peft's empty model card
    path = os.path.join(out, "lora", "adapter_config.json")
    with open(path) as f:
        adapter = json.load(f)
    adapter["target_modules"] = sorted(adapter["target_modules"])  # a set: hash order varies
    with open(path, "w") as f:
        json.dump(adapter, f, indent=2, sort_keys=True)
    pm.eval()
    g = {"rank": 4, "alpha": 8, "targets": LORA_TARGETS,
         "lastLogits": [last_logits(pm, p["ids"]) for p in prompts]}
    pm.train()
    pm.zero_grad()
    loss = masked_loss(pm, ids, mask, labels)
    loss.backward()
    g["loss"] = loss.item()
    # names as in adapter_model.safetensors: base_model.model.<module>.lora_A.weight
    g["gradNorms"] = {n.replace(".default", ""): p.grad.norm().item()
                      for n, p in pm.named_parameters() if p.requires_grad}
    pm.zero_grad()
    pm.unload()  # give the base model back unchanged for the next steps
    return g


if __name__ == "__main__":
    main()
