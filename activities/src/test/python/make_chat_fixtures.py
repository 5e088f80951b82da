#!/usr/bin/env python3
"""Builds the chat-template fixtures under activities/src/test/resources/hf/chat/ and the golden
renderings whale.chat.ChatTemplateTest compares against, byte for byte. The Java tests need no
Python.

Regenerate (no torch needed):
    python3 -m venv /tmp/venv-chat
    /tmp/venv-chat/bin/pip install transformers jinja2
    /tmp/venv-chat/bin/python activities/src/test/python/make_chat_fixtures.py
then commit activities/src/test/resources/hf/chat/. golden.json records the transformers version.

Templates (each a directory with tokenizer.json from the qwen2 fixture and a tokenizer_config.json):
  chatml       the fixtures' ChatML template, in chat_template.jinja
  qwen2.5      Qwen2.5-Instruct's template (tools in <tools>, Hermes <tool_call> blocks, tool
               results as <tool_response> in a user turn), in tokenizer_config.json's chat_template
  generation   ChatML with {% generation %} around each assistant turn (for assistant masks)

golden.json, per case: the template, the messages, the tools, add_generation_prompt, the text of
apply_chat_template(tokenize=False), its token ids, and for the generation template the
assistant_masks of apply_chat_template(return_assistant_tokens_mask=True); with torch installed
(pip install torch), also the qwen2 fixture's SFT loss on that conversation with labels masked by
assistant_masks, and each parameter's gradient L2 norm ("sft").
"""
import json
import os
import shutil

import transformers

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "resources", "hf")
OUT = os.path.join(ROOT, "chat")

CHATML = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content']"
    " + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n'"
    " }}{% endif %}"
)

# Qwen2.5-Instruct's chat template (tokenizer_config.json of Qwen/Qwen2.5-*-Instruct)
QWEN25 = r"""{%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages[0]['role'] == 'system' %}
        {{- messages[0]['content'] }}
    {%- else %}
        {{- 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.' }}
    {%- endif %}
    {{- "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>" }}
    {%- for tool in tools %}
        {{- "\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n" }}
{%- else %}
    {%- if messages[0]['role'] == 'system' %}
        {{- '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>\n' }}
    {%- else %}
        {{- '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n' }}
    {%- endif %}
{%- endif %}
{%- for message in messages %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) or (message.role == "assistant" and not message.tool_calls) %}
        {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>' + '\n' }}
    {%- elif message.role == "assistant" %}
        {{- '<|im_start|>' + message.role }}
        {%- if message.content %}
            {{- '\n' + message.content }}
        {%- endif %}
        {%- for tool_call in message.tool_calls %}
            {%- if tool_call.function is defined %}
                {%- set tool_call = tool_call.function %}
            {%- endif %}
            {{- '\n<tool_call>\n{"name": "' }}
            {{- tool_call.name }}
            {{- '", "arguments": ' }}
            {{- tool_call.arguments | tojson }}
            {{- '}\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\n' }}
    {%- elif message.role == "tool" %}
        {%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\n<tool_response>\n' }}
        {{- message.content }}
        {{- '\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
{%- endif %}
"""

# ChatML whose assistant turns (their end-of-turn token included) are marked for the loss
GENERATION = (
    "{%- for message in messages %}"
    "{%- if message['role'] == 'assistant' %}"
    "{{- '<|im_start|>assistant\n' }}{% generation %}{{- message['content'] + '<|im_end|>' }}{% endgeneration %}{{- '\n' }}"
    "{%- else %}"
    "{{- '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n' }}"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{%- endif %}"
)

TOOLS = [
    {"type": "function", "function": {
        "name": "calculator", "description": "Evaluates an arithmetic expression such as 12 * (3 + 4).",
        "parameters": {"type": "object", "properties": {
            "expression": {"type": "string", "description": "the expression"}},
            "required": ["expression"]}}},
    {"type": "function", "function": {
        "name": "search", "description": "Searches the corpus; returns the best passages.",
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string"}, "k": {"type": "integer", "minimum": 1, "maximum": 5},
            "exact": {"type": "boolean", "default": False}, "weight": {"type": "number", "default": 0.25},
            "fields": {"type": "array", "items": {"type": "string", "enum": ["title", "text"]}},
            "lang": {"type": ["string", "null"], "default": None}},
            "required": ["query"]}}},
]

