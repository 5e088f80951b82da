#!/usr/bin/env python3
"""Builds activities/src/test/resources/gguf/golden.json, the reference numbers the Java tests of
whale.model.gguf (GGUF reader, dequantizer, importer) compare against. The Java tests need no Python
and no weights file: they write their own tiny GGUF files from these numbers.

Regenerate (CPU is enough):
    python3 -m venv /tmp/venv-gguf
    /tmp/venv-gguf/bin/pip install gguf numpy torch transformers tokenizers
    /tmp/venv-gguf/bin/python activities/src/test/python/make_gguf_fixtures.py
then commit activities/src/test/resources/gguf/golden.json. Everything is seeded; golden.json records
the library versions it was made with.

golden.json holds:
  dequant    per ggml type: raw GGUF tensor bytes (base64) and gguf-py's dequantize of them as
             float32 (base64, little-endian), which Java must reproduce bit for bit. The bytes are
             gguf-py's quantize of random data where gguf-py can quantize that type, followed by
             blocks of random bytes whose float16 scales are set to random finite values (every
             bit pattern of the packed integers is then exercised).
  tiny       a tiny Llama (the tokenizer below, hidden 64, 2 layers, 4 heads / 2 KV heads):
               q_rows/k_rows  llama.cpp's LlamaModel.permute applied to row numbers: GGUF row i of
                              attn_q/attn_k holds Hugging Face row q_rows[i]/k_rows[i];
               tokenizer      the GGUF tokenizer.ggml.* values of a byte-level BPE trained here,
                              as llama.cpp's convert_hf_to_gguf.py writes them (tokens by id, token
                              types 1 normal / 3 control / 4 user-defined, merges "a b");
               encodings      per llama.cpp pre-tokenizer name (smollm, gpt-2, llama-bpe), the ids
                              Hugging Face tokenizers gives for each text when loading the original
                              tokenizer.json of that family (SmolLM2, GPT-2, Llama 3 layouts);
               logits_*       transformers' last-position logits for prompt_ids, with the weights
                              of weight() below, tied and untied head.

weight(name, n, scale) is the same formula in Java (GgufFixtures.weight): a 32-bit integer hash of
the element index and crc32(name), its top 16 bits mapped to (-1, 1) and scaled by a power of two,
so every value is exactly representable in float32 on both sides.
"""
import base64
import json
import os
import zlib

import gguf
import numpy as np
import tokenizers
import torch
import transformers
from gguf import GGMLQuantizationType as T
from gguf import quants
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "resources", "gguf", "golden.json")
rng = np.random.default_rng(20261203)


def b64(a: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(a).tobytes()).decode()


# ---------------------------------------------------------------- dequantization
F16_FIELDS = {  # byte offsets of the float16 scales inside one block
    T.Q4_0: [0], T.Q4_1: [0, 2], T.Q5_0: [0], T.Q5_1: [0, 2], T.Q8_0: [0],
    T.Q2_K: [80, 82], T.Q3_K: [108], T.Q4_K: [0, 2], T.Q5_K: [0, 2], T.Q6_K: [208],
}


def random_blocks(qtype, n_blocks):
    block_size, type_size = gguf.GGML_QUANT_SIZES[qtype]
    raw = rng.integers(0, 256, size=(n_blocks, type_size), dtype=np.uint8)
    for at in F16_FIELDS[qtype]:
        scales = (rng.standard_normal(n_blocks) * 0.05).astype(np.float16)
        scales[0] = np.float16(0)  # a zero scale
        if n_blocks > 1:
            scales[1] = np.float16(3e-6)  # a subnormal scale
        raw[:, at:at + 2] = scales.view(np.uint8).reshape(n_blocks, 2)
    return raw.reshape(-1)


def dequant_cases():
    cases = []
    x = (rng.standard_normal(512) * 0.1).astype(np.float32)
    cases.append((T.F32, x.view(np.uint8)))
    h = rng.integers(0, 1 << 16, size=512, dtype=np.uint16)  # every half: subnormals, inf, NaN
    cases.append((T.F16, h.view(np.uint8)))
    cases.append((T.BF16, rng.integers(0, 1 << 16, size=512, dtype=np.uint16).view(np.uint8)))
    for qtype in F16_FIELDS:
        block_size, _ = gguf.GGML_QUANT_SIZES[qtype]
        parts = []
        try:  # real quantized data where gguf-py can quantize this type
            data = (rng.standard_normal(block_size * 2) * 0.1).astype(np.float32)
            parts.append(quants.quantize(data.reshape(1, -1), qtype).reshape(-1))
        except NotImplementedError:
            pass
        parts.append(random_blocks(qtype, 3 if block_size == 256 else 6))
        cases.append((qtype, np.concatenate(parts)))
    out = []
    for qtype, raw in cases:
        values = quants.dequantize(raw.reshape(1, -1), qtype).astype(np.float32, copy=False).reshape(-1)
        out.append({"type": qtype.name, "n": int(values.size), "bytes": b64(raw), "values": b64(values)})
    return out


