#!/usr/bin/env python3
# check-data.py - ftpipe-data's data sets against the same preparation done
# independently in the reference environment (test/Reference/ftpipe-data.test):
#
#   lm FILE TOKENIZER DATA --seq-len S [--field F]
#       input_ids: the `tokenizers` encoding of every example (a text file's
#       lines, or a .jsonl's field), concatenated and cut into blocks of S;
#       labels equal to them; attention_mask all ones.
#   seq2seq FILE TOKENIZER CONFIG DATA... --seq-len S --decoder-seq-len T
#       every row of the DATA files (train and eval parts together) is the
#       row of one example as transformers prepares it: the fast tokenizer
#       with padding and truncation, labels padded with -100, and
#       decoder_input_ids from T5ForConditionalGeneration's own
#       prepare_decoder_input_ids_from_labels (CONFIG: a tiny T5's config).
#   qa SQUAD TOKENIZER DATA --seq-len S --stride K
#       prepare_train_features of transformers' examples/pytorch/
#       question-answering/run_qa.py (the fast tokenizer's offset_mapping
#       and sequence_ids, the answer's characters to tokens; the [CLS] index
#       where a window lacks the answer), written again from its description.
# Each prints one line of what it compared and exits 1 on a difference.
import argparse
import json
import sys

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer


def same(name, ours, expected):
    ours, expected = np.asarray(ours), np.asarray(expected)
    if ours.shape != expected.shape or not (ours == expected).all():
        print("MISMATCH %s:\nours     %s\nexpected %s" % (name, ours.tolist(),
                                                         expected.tolist()))
        sys.exit(1)


def examples_of(path, field):
    if path.endswith(".jsonl"):
        return [json.loads(l)[field] for l in open(path) if l.strip()]
    return open(path, newline="").readlines()


def cmd_lm(opts):
    tokenizer = Tokenizer.from_file(opts.tokenizer)
    stream = [i for text in examples_of(opts.file, opts.field)
              for i in tokenizer.encode(text).ids]
    blocks = len(stream) // opts.seq_len
    expected = np.array(stream[:blocks * opts.seq_len]).reshape(blocks, -1)
    data = load_file(opts.data)
    same("input_ids", data["input_ids"], expected)
    same("labels", data["labels"], expected)
    same("attention_mask", data["attention_mask"], np.ones_like(expected))
    print("lm: %d sequences of %d tokens equal tokenizers' encoding" % (
        blocks, opts.seq_len))


def cmd_seq2seq(opts):
    import torch
    import transformers
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_file=opts.tokenizer, pad_token="<pad>", eos_token="</s>")
    rows = [json.loads(l) for l in open(opts.file) if l.strip()]
    source = fast([r["input"] for r in rows], max_length=opts.seq_len,
                  padding="max_length", truncation=True, return_tensors="np")
    target = fast([r["target"] for r in rows], max_length=opts.decoder_seq_len,
                  padding="max_length", truncation=True, return_tensors="np")
    labels = np.where(target["attention_mask"] == 1, target["input_ids"], -100)
    config = json.load(open(opts.config))
    config = {k: v for k, v in config.items() if k != "ftpipe"}
    config.update(pad_token_id=fast.pad_token_id,
                  decoder_start_token_id=fast.pad_token_id)
    model = transformers.T5ForConditionalGeneration(
        transformers.AutoConfig.for_model(**config))
    decoder = model.prepare_decoder_input_ids_from_labels(
        labels=torch.from_numpy(labels)).numpy()
    expected = {}
    for i in range(len(rows)):
        key = tuple(source["input_ids"][i])
        expected[key] = {"input_ids": source["input_ids"][i],
                         "attention_mask": source["attention_mask"][i],
                         "labels": labels[i], "decoder_input_ids": decoder[i]}
    seen = []
    for path in opts.data:
        data = load_file(path)
        for i, ids in enumerate(data["input_ids"]):
            if tuple(ids) not in expected:
                print("MISMATCH %s row %d: no example encodes to %s" % (
                    path, i, ids.tolist()))
                sys.exit(1)
            for name, value in expected[tuple(ids)].items():
                same("%s row %d %s" % (path, i, name), data[name][i], value)
            seen.append(tuple(ids))
        print("seq2seq: %s: %d rows" % (path.split("/")[-1], len(data["labels"])))
    if sorted(seen) != sorted(expected):
        print("MISMATCH: the data sets hold %d rows of %d examples" % (
            len(seen), len(expected)))
        sys.exit(1)
    print("seq2seq: %d examples, each once, as transformers prepares them" %
          len(rows))


