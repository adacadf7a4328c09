#!/usr/bin/env python3
"""Trains small tokenizers offline and writes them, with the Python libraries' encodings of a list
of tricky strings, into tests/fixtures/tokenizers/ for the C++ tokenizer tests (tests/tokenizer/).

    /work/export-venv/bin/python samples/export/make_tokenizer_fixtures.py [OUT_DIR]

Every tokenizer is trained on the same small multilingual corpus written below (English, accents,
CJK, emoji, code, digits, whitespace runs, tabs and newlines):

  hf_bytelevel.json       Hugging Face BPE, Llama 3 style: Split(Llama 3 regex) + ByteLevel,
                          ByteLevel decoder, ignore_merges, merges as [a, b] pairs, BOS template.
  hf_bytelevel_str.json   the same model with merges as "a b" strings and no post-processor.
  hf_added.json           hf_bytelevel.json plus added tokens with lstrip/rstrip/single_word flags,
                          special and not.
  hf_variants.json        hf_bytelevel.json's vocabulary behind NFC and regex Replace normalizers,
                          every Split behaviour and ByteLevel with a prefix space.
  hf_gpt2.json            GPT-2/SmolLM style: Digits(individual) + ByteLevel(use_regex) pre-tokenizer.
  hf_metaspace.json       SentencePiece-style BPE: Metaspace(prepend first), byte_fallback <0xNN>,
                          Metaspace decoder, an <unk> token.
  hf_llama2.json          the same model written as Llama 2's tokenizer.json: Prepend + Replace
                          normalizer, no pre-tokenizer, Replace/ByteFallback/Fuse/Strip decoder.
  tiktoken.model          tiktoken ranks from hf_bytelevel's merges, read with ExecuTorch's Llama 3
                          special tokens (pytorch_tokenizers.TiktokenTokenizer).
  sp_bpe.model            sentencepiece BPE, byte_fallback, identity normalization.
  sp_small.model          sentencepiece BPE of 200 ids, no byte fallback (fits the LLM fixtures).
  sp_unigram.model        sentencepiece unigram, byte_fallback, identity normalization.
  expected.json           per file: for each string, the reference ids and the reference decode,
                          plus the versions of the libraries used.
"""
import base64
import json
import os
import sys

import sentencepiece as spm
import tokenizers
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "fixtures", "tokenizers")

LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
                  r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")


def corpus():
    lines = []
    english = [
        "The quick brown fox jumps over the lazy dog.",
        "It's a truth universally acknowledged that we'll need tokenizers, isn't it?",
        "I'm sure they've said you'd DON'T and WE'LL in capitals too.",
        "Tokenizers split text into pieces; models read the pieces as integer ids.",
        "Prefill reads the whole prompt at once, decode produces one token per step.",
    ]
    accents = [
        "Café, crème brûlée et façade: naïve coöperation à la française.",
        "Ångström, Øresund, Straße, señor, São Paulo, Dvořák, Łódź.",
    ]
    cjk = [
        "日本語のテキストを分割します。東京は大きな都市です。",
        "中文分词测试：我们今天学习机器学习。",
        "한국어 문장도 조금 있습니다.",
    ]
    emoji = ["Emoji: 😀 😂 👍 🎉 🚀 ❤️ and a family 👨‍👩‍👧 in text 🙂🙂"]
    code = [
        "def add(a, b):\n    return a + b\n",
        "for (int i = 0; i < 10; ++i) {\n\tsum += values[i];\n}\n",
        "if x != None and y >= 3: print(f\"{x}:{y}\")",
        "#include <vector>\nstd::vector<int64_t> ids{1, 2, 3};",
    ]
    digits = ["Numbers 0 1 2 3 42 1234567890 3.14159 2026-11-26 100,000 and 0x7fff."]
    spaces = ["  two leading spaces", "tabs\tbetween\twords", "many     spaces    here", "line\nbreaks\r\nand\n\n\nblank lines",
              "trailing spaces   ", "\t\tindented with tabs"]
    for i in range(40):
        for group in (english, accents, cjk, emoji, code, digits, spaces):
            lines.append(group[i % len(group)])
        lines.append(f"Line {i}: value={i * 37 % 101} ratio={i / 7:.3f}")
    return lines


