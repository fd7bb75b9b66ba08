#!/usr/bin/env python3
# make-tokenizers.py CORPUS OUTDIR - trains, with Hugging Face's `tokenizers`,
# the three kinds of tokenizer that ftpipe-data's tests read, on a small text,
# each saved as OUTDIR/<kind>/tokenizer.json (a checkpoint directory's layout):
#   gpt2: byte-level BPE, no special tokens added to a text, <|endoftext|>;
#   bert: WordPiece (whole words and pieces), lower case, [CLS] A [SEP] B [SEP] with token types 0/1;
#   t5:   Metaspace BPE, <pad> = 0, </s> = 1 appended to every text.
# Every vocabulary stays below 512, the tiny models' (models/*-tiny.json).
import os
import sys

from tokenizers import (Tokenizer, decoders, models, normalizers,
                        pre_tokenizers, processors, trainers)

corpus, out = sys.argv[1], sys.argv[2]


def save(tokenizer, kind):
    os.makedirs(os.path.join(out, kind), exist_ok=True)
    tokenizer.save(os.path.join(out, kind, "tokenizer.json"))
    print("%s: vocabulary %d" % (kind, tokenizer.get_vocab_size()))


gpt2 = Tokenizer(models.BPE())
gpt2.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
gpt2.decoder = decoders.ByteLevel()
gpt2.train([corpus], trainers.BpeTrainer(
    vocab_size=400, special_tokens=["<|endoftext|>"],
    initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
save(gpt2, "gpt2")

# tokenizers' WordPiece trainer breaks ties between equal counts in a
# different order from run to run, so the vocabulary is built here: the
# characters, each also as a continuation (##c), and the words of the text.
normalizer = normalizers.BertNormalizer(lowercase=True)
pre_tokenizer = pre_tokenizers.BertPreTokenizer()
words = set()
for line in open(corpus):
    for word, _ in pre_tokenizer.pre_tokenize_str(normalizer.normalize_str(line)):
        words.add(word)
chars = sorted({c for word in words for c in word})
vocab = (["[PAD]", "[UNK]", "[CLS]", "[SEP]"] + chars + ["##" + c for c in chars]
         + sorted(w for w in words if len(w) > 1))
bert = Tokenizer(models.WordPiece({t: i for i, t in enumerate(vocab)},
                                  unk_token="[UNK]"))
bert.normalizer = normalizer
bert.pre_tokenizer = pre_tokenizer
cls, sep = bert.token_to_id("[CLS]"), bert.token_to_id("[SEP]")
bert.post_processor = processors.TemplateProcessing(
    single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
    special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
save(bert, "bert")

t5 = Tokenizer(models.BPE(unk_token="<unk>"))
t5.pre_tokenizer = pre_tokenizers.Metaspace()
t5.decoder = decoders.Metaspace()
t5.train([corpus], trainers.BpeTrainer(
    vocab_size=300, special_tokens=["<pad>", "</s>", "<unk>"], show_progress=False))
t5.post_processor = processors.TemplateProcessing(
    single="$A </s>", pair="$A </s> $B </s>",
    special_tokens=[("</s>", t5.token_to_id("</s>"))])
save(t5, "t5")