def prepare_train_features(fast, questions, contexts, answers, seq, stride):
    """run_qa.py's prepare_train_features (padding on the right)."""
    tokenized = fast([q.lstrip() for q in questions], contexts,
                     truncation="only_second", max_length=seq, stride=stride,
                     return_overflowing_tokens=True,
                     return_offsets_mapping=True, padding="max_length")
    sample_mapping = tokenized.pop("overflow_to_sample_mapping")
    offset_mapping = tokenized.pop("offset_mapping")
    starts, ends = [], []
    for i, offsets in enumerate(offset_mapping):
        input_ids = tokenized["input_ids"][i]
        cls_index = input_ids.index(fast.cls_token_id)
        sequence_ids = tokenized.sequence_ids(i)
        answer = answers[sample_mapping[i]]
        if not answer["answer_start"]:
            starts.append(cls_index)
            ends.append(cls_index)
            continue
        start_char = answer["answer_start"][0]
        end_char = start_char + len(answer["text"][0])
        token_start = 0
        while sequence_ids[token_start] != 1:
            token_start += 1
        token_end = len(input_ids) - 1
        while sequence_ids[token_end] != 1:
            token_end -= 1
        if not (offsets[token_start][0] <= start_char and
                offsets[token_end][1] >= end_char):
            starts.append(cls_index)
            ends.append(cls_index)
            continue
        while token_start < len(offsets) and offsets[token_start][0] <= start_char:
            token_start += 1
        starts.append(token_start - 1)
        while offsets[token_end][1] >= end_char:
            token_end -= 1
        ends.append(token_end + 1)
    tokenized["start_positions"], tokenized["end_positions"] = starts, ends
    return tokenized


def cmd_qa(opts):
    import transformers
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_file=opts.tokenizer, cls_token="[CLS]", sep_token="[SEP]",
        pad_token="[PAD]", unk_token="[UNK]")
    questions, contexts, answers = [], [], []
    for article in json.load(open(opts.squad))["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                questions.append(qa["question"])
                contexts.append(paragraph["context"])
                answers.append({"text": [a["text"] for a in qa["answers"]],
                                "answer_start": [a["answer_start"]
                                                 for a in qa["answers"]]})
    expected = prepare_train_features(fast, questions, contexts, answers,
                                      opts.seq_len, opts.stride)
    data = load_file(opts.data)
    for name in ("input_ids", "attention_mask", "token_type_ids",
                 "start_positions", "end_positions"):
        same(name, data[name], expected[name])
    answered = int((np.asarray(expected["start_positions"]) > 0).sum())
    print("qa: %d windows of %d questions equal run_qa.py's features "
          "(%d with the answer, %d without)" % (
              len(expected["input_ids"]), len(questions), answered,
              len(expected["input_ids"]) - answered))


parser = argparse.ArgumentParser()
sub = parser.add_subparsers(dest="command", required=True)
lm = sub.add_parser("lm")
lm.add_argument("file")
lm.add_argument("tokenizer")
lm.add_argument("data")
lm.add_argument("--seq-len", type=int, required=True)
lm.add_argument("--field", default="text")
s2s = sub.add_parser("seq2seq")
s2s.add_argument("file")
s2s.add_argument("tokenizer")
s2s.add_argument("config")
s2s.add_argument("data", nargs="+")
s2s.add_argument("--seq-len", type=int, required=True)
s2s.add_argument("--decoder-seq-len", type=int, required=True)
qa = sub.add_parser("qa")
qa.add_argument("squad")
qa.add_argument("tokenizer")
qa.add_argument("data")
qa.add_argument("--seq-len", type=int, required=True)
qa.add_argument("--stride", type=int, required=True)
opts = parser.parse_args()
{"lm": cmd_lm, "seq2seq": cmd_seq2seq, "qa": cmd_qa}[opts.command](opts)
