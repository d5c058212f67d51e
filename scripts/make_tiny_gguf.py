#!/usr/bin/env python3
"""Writes a tiny random-weight Qwen2 GGUF for protocol-level tests of llama-server.

The weights are random (seeded, so the file is byte-for-byte reproducible): the model answers
gibberish by construction. It exists so that a real llama-server can load a model and serve
/v1/chat/completions (plain, streamed, grammar-constrained) and /v1/embeddings on a machine
without any pretrained weights. Never use it to judge answer quality.

The tokenizer is real: every tokenizer.* key (tokens, token types, merges, special token ids,
chat template) is copied from a vocab-only GGUF that ships with llama.cpp
(models/ggml-vocab-qwen2.gguf), so prompts tokenize exactly as with a real Qwen2 model.

Needs numpy and llama.cpp's own gguf-py (put <llama.cpp>/gguf-py on PYTHONPATH).

Usage:
  make_tiny_gguf.py --vocab models/ggml-vocab-qwen2.gguf --out tiny-qwen2.gguf
                    [--layers 2] [--embd 64] [--heads 4] [--kv-heads 2] [--ff 128]
                    [--ctx 32768] [--seed 20261122] [--stop-bias 14]
                    [--chat-template-file FILE]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys

import numpy as np

try:
    import gguf
except ImportError as e:  # pragma: no cover - environment problem, reported plainly
    sys.exit(f"make_tiny_gguf: cannot import gguf ({e}); put <llama.cpp>/gguf-py on PYTHONPATH")

ARCH = "qwen2"


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Write a tiny random-weight Qwen2 GGUF (protocol tests only).")
    p.add_argument("--vocab", required=True, help="vocab-only GGUF whose tokenizer.* keys are copied")
    p.add_argument("--out", required=True, help="output GGUF path (written atomically)")
    p.add_argument("--layers", type=int, default=2, help="transformer blocks (default 2)")
    p.add_argument("--embd", type=int, default=64, help="hidden size (default 64)")
    p.add_argument("--heads", type=int, default=4, help="attention heads (default 4)")
    p.add_argument("--kv-heads", type=int, default=2, help="key/value heads, divides --heads (default 2)")
    p.add_argument("--ff", type=int, default=128, help="feed-forward size (default 128)")
    p.add_argument("--ctx", type=int, default=32768, help="trained context length written to the file")
    p.add_argument("--seed", type=int, default=20261122, help="numpy RNG seed (default 20261122)")
    p.add_argument("--chat-template-file", help="replace the vocab's chat template with this Jinja file")
    p.add_argument("--stop-bias", type=float, default=14.0,
                   help="logit bias of the end-of-turn token, so free text ends after a few dozen "
                        "tokens instead of always running to max_tokens (default 14; 0: none)")
    a = p.parse_args(argv)
    if a.layers < 1 or a.embd < 8 or a.ff < 8 or a.ctx < 64:
        p.error("--layers >= 1, --embd >= 8, --ff >= 8 and --ctx >= 64 are required")
    if a.heads < 1 or a.embd % a.heads != 0 or (a.embd // a.heads) % 2 != 0:
        p.error("--heads must divide --embd into an even head size (RoPE rotates pairs)")
    if a.kv_heads < 1 or a.heads % a.kv_heads != 0:
        p.error("--kv-heads must divide --heads")
    return a


def copy_tokenizer(reader: gguf.GGUFReader, writer: gguf.GGUFWriter,
                   template: str | None) -> tuple[int, list[str]]:
    """Copies every tokenizer.* key; returns the vocabulary size and the tokens."""
    n_vocab = 0
    tokens: list[str] = []
    for name, field in reader.fields.items():
        if not name.startswith("tokenizer."):
            continue
        if name == "tokenizer.chat_template" and template is not None:
            continue
        vtype = field.types[0]
        sub_type = field.types[1] if vtype == gguf.GGUFValueType.ARRAY else None
        if vtype == gguf.GGUFValueType.ARRAY and len(field.types) > 2:
            sys.exit(f"make_tiny_gguf: nested array key {name} is not supported")
        value = field.contents()
        writer.add_key_value(name, value, vtype, sub_type)
        if name == "tokenizer.ggml.tokens":
            tokens = value
            n_vocab = len(value)
    if template is not None:
        writer.add_chat_template(template)
    if n_vocab == 0:
        sys.exit("make_tiny_gguf: the vocab file has no tokenizer.ggml.tokens")
    return n_vocab, tokens


def main(argv: list[str]) -> int:
    a = parse_args(argv)
    reader = gguf.GGUFReader(a.vocab)
    arch_field = reader.fields.get("general.architecture")
    if arch_field is None or arch_field.contents() != ARCH:
        sys.exit(f"make_tiny_gguf: {a.vocab} is not a {ARCH} vocab file")
    template = None
    if a.chat_template_file:
        with open(a.chat_template_file, encoding="utf-8") as f:
            template = f.read()

    tmp = a.out + ".tmp"
    w = gguf.GGUFWriter(tmp, ARCH)
    w.add_name("schedmate tiny random qwen2 (protocol tests only)")
    w.add_description("Random weights, real Qwen2 tokenizer; answers are gibberish by construction.")
    w.add_block_count(a.layers)
    w.add_context_length(a.ctx)
    w.add_embedding_length(a.embd)
    w.add_feed_forward_length(a.ff)
    w.add_head_count(a.heads)
    w.add_head_count_kv(a.kv_heads)
    w.add_rope_freq_base(1000000.0)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    n_vocab, tokens = copy_tokenizer(reader, w, template)

    rng = np.random.default_rng(a.seed)
    head = a.embd // a.heads
    kv = a.kv_heads * head

    def normal(*shape: int, scale: float = 0.02) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    # numpy shape is (rows, cols) = ggml's (ne1, ne0): a weight mapping in -> out is (out, in).
    # The output head is tied to the token embedding (Qwen2 allows an absent output.weight).
    w.add_tensor("token_embd.weight", normal(n_vocab, a.embd, scale=1.0).astype(np.float16))
    w.add_tensor("output_norm.weight", np.ones(a.embd, dtype=np.float32))
    # Without help a random model never picks the end-of-turn token and every answer runs to
    # max_tokens. A logit bias of 14 on <|im_end|> makes it win now and then (measured: answers
    # of 3-300 tokens, most under 100), as a real chat model's answers end. Grammar-constrained
    # output is unaffected: the grammar decides when the end is allowed.
    if a.stop_bias != 0:
        if "<|im_end|>" not in tokens:
            sys.exit("make_tiny_gguf: no <|im_end|> token to bias")
        bias = np.zeros(n_vocab, dtype=np.float32)
        bias[tokens.index("<|im_end|>")] = a.stop_bias
        w.add_tensor("output.bias", bias)
    for i in range(a.layers):
        b = f"blk.{i}."
        w.add_tensor(b + "attn_norm.weight", np.ones(a.embd, dtype=np.float32))
        w.add_tensor(b + "attn_q.weight", normal(a.embd, a.embd, scale=0.2))
        w.add_tensor(b + "attn_q.bias", normal(a.embd))
        w.add_tensor(b + "attn_k.weight", normal(kv, a.embd, scale=0.2))
        w.add_tensor(b + "attn_k.bias", normal(kv))
        w.add_tensor(b + "attn_v.weight", normal(kv, a.embd, scale=0.2))
        w.add_tensor(b + "attn_v.bias", normal(kv))
        w.add_tensor(b + "attn_output.weight", normal(a.embd, a.embd, scale=0.2))
        w.add_tensor(b + "ffn_norm.weight", np.ones(a.embd, dtype=np.float32))
        w.add_tensor(b + "ffn_gate.weight", normal(a.ff, a.embd, scale=0.2))
        w.add_tensor(b + "ffn_up.weight", normal(a.ff, a.embd, scale=0.2))
        w.add_tensor(b + "ffn_down.weight", normal(a.embd, a.ff, scale=0.2))

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    os.replace(tmp, a.out)

    digest = hashlib.sha256()
    with open(a.out, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    print(f"make_tiny_gguf: wrote {a.out} ({os.path.getsize(a.out)} bytes, {n_vocab} tokens, "
          f"{a.layers} layers x {a.embd} dims, seed {a.seed}) sha256 {digest.hexdigest()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