# ---------------------------------------------------------------- tokenizer
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
USER_DEFINED = "[city]"  # an added token that is not special: GGUF token type 4
CORPUS = [
    "What is 17 + 25? The answer is 42.",
    "The capital of France is Paris. The capital of Japan is Tokyo (東京).",
    "The quick brown fox jumps over the lazy dog. Numbers: 0 1 2 3 4 5 6 7 8 9 and 2024.",
    "In 2024 and 2025 there were 1234 and 567 and 89 of them, 2024 again.",
    "def add(a, b):\n    return a + b\n",
    "Café, naïve, straße, emoji 🙂 and tabs\tare bytes too. I'm sure they'll say it's fine.",
] * 30
TEXTS = [
    "The capital of France is",
    "In 2024, 1234567 + 89 = 1234656.",
    "Café naïve straße 東京 🙂 résumé",
    "  leading spaces\tand tabs\n\nnew lines  ",
    "I'm sure they'll say it's fine, don't you?",
    "<|im_start|>user\nWhere is [city]?<|im_end|>\n<|im_start|>assistant\n",
    "Ωmega, Россия, مرحبا, 한국어 👍🏽 and ½ ² ٣",
]
LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                r"|\s*[\r\n]+|\s+(?!\S)|\s+")
CHATML = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content']"
          " + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")


def byte_level(prefix, trim, regex):
    return {"type": "ByteLevel", "add_prefix_space": prefix, "trim_offsets": trim, "use_regex": regex}