TRICKY = [
    "",
    " ",
    "hello",
    " hello world",
    "Hello, World! HELLO world.",
    "don't I'LL we've they'd You'RE",
    "  two leading spaces",
    "trailing spaces   ",
    "many     spaces    here",
    "\t\tindented with tabs\tand\ttabs",
    "line\nbreaks\r\nand\n\n\nblank lines\n",
    "   \n   \n",
    "Café crème brûlée naïve",
    "日本語のテキストを分割します。",
    "中文混合English文本123",
    "Emoji 😀👍🎉 family 👨‍👩‍👧 end",
    "for (int i = 0; i < 10; ++i) { sum += values[i]; }",
    "def add(a, b):\n    return a + b\n",
    "1234567890 3.14159 0x7fff 100,000",
    "12345678901234567890",
    # Not in the corpus.
    "Zyxwvut quux fjord",
    "Ελληνικά και русский текст",
    "🦀🦀🦀 crab emoji",
    "\u00a0non-breaking\u00a0space and \u200bzero width",
    "Ümläüts ÄÖÜ and ß at the end",
    "a" * 300,
    "the " * 50,
    "<<<>>>{{{}}}|||\\\\\\",
    "mixed\ttab\nnewline\r\rcarriage",
]
SPECIAL_STRINGS = [
    "<|begin_of_text|>Hello<|end_of_text|>",
    "a<|end_of_text|>b <|end_of_text|> c",
]


def train_bytelevel():
    tok = Tokenizer(models.BPE(ignore_merges=True))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(tokenizers.Regex(LLAMA3_PATTERN), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=700, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=["<|begin_of_text|>", "<|end_of_text|>"], show_progress=False)
    tok.train_from_iterator(corpus(), trainer)
    bos = tok.token_to_id("<|begin_of_text|>")
    tok.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=False),
        processors.TemplateProcessing(single="<|begin_of_text|> $A", pair="<|begin_of_text|> $A <|begin_of_text|> $B",
                                      special_tokens=[("<|begin_of_text|>", bos)]),
    ])
    return tok


def train_gpt2():
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
    ])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=600, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=["<|endoftext|>"], show_progress=False)
    tok.train_from_iterator(corpus(), trainer)
    return tok


def train_metaspace():
    """BPE over characters with <0xNN> byte-fallback pieces, as Llama 2's tokenizer.json."""
    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=False)
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="first", split=False)
    trainer = trainers.BpeTrainer(vocab_size=500, special_tokens=["<unk>", "<s>", "</s>"], limit_alphabet=150,
                                  show_progress=False)
    tok.train_from_iterator(corpus(), trainer)
    # Insert the 256 byte pieces after the special tokens, renumbering the trained tokens.
    spec = json.loads(tok.to_str())
    vocab = spec["model"]["vocab"]
    ordered = sorted(vocab.items(), key=lambda kv: kv[1])
    new_vocab = {}
    for name, _ in ordered[:3]:
        new_vocab[name] = len(new_vocab)
    for b in range(256):
        new_vocab[f"<0x{b:02X}>"] = len(new_vocab)
    for name, _ in ordered[3:]:
        if name not in new_vocab:
            new_vocab[name] = len(new_vocab)
    spec["model"]["vocab"] = new_vocab
    for added in spec["added_tokens"]:
        added["id"] = new_vocab[added["content"]]
    spec["post_processor"] = {
        "type": "TemplateProcessing",
        "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
        "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                 {"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {"<s>": {"id": "<s>", "ids": [new_vocab["<s>"]], "tokens": ["<s>"]}},
    }
    return Tokenizer.from_str(json.dumps(spec))


