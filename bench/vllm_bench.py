#!/usr/bin/env python3
"""vLLM alone, for bench/vllm-bench.sh: the batch smollm2_bench.py wrote (64 chat-rendered prompts as
token ids) sent to a running server's /v1/completions all at once, greedy, 64 new tokens at most,
the same fields whale's VllmGenerator sends (token-id prompt, seed, return_token_ids). Prints new
tokens/s, best of REPEATS after one warm-up.
    python bench/vllm_bench.py URL MODEL_NAME IN.json
"""
import asyncio
import json
import os
import sys
import time

import httpx

NEW, REPEATS = 64, int(os.environ.get("REPEATS", "3"))


async def once(url, model, prompts):
    async with httpx.AsyncClient(timeout=600) as client:
        async def one(i, ids):
            r = await client.post(url + "/v1/completions", json={
                "model": model, "prompt": ids, "max_tokens": NEW, "temperature": 0.0, "seed": i,
                "return_token_ids": True})
            r.raise_for_status()
            return len(r.json()["choices"][0]["token_ids"])
        return sum(await asyncio.gather(*(one(i, p) for i, p in enumerate(prompts))))


def main(url, model, path):
    prompts = json.load(open(path))["prompts"]
    asyncio.run(once(url, model, prompts))
    best, tokens = None, 0
    for _ in range(REPEATS):
        t = time.perf_counter()
        tokens = asyncio.run(once(url, model, prompts))
        s = time.perf_counter() - t
        best = s if best is None else min(best, s)
    print(f"vLLM alone: new_tok_s={tokens / best:.1f} ({best:.2f} s, {tokens} tokens, {len(prompts)} requests)")


if __name__ == "__main__":
    main(*sys.argv[1:4])