def family(base: dict, pre: str) -> dict:
    """The original tokenizer.json layout of each family llama.cpp names by its pre-tokenizer."""
    t = json.loads(json.dumps(base))
    if pre == "smollm":  # HuggingFaceTB/SmolLM2-*: digits one by one, then GPT-2's ByteLevel
        t["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
            {"type": "Digits", "individual_digits": True}, byte_level(False, True, True)]}
    elif pre == "gpt-2":
        t["pre_tokenizer"] = byte_level(False, True, True)
    else:  # llama-bpe, Meta-Llama-3: split regex, ByteLevel without regex, whole words first, BOS added
        t["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": LLAMA3_REGEX}, "behavior": "Isolated", "invert": False},
            byte_level(False, True, False)]}
        t["model"]["ignore_merges"] = True
        t["post_processor"] = {"type": "Sequence", "processors": [
            byte_level(True, False, True),
            {"type": "TemplateProcessing",
             "single": [{"SpecialToken": {"id": "<|im_start|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
             "pair": [{"SpecialToken": {"id": "<|im_start|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                      {"SpecialToken": {"id": "<|im_start|>", "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
             "special_tokens": {"<|im_start|>": {"id": "<|im_start|>", "ids": [1], "tokens": ["<|im_start|>"]}}}]}
    return t


def make_tokenizer():
    tok = Tokenizer(models.BPE())
    # trained on GPT-2's split, so that merges of digits exist: smollm (digits one by one), gpt-2 and
    # llama-bpe (up to 3 digits) then tokenize numbers differently
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(vocab_size=420, special_tokens=SPECIALS, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(CORPUS, trainer)
    tok.add_tokens([tokenizers.AddedToken(USER_DEFINED, special=False, normalized=True)])
    base = json.loads(tok.to_str())
    # the GGUF side, as convert_hf_to_gguf.py's get_vocab_base writes it
    vocab = tok.get_vocab(with_added_tokens=True)
    by_id = {i: t for t, i in vocab.items()}
    added = {a["id"]: a for a in base["added_tokens"]}
    tokens, types = [], []
    for i in range(len(by_id)):
        tokens.append(by_id[i])
        types.append(1 if i not in added else (3 if added[i]["special"] else 4))
    merges = [" ".join(m) if isinstance(m, list) else m for m in base["model"]["merges"]]
    encodings = {}
    for pre in ("smollm", "gpt-2", "llama-bpe"):
        t = Tokenizer.from_str(json.dumps(family(base, pre)))
        encodings[pre] = {"add_bos": pre == "llama-bpe",
                          "texts": [{"text": s, "ids": t.encode(s).ids} for s in TEXTS]}
    gguf_tok = {"model": "gpt2", "tokens": tokens, "token_type": types, "merges": merges,
                "bos": 1, "eos": 2, "pad": 0, "unk": 0, "chat_template": CHATML}
    return gguf_tok, encodings


# ---------------------------------------------------------------- tiny model
def weight(name: str, n: int, scale: float) -> np.ndarray:
    """The hash formula of the module docstring (GgufFixtures.weight in Java)."""
    seed = zlib.crc32(name.encode())
    i = np.arange(n, dtype=np.uint64)
    h = ((i + np.uint64(seed)) * np.uint64(0x9E3779B1)) & np.uint64(0xFFFFFFFF)
    h ^= h >> np.uint64(15)
    h = (h * np.uint64(0x85EBCA77)) & np.uint64(0xFFFFFFFF)
    h ^= h >> np.uint64(13)
    u = (h >> np.uint64(16)).astype(np.int64) - 32768
    return (u.astype(np.float64) / 32768.0 * scale).astype(np.float32)


def permutation(rows, heads):  # convert_hf_to_gguf.py LlamaModel.permute, on row numbers
    return np.arange(rows).reshape(heads, 2, rows // heads // 2).swapaxes(1, 2).reshape(rows).tolist()


def tiny(vocab_size, prompt_ids):
    dims = dict(hidden=64, layers=2, heads=4, kv_heads=2, ffn=128, context=256, rope_theta=50000.0, eps=1e-5)
    head_dim = dims["hidden"] // dims["heads"]
    out = dict(dims, vocab=vocab_size, q_rows=permutation(dims["hidden"], dims["heads"]),
               k_rows=permutation(dims["kv_heads"] * head_dim, dims["kv_heads"]), prompt_ids=prompt_ids)
    for tied in (True, False):
        cfg = transformers.LlamaConfig(
            vocab_size=vocab_size, hidden_size=dims["hidden"], intermediate_size=dims["ffn"],
            num_hidden_layers=dims["layers"], num_attention_heads=dims["heads"],
            num_key_value_heads=dims["kv_heads"], head_dim=head_dim,
            max_position_embeddings=dims["context"], rms_norm_eps=dims["eps"], rope_theta=dims["rope_theta"],
            tie_word_embeddings=tied, hidden_act="silu")
        model = transformers.LlamaForCausalLM(cfg).eval()
        rope = getattr(cfg, "rope_parameters", None) or {"rope_theta": cfg.rope_theta}
        assert rope["rope_theta"] == dims["rope_theta"], rope
        state = {}
        for name, p in model.state_dict().items():
            if tied and name == "lm_head.weight":
                continue
            scale = 0.25 if name.endswith("norm.weight") else (0.5 if "embed" in name or "lm_head" in name else 0.125)
            w = weight(name, p.numel(), scale)
            if name.endswith("norm.weight"):
                w = (w + np.float32(1)).astype(np.float32)
            state[name] = torch.from_numpy(w.reshape(tuple(p.shape)))
        missing, unexpected = model.load_state_dict(state, strict=False)
        assert not unexpected and set(missing) <= {"lm_head.weight"}, (missing, unexpected)
        if tied:
            model.tie_weights()
        with torch.no_grad():
            logits = model(torch.tensor([prompt_ids])).logits[0, -1]
        out["logits_tied" if tied else "logits_untied"] = [float(v) for v in logits]
    return out


def main():
    torch.manual_seed(0)
    gguf_tok, encodings = make_tokenizer()
    golden = {
        "versions": {"gguf": gguf.__version__ if hasattr(gguf, "__version__") else _version("gguf"),
                     "numpy": np.__version__, "tokenizers": tokenizers.__version__,
                     "transformers": transformers.__version__, "torch": torch.__version__},
        "dequant": dequant_cases(),
        "tiny": tiny(len(gguf_tok["tokens"]), encodings["smollm"]["texts"][0]["ids"]),
    }
    golden["tiny"]["tokenizer"] = gguf_tok
    golden["tiny"]["encodings"] = encodings
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(golden, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    print(OUT, os.path.getsize(OUT), "bytes")


def _version(dist):
    from importlib.metadata import version
    return version(dist)


if __name__ == "__main__":
    main()