def llama2_style(metaspace_tok):
    spec = json.loads(metaspace_tok.to_str())
    spec["normalizer"] = {"type": "Sequence", "normalizers": [
        {"type": "Prepend", "prepend": "▁"},
        {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]}
    spec["pre_tokenizer"] = None
    spec["decoder"] = {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
        {"type": "ByteFallback"}, {"type": "Fuse"},
        {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
    return Tokenizer.from_str(json.dumps(spec))


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


def write_tiktoken(bytelevel_tok, path):
    """Ranks: the 256 bytes, then each merge's result in merge order (BPE's own order)."""
    spec = json.loads(bytelevel_tok.to_str())
    char_to_byte = {c: b for b, c in bytes_to_unicode().items()}
    ranks = {}
    for b in range(256):
        ranks[bytes([b])] = len(ranks)
    for merge in spec["model"]["merges"]:
        a, b = merge if isinstance(merge, list) else merge.split(" ")
        token = bytes(char_to_byte[c] for c in a + b)
        if token not in ranks:
            ranks[token] = len(ranks)
    with open(path, "w") as f:
        for token, rank in sorted(ranks.items(), key=lambda kv: kv[1]):
            f.write(f"{base64.b64encode(token).decode()} {rank}\n")


def train_sentencepiece(prefix, model_type, vocab_size, byte_fallback=True):
    corpus_path = os.path.join(OUT, "corpus.txt")
    spm.SentencePieceTrainer.train(
        input=corpus_path, model_prefix=prefix, model_type=model_type, vocab_size=vocab_size,
        byte_fallback=byte_fallback, normalization_rule_name="identity", remove_extra_whitespaces=False,
        split_digits=True, character_coverage=0.98, bos_id=1, eos_id=2, unk_id=0, pad_id=-1,
        allow_whitespace_only_pieces=True, minloglevel=2)


def main():
    os.makedirs(OUT, exist_ok=True)
    # One line per corpus entry; the lines' own newlines are written escaped away for
    # sentencepiece, which reads one sentence per line.
    with open(os.path.join(OUT, "corpus.txt"), "w") as f:
        for line in corpus():
            for part in line.split("\n"):
                f.write(part.replace("\r", "") + "\n")

    expected = {"versions": {"tokenizers": tokenizers.__version__, "sentencepiece": spm.__version__},
                "files": {}}

    def record_hf(name, tok, strings):
        path = os.path.join(OUT, name)
        tok.save(path)
        cases = []
        for s in strings:
            ids = tok.encode(s, add_special_tokens=False).ids
            cases.append({"text": s, "ids": ids, "decoded": tok.decode(ids, skip_special_tokens=False)})
        bos = tok.encode("x", add_special_tokens=True).ids
        expected["files"][name] = {"kind": "huggingface", "vocab_size": tok.get_vocab_size(with_added_tokens=True),
                                   "cases": cases, "with_special": bos}

    bytelevel = train_bytelevel()
    record_hf("hf_bytelevel.json", bytelevel, TRICKY + SPECIAL_STRINGS)
    # Same model, merges written as "a b" strings, no post-processor.
    spec = json.loads(bytelevel.to_str())
    spec["model"]["merges"] = [" ".join(m) if isinstance(m, list) else m for m in spec["model"]["merges"]]
    spec["post_processor"] = None
    record_hf("hf_bytelevel_str.json", Tokenizer.from_str(json.dumps(spec)), TRICKY + SPECIAL_STRINGS)
    # Added tokens with their flags, matched before pre-tokenization.
    added = Tokenizer.from_str(bytelevel.to_str())
    added.add_special_tokens([tokenizers.AddedToken("<|im_start|>", special=True),
                              tokenizers.AddedToken("[MASK]", lstrip=True, rstrip=True, special=True)])
    added.add_tokens([tokenizers.AddedToken("foo", single_word=True, normalized=False),
                      tokenizers.AddedToken("hello world", normalized=False)])
    record_hf("hf_added.json", added, TRICKY + SPECIAL_STRINGS + [
        "<|im_start|>user\nhi<|end_of_text|>", "a [MASK] b", "a  [MASK]\t\tb", "[MASK]x", "foo foobar barfoo foo.",
        "(foo) _foo foo_", "say hello world!", "xhello worldx", "<|im_start|><|im_start|>"])
    # The same vocabulary behind the other components etscope implements: NFC and a regex Replace
    # normalizer, Split behaviours (removed, merged with previous/next, inverted), ByteLevel with a
    # prefix space.
    variants = json.loads(bytelevel.to_str())
    variants["normalizer"] = {"type": "Sequence", "normalizers": [
        {"type": "NFC"}, {"type": "Replace", "pattern": {"Regex": "[0-9]{4,}"}, "content": "#"}]}
    variants["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": "\\t+"}, "behavior": "Removed", "invert": False},
        {"type": "Split", "pattern": {"String": "-"}, "behavior": "MergedWithNext", "invert": False},
        {"type": "Split", "pattern": {"Regex": "[.,;]"}, "behavior": "MergedWithPrevious", "invert": False},
        {"type": "Split", "pattern": {"Regex": "\\p{L}+|\\p{N}+"}, "behavior": "Isolated", "invert": True},
        {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}]}
    variants["post_processor"] = None
    record_hf("hf_variants.json", Tokenizer.from_str(json.dumps(variants)), TRICKY + SPECIAL_STRINGS + [
        "cafe\u0301 and caf\u00e9", "A\u030a\u0301ngstr\u00f6m", "co-operate, re-enter; end.", "x.y,z;;w..",
        "phone 5551234 and 12 and 123456789", "a\tb\t\tc"])
    record_hf("hf_gpt2.json", train_gpt2(), TRICKY)
    metaspace = train_metaspace()
    record_hf("hf_metaspace.json", metaspace, TRICKY + ["<s>Hello</s> again", "x</s>y"])
    record_hf("hf_llama2.json", llama2_style(metaspace), TRICKY + ["<s>Hello</s> again", "x</s>y"])

    tik_path = os.path.join(OUT, "tiktoken.model")
    write_tiktoken(bytelevel, tik_path)
    cwd = os.getcwd()
    os.chdir("/")  # pytorch_tokenizers' own tiktoken.py must not shadow the tiktoken package
    from pytorch_tokenizers.tiktoken import TiktokenTokenizer
    import tiktoken
    os.chdir(cwd)
    tt = TiktokenTokenizer(tik_path)
    cases = []
    for s in TRICKY + SPECIAL_STRINGS + ["<|eot_id|><|reserved_special_token_7|>x"]:
        # ExecuTorch's C++ tiktoken tokenizer treats every special token in the text as special.
        ids = tt.model.encode(s, allowed_special="all")
        cases.append({"text": s, "ids": ids, "decoded": tt.decode(ids)})
    expected["versions"]["tiktoken"] = tiktoken.__version__
    expected["files"]["tiktoken.model"] = {"kind": "tiktoken", "vocab_size": tt.n_words, "cases": cases,
                                           "bos_id": tt.bos_id, "eos_id": tt.eos_id}

    # sp_small fits the 256-id vocabulary of the LLM fixtures (tests/fixtures/executorch/llm), for
    # `etscope generate --tokenizer` (too small for byte fallback's 256 byte pieces).
    for name, model_type, size, fallback in (("sp_bpe", "bpe", 420, True), ("sp_unigram", "unigram", 420, True),
                                             ("sp_small", "bpe", 200, False)):
        prefix = os.path.join(OUT, name)
        train_sentencepiece(prefix, model_type, size, fallback)
        os.remove(prefix + ".vocab")
        sp = spm.SentencePieceProcessor(model_file=prefix + ".model")
        cases = []
        for s in TRICKY:
            ids = sp.encode(s)
            cases.append({"text": s, "ids": ids, "decoded": sp.decode(ids)})
        expected["files"][name + ".model"] = {"kind": "sentencepiece", "vocab_size": sp.get_piece_size(),
                                              "cases": cases, "bos_id": sp.bos_id(), "eos_id": sp.eos_id()}
    os.remove(os.path.join(OUT, "corpus.txt"))

    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(expected, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