SYSTEM = {"role": "system", "content": "You solve problems step by step. Answer with a number."}
USER = {"role": "user", "content": "Tom has 12 apples. He buys 7 more.\nHow many does he have?"}
TOOL_TURNS = [
    SYSTEM, USER,
    {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {
        "name": "calculator", "arguments": {"expression": "12 + 7"}}}]},
    {"role": "tool", "content": "19"},
    {"role": "assistant", "content": "He has 19 apples."},
    {"role": "user", "content": "And \"Café\" in 東京? Use both tools \\ at once 🙂"},
    {"role": "assistant", "content": "Let me look.", "tool_calls": [
        {"type": "function", "function": {"name": "search", "arguments": {
            "query": "Café 東京", "k": 2, "exact": True, "weight": 1.5e-05, "fields": ["title", "text"],
            "lang": None, "big": 1e+20, "neg": -0.5, "tab": "a\tb\u0001"}}},
        {"type": "function", "function": {"name": "calculator", "arguments": {"expression": "2 ** 10"}}}]},
    {"role": "tool", "content": "[1] Café Tokyo: a café in 東京."},
    {"role": "tool", "content": "1024"},
]

CASES = [
    ("chatml", [USER], None, True),
    ("chatml", [SYSTEM, USER, {"role": "assistant", "content": "19"}], None, False),
    ("qwen2.5", [USER], None, True),
    ("qwen2.5", [SYSTEM, USER], TOOLS, True),
    ("qwen2.5", TOOL_TURNS, TOOLS, True),
    ("qwen2.5", TOOL_TURNS[1:5], None, False),
    ("generation", [SYSTEM, USER, {"role": "assistant", "content": "Let me add: 12 + 7 = 19."},
                    {"role": "user", "content": "Sure?"}, {"role": "assistant", "content": "Yes, 19."}],
     None, False),
]


def write_dirs():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    for name, template, in_config in [("chatml", CHATML, False), ("qwen2.5", QWEN25, True),
                                      ("generation", GENERATION, False)]:
        d = os.path.join(OUT, name)
        os.makedirs(d)
        shutil.copy(os.path.join(ROOT, "qwen2", "tokenizer.json"), d)
        config = {"bos_token": None, "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>",
                  "tokenizer_class": "PreTrainedTokenizerFast"}
        if in_config:
            config["chat_template"] = template
        else:
            with open(os.path.join(d, "chat_template.jinja"), "w") as f:
                f.write(template)
        with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
            json.dump(config, f, indent=2, ensure_ascii=False)


def masked_sft(torch, case):
    """One conversation's loss on the assistant tokens only, and the gradients, on the qwen2 fixture."""
    model = transformers.AutoModelForCausalLM.from_pretrained(os.path.join(ROOT, "qwen2"),
                                                              dtype=torch.float32)
    ids = torch.tensor([case["tokens"]])
    labels = ids.clone()
    labels[0, torch.tensor(case["assistant_masks"]) == 0] = -100
    loss = model(input_ids=ids, labels=labels).loss
    loss.backward()
    norms = {n: p.grad.norm().item() for n, p in model.named_parameters() if p.grad is not None}
    return {"model": "qwen2", "case": 6, "loss": loss.item(), "gradNorms": norms}


def main():
    write_dirs()
    cases = []
    for name, messages, tools, gen in CASES:
        tok = transformers.AutoTokenizer.from_pretrained(os.path.join(OUT, name))
        text = tok.apply_chat_template(messages, tools=tools, add_generation_prompt=gen, tokenize=False)
        case = {"template": name, "messages": messages, "tools": tools, "add_generation_prompt": gen,
                "text": text, "tokens": tok(text, add_special_tokens=False)["input_ids"]}
        if name == "generation":
            out = tok.apply_chat_template(messages, add_generation_prompt=gen, tokenize=True,
                                          return_dict=True, return_assistant_tokens_mask=True)
            assert out["input_ids"] == case["tokens"]
            case["assistant_masks"] = out["assistant_masks"]
        cases.append(case)
    golden = {"transformers": transformers.__version__, "cases": cases}
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        golden["sft"] = masked_sft(torch, cases[6])
    with open(os.path.join(OUT, "golden.json"), "w") as f:
        json.dump(golden, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print("wrote", len(cases), "cases to", OUT)


if __name__ == "__main__":
    main()
