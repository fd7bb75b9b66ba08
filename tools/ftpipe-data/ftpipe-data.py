#!/usr/bin/env python3
# ftpipe-data - prepares the safetensors data set that `ftpipe-run --data`
# reads, from text, with a checkpoint's own tokenizer.json.
#
#   ftpipe-data causal-lm FILE  (.txt: one example a line; .jsonl / .csv:
#                                --field)
#   ftpipe-data seq2seq FILE    (.jsonl / .csv: --input-field, --target-field)
#   ftpipe-data qa FILE         (SQuAD-style JSON)
#       --tokenizer PATH (tokenizer.json or a checkpoint directory holding it)
#       [--manifest DIR/manifest.json | --seq-len S [--decoder-seq-len T]]
#       [--eval-fraction F --seed N --eval-output FILE] -o FILE
#   ftpipe-data check FILE --manifest MANIFEST
#
# Tokenization is Hugging Face's `tokenizers` library with the tokenizer's own
# post-processor (its special tokens), so the ids are those that transformers'
# fast tokenizer gives. The conventions per task, which the generated models'
# losses expect, are in docs/DataPreparation.md. Every tensor is written in the
# model's dtype (the manifest's, i32 without one) with a leading sample
# dimension; with --manifest the result is checked against the compiled model
# (names, dtypes, shapes, token ids below the vocabulary) before it is written.
# Needs only `tokenizers` (no numpy, no network): safetensors is written and
# read here by hand.

import argparse
import array
import csv
import json
import os
import random
import struct
import sys

# The manifest reader: beside this file in the build's bin/, in
# tools/ftpipe-compile/ in the source tree.
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "ftpipe-compile")]
import ftpipe_manifest  # noqa: E402

IGNORE = -100  # the label that every generated loss ignores (docs/ModelGen.md)
DTYPES = {"i32": ("I32", "i"), "i64": ("I64", "q")}
EMBEDDINGS = ("wte.weight", "word_embeddings.weight", "embed_tokens.weight",
              "shared.weight")


class DataError(Exception):
    """A refusal of the user's input; the message names the file and where."""


# --- safetensors -------------------------------------------------------------

def write_safetensors(path, tensors, dtype):
    """Writes {name: (shape, flat list of ints)} as safetensors of `dtype`
    (i32 or i64), through a temporary file renamed into place."""
    tag, code = DTYPES[dtype]
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        shape, values = tensors[name]
        blob = array.array(code, values)
        if sys.byteorder != "little":
            blob.byteswap()
        blob = blob.tobytes()
        header[name] = {"dtype": tag, "shape": shape,
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    header["__metadata__"] = {"format": "pt", "producer": "ftpipe-data"}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    temporary = path + ".tmp"
    with open(temporary, "wb") as out:
        out.write(struct.pack("<Q", len(text)))
        out.write(text)
        for blob in blobs:
            out.write(blob)
    os.replace(temporary, path)


def read_safetensors(path):
    """{name: (dtype, shape, flat list of ints)} of an integer safetensors
    file; floating tensors are returned without values."""
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) < 8:
        raise DataError("%s: not a safetensors file (%d bytes)" % (
            path, len(raw)))
    size = struct.unpack("<Q", raw[:8])[0]
    if 8 + size > len(raw):
        raise DataError("%s: header of %d bytes runs past the end" % (
            path, size))
    try:
        header = json.loads(raw[8:8 + size])
    except ValueError as error:
        raise DataError("%s: header is not JSON: %s" % (path, error))
    codes = {tag.lower(): code for tag, code in DTYPES.values()}
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        try:
            dtype, shape = entry["dtype"].lower(), entry["shape"]
            begin, end = entry["data_offsets"]
        except (KeyError, TypeError, ValueError, AttributeError):
            raise DataError("%s: tensor '%s' has no dtype, shape or "
                            "data_offsets" % (path, name))
        values = None
        if dtype in codes:
            values = array.array(codes[dtype])
            values.frombytes(raw[8 + size + begin:8 + size + end])
            if sys.byteorder != "little":
                values.byteswap()
            values = values.tolist()
        tensors[name] = (dtype, shape, values)
    return tensors


# --- the compiled model ------------------------------------------------------

class Model:
    """What a data set must match: input names, dtypes and per-sample shapes,
    and the vocabulary size (from the embedding's rows)."""

    def __init__(self, inputs, vocab, source):
        self.inputs, self.vocab, self.source = inputs, vocab, source

    @staticmethod
    def from_manifest(path):
        try:
            manifest = ftpipe_manifest.load(path)
        except ftpipe_manifest.ManifestError as error:
            raise DataError(str(error))
        inputs = {name: (entry["dtype"], entry["shape"][1:])
                  for name, entry in manifest["inputs"].items()}
        if "arg0" in inputs:
            raise DataError(
                "%s: the model's inputs have no names (arg0, ...): compile "
                "IR that ftpipe-opt printed with --mlir-print-debuginfo" % path)
        vocab = None
        for name, entry in manifest.get("parameters", {}).items():
            if name.endswith(EMBEDDINGS):
                vocab = entry["shape"][0]
        return Model(inputs, vocab, path)

    def check(self, tensors, where):
        """Refuses `tensors` ({name: (dtype, shape, values)}) that this model
        cannot read, with every difference in one message."""
        problems = []
        for name, (dtype, shape) in sorted(self.inputs.items()):
            if name not in tensors:
                problems.append("'%s' is missing" % name)
                continue
            got_dtype, got_shape, values = tensors[name]
            if got_dtype != dtype or got_shape[1:] != shape or not got_shape[0]:
                problems.append("'%s' is %s %s, the model reads %s [N%s]" % (
                    name, got_dtype, got_shape, dtype,
                    "".join(", %d" % size for size in shape)))
                continue
            if self.vocab and name in ("input_ids", "decoder_input_ids",
                                       "labels"):
                bad = [v for v in values if v >= self.vocab or
                       v < (IGNORE if name == "labels" else 0)
                       or (name == "labels" and IGNORE < v < 0)]
                if bad:
                    problems.append(
                        "'%s' holds %d ids outside the vocabulary of %d "
                        "(e.g. %d)" % (name, len(bad), self.vocab, bad[0]))
            if name in ("start_positions", "end_positions"):
                length = self.inputs["input_ids"][1][0]
                bad = [v for v in values if not 0 <= v <= length]
                if bad:
                    problems.append("'%s' holds %d positions outside the "
                                    "sequence of %d (e.g. %d)" % (
                                        name, len(bad), length, bad[0]))
        for name in sorted(set(tensors) - set(self.inputs)):
            problems.append("'%s' is not an input of the model" % name)
        if problems:
            raise DataError("%s does not fit the model of %s: %s" % (
                where, self.source, "; ".join(problems)))


# --- reading the user's files ------------------------------------------------

def read_records(path, fields):
    """(line number, {field: text}) per example of a .jsonl or .csv file;
    a record without one of `fields` is refused with its line."""
    records = []
    try:
        with open(path, newline="", encoding="utf-8") as f:
            if path.endswith(".csv"):
                reader = csv.DictReader(f)
                rows = ((reader.line_num, row) for row in reader)
            elif path.endswith(".jsonl"):
                rows = []
                for number, line in enumerate(f, 1):
                    if not line.strip():
                        continue
                    try:
                        rows.append((number, json.loads(line)))
                    except ValueError as error:
                        raise DataError("%s:%d: not JSON: %s" % (path, number,
                                                                  error))
            else:
                raise DataError("%s: expected a .jsonl or .csv file" % path)
            for number, row in rows:
                for field in fields:
                    if not isinstance(row, dict) or not isinstance(
                            row.get(field), str):
                        raise DataError("%s:%d: no text field '%s'" % (
                            path, number, field))
                records.append((number, {f: row[f] for f in fields}))
    except OSError as error:
        raise DataError("%s: %s" % (path, error.strerror))
    return records


def read_lines(path):
    """A text file's lines, each one example (with its line break, as
    transformers' run_clm.py keeps them)."""
    try:
        with open(path, encoding="utf-8", newline="") as f:
            return [(n, {"text": line}) for n, line in enumerate(f, 1)]
    except OSError as error:
        raise DataError("%s: %s" % (path, error.strerror))


def read_squad(path):
    """(where, question, context, answer start, answer text) per question of a
    SQuAD-style JSON file; an answer that is not at its offset is refused."""
    try:
        squad = json.load(open(path, encoding="utf-8"))
    except OSError as error:
        raise DataError("%s: %s" % (path, error.strerror))
    except ValueError as error:
        raise DataError("%s: not JSON: %s" % (path, error))
    examples = []
    for a, article in enumerate(squad.get("data", [])):
        for p, paragraph in enumerate(article.get("paragraphs", [])):
            context = paragraph.get("context")
            for q, qa in enumerate(paragraph.get("qas", [])):
                where = "%s: data[%d].paragraphs[%d].qas[%d]" % (path, a, p, q)
                if "id" in qa:
                    where += " (id %s)" % qa["id"]
                if not isinstance(context, str) or not isinstance(
                        qa.get("question"), str):
                    raise DataError("%s: no context or question" % where)
                answers = qa.get("answers", [])
                start, text = None, None
                if answers and not qa.get("is_impossible", False):
                    start, text = answers[0]["answer_start"], answers[0]["text"]
                    if context[start:start + len(text)] != text:
                        raise DataError(
                            "%s: answer %r is not at character %d of its "
                            "context (%r there)" % (
                                where, text, start,
                                context[start:start + len(text)]))
                examples.append((where, qa["question"].lstrip(), context,
                                 start, text))
    if not examples:
        raise DataError("%s: no questions (expected SQuAD's "
                        "data[].paragraphs[].qas[])" % path)
    return examples


# --- the tokenizer -----------------------------------------------------------

def load_tokenizer(path):
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise DataError("%s has no Hugging Face `tokenizers` (pip install "
                        "tokenizers; the reference environment has it)" %
                        sys.executable)
    file = os.path.join(path, "tokenizer.json") if os.path.isdir(path) else path
    try:
        tokenizer = Tokenizer.from_file(file)
    except Exception as error:  # tokenizers raises its own Exception type
        raise DataError("%s: cannot load the tokenizer: %s" % (file, error))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    config = {}
    config_file = os.path.join(os.path.dirname(os.path.abspath(file)),
                               "config.json")
    if os.path.exists(config_file):
        config = json.load(open(config_file))
    return tokenizer, file, config


def token_id(tokenizer, token, file):
    value = tokenizer.token_to_id(token)
    if value is None:
        raise DataError("%s: no token %r" % (file, token))
    return value


def pad_id(opts, tokenizer, file, config):
    """--pad-token, else config.json's pad_token_id, else <pad> or [PAD]."""
    if opts.pad_token:
        return token_id(tokenizer, opts.pad_token, file)
    if config.get("pad_token_id") is not None:
        return config["pad_token_id"]
    for token in ("<pad>", "[PAD]"):
        if tokenizer.token_to_id(token) is not None:
            return tokenizer.token_to_id(token)
    raise DataError("%s: no padding token (<pad>, [PAD] or config.json's "
                    "pad_token_id): give --pad-token" % file)


def padded(ids, length, value):
    return ids + [value] * (length - len(ids))


# --- the tasks ---------------------------------------------------------------

def causal_lm(opts, tokenizer, file, config, examples):
    """run_clm.py's packing: every example's ids (with the tokenizer's special
    tokens) concatenated, cut into blocks of S; labels equal input_ids (the
    model shifts them); a last partial block dropped or padded."""
    stream = []
    separator = ([token_id(tokenizer, opts.separator, file)]
                 if opts.separator else [])
    texts = [fields[opts.field] for _, fields in examples]
    for encoding in tokenizer.encode_batch(texts):
        stream += encoding.ids + separator
    seq = opts.seq_len
    blocks = [stream[i:i + seq] for i in range(0, len(stream), seq)]
    if blocks and len(blocks[-1]) < seq:
        if opts.remainder == "drop":
            blocks.pop()
    if not blocks:
        raise DataError("%s: %d tokens, fewer than one sequence of %d" % (
            opts.input, len(stream), seq))
    pad = pad_id(opts, tokenizer, file, config) if len(blocks[-1]) < seq else 0
    rows = {"input_ids": [], "attention_mask": [], "labels": []}
    for block in blocks:
        rows["input_ids"].append(padded(block, seq, pad))
        rows["attention_mask"].append(padded([1] * len(block), seq, 0))
        rows["labels"].append(padded(block, seq, IGNORE))
    return rows


def encode_limited(tokenizer, text, length, overflow, where, what):
    encoding = tokenizer.encode(text)
    if len(encoding.ids) > length:
        if overflow != "truncate":
            raise DataError("%s: the %s has %d tokens, more than %d (use "
                            "--overflow truncate)" % (where, what,
                                                      len(encoding.ids), length))
        tokenizer.enable_truncation(length)
        encoding = tokenizer.encode(text)
        tokenizer.no_truncation()
    return encoding.ids


def seq2seq(opts, tokenizer, file, config, examples):
    """T5's conventions: input and target each encoded with the tokenizer's
    post-processor (T5's appends </s>), padded; labels padded with -100;
    decoder_input_ids the labels shifted right behind the decoder start token
    (config.json's decoder_start_token_id, else the pad token), with -100
    replaced by the pad token (transformers' T5 _shift_right)."""
    pad = pad_id(opts, tokenizer, file, config)
    start = opts.decoder_start_id
    if start is None:
        start = config.get("decoder_start_token_id", pad)
    rows = {"input_ids": [], "attention_mask": [], "decoder_input_ids": [],
            "labels": []}
    for number, fields in examples:
        where = "%s:%d" % (opts.input, number)
        source = encode_limited(tokenizer,
                                opts.prefix + fields[opts.input_field],
                                opts.seq_len, opts.overflow, where, "input")
        target = encode_limited(tokenizer, fields[opts.target_field],
                                opts.decoder_seq_len, opts.overflow, where,
                                "target")
        rows["input_ids"].append(padded(source, opts.seq_len, pad))
        rows["attention_mask"].append(padded([1] * len(source), opts.seq_len,
                                             0))
        labels = padded(target, opts.decoder_seq_len, IGNORE)
        rows["labels"].append(labels)
        rows["decoder_input_ids"].append(
            [start] + [pad if t == IGNORE else t for t in labels[:-1]])
    return rows


def answer_positions(encoding, start_char, end_char):
    """Start and end token of a character span in one window, or None when the
    window's context does not hold the whole span. The start is the context
    token whose characters begin at or before the span's start (the last
    such), the end the first context token that ends at or after its end."""
    context = [i for i, s in enumerate(encoding.sequence_ids) if s == 1]
    offsets = encoding.offsets
    if (not context or offsets[context[0]][0] > start_char
            or offsets[context[-1]][1] < end_char):
        return None
    start = max(i for i in context if offsets[i][0] <= start_char)
    end = min(i for i in context if offsets[i][1] >= end_char)
    return start, end


def qa(opts, tokenizer, file, config, examples):
    """Question and context as a pair (the tokenizer's template: BERT's
    [CLS] q [SEP] c [SEP] with token types 0 and 1), padded to S. A pair
    longer than S is refused, or (--overflow split) its context is cut into
    windows of S tokens overlapping by --stride tokens, as transformers'
    run_qa.py does. A window without the whole answer (and a question
    without one) points at the first token (the [CLS] of BERT)."""
    pad = pad_id(opts, tokenizer, file, config)
    seq = opts.seq_len
    rows = {"input_ids": [], "attention_mask": [], "token_type_ids": [],
            "start_positions": [], "end_positions": []}
    special = tokenizer.num_special_tokens_to_add(True)
    for where, question, context, start, text in examples:
        encoding = tokenizer.encode(question, context)
        if len(encoding.ids) > seq and opts.overflow == "refuse":
            raise DataError("%s: question and context are %d tokens, more "
                            "than %d (use --overflow split)" % (
                                where, len(encoding.ids), seq))
        if len(encoding.ids) > seq:
            # tokenizers panics (no Python exception) on a stride that
            # leaves no room: check the context's share of a window first.
            room = seq - special - len(
                tokenizer.encode(question, add_special_tokens=False).ids)
            if room <= opts.stride:
                raise DataError(
                    "%s: the question leaves %d of %d tokens to the context, "
                    "not more than --stride %d" % (where, max(room, 0), seq,
                                                   opts.stride))
            tokenizer.enable_truncation(seq, stride=opts.stride,
                                        strategy="only_second")
            encoding = tokenizer.encode(question, context)
            tokenizer.no_truncation()
        for window in [encoding] + encoding.overflowing:
            span = None
            if text is not None:
                span = answer_positions(window, start, start + len(text))
            rows["input_ids"].append(padded(window.ids, seq, pad))
            rows["attention_mask"].append(padded([1] * len(window.ids), seq, 0))
            rows["token_type_ids"].append(padded(window.type_ids, seq, 0))
            rows["start_positions"].append(span[0] if span else 0)
            rows["end_positions"].append(span[1] if span else 0)
    return rows


TASKS = {"causal-lm": causal_lm, "seq2seq": seq2seq, "qa": qa}
TASK_INPUTS = {
    "causal-lm": ["attention_mask", "input_ids", "labels"],
    "seq2seq": ["attention_mask", "decoder_input_ids", "input_ids", "labels"],
    "qa": ["attention_mask", "end_positions", "input_ids", "start_positions",
           "token_type_ids"]}


# --- driver ------------------------------------------------------------------

def to_tensors(rows, dtype):
    """{name: (dtype, shape, flat values)} of per-sample rows: a row is a
    sequence (a list) or a scalar (a position)."""
    tensors = {}
    for name, values in rows.items():
        if isinstance(values[0], list):
            tensors[name] = (dtype, [len(values), len(values[0])],
                             [v for row in values for v in row])
        else:
            tensors[name] = (dtype, [len(values)], list(values))
    return tensors


def split(examples, fraction, seed):
    """(train, eval): a seeded shuffle of the examples, the last
    round(fraction * n) for evaluation, each part in file order."""
    order = list(range(len(examples)))
    random.Random(seed).shuffle(order)
    count = round(fraction * len(examples))
    chosen = set(order[len(order) - count:]) if count else set()
    return ([e for i, e in enumerate(examples) if i not in chosen],
            [e for i, e in enumerate(examples) if i in chosen])


def shapes_from_model(opts, model):
    """--seq-len and --decoder-seq-len from the manifest where not given; a
    difference from the manifest is an error."""
    if sorted(model.inputs) != TASK_INPUTS[opts.task]:
        raise DataError("%s reads %s; ftpipe-data %s writes %s" % (
            model.source, ", ".join(sorted(model.inputs)), opts.task,
            ", ".join(TASK_INPUTS[opts.task])))
    for option, name in (("seq_len", "input_ids"),
                         ("decoder_seq_len", "decoder_input_ids")):
        if name not in model.inputs:
            continue
        length = model.inputs[name][1][0]
        given = getattr(opts, option)
        if given is not None and given != length:
            raise DataError("--%s %d, but %s reads %s of %d tokens" % (
                option.replace("_", "-"), given, model.source, name, length))
        setattr(opts, option, length)
    if opts.dtype is None:
        opts.dtype = model.inputs.get("input_ids", ("i32",))[0]


def prepare(opts):
    model = Model.from_manifest(opts.manifest) if opts.manifest else None
    if model:
        shapes_from_model(opts, model)
    opts.dtype = opts.dtype or "i32"
    if opts.seq_len is None:
        raise DataError("give --manifest or --seq-len")
    if opts.task == "seq2seq" and opts.decoder_seq_len is None:
        raise DataError("seq2seq needs --manifest or --decoder-seq-len")
    if opts.dtype not in DTYPES:
        raise DataError("the model reads %s token ids; ftpipe-data writes "
                        "i32 or i64" % opts.dtype)
    if opts.task == "qa" and opts.stride is None:
        opts.stride = opts.seq_len // 4
    if not 0 <= opts.eval_fraction < 1:
        raise DataError("--eval-fraction %g: expected 0 <= F < 1" %
                        opts.eval_fraction)
    if opts.eval_fraction and not opts.eval_output:
        raise DataError("--eval-fraction needs --eval-output")
    tokenizer, file, config = load_tokenizer(opts.tokenizer)
    if opts.task == "qa":
        examples = read_squad(opts.input)
    elif opts.task == "seq2seq":
        examples = read_records(opts.input, [opts.input_field,
                                             opts.target_field])
    elif opts.input.endswith((".jsonl", ".csv")):
        examples = read_records(opts.input, [opts.field])
    else:
        examples = read_lines(opts.input)
        opts.field = "text"
    train, held = split(examples, opts.eval_fraction, opts.seed)
    outputs = [(opts.output, train)]
    if opts.eval_output:
        outputs.append((opts.eval_output, held))
    prepared = []  # every part made and checked before any is written
    for path, part in outputs:
        if not part:
            raise DataError("%s would hold no examples (%d in %s, eval "
                            "fraction %g)" % (path, len(examples), opts.input,
                                              opts.eval_fraction))
        tensors = to_tensors(TASKS[opts.task](opts, tokenizer, file, config,
                                              part), opts.dtype)
        if model:
            model.check(tensors, path)
        prepared.append((path, part, tensors))
    for path, part, tensors in prepared:
        write_safetensors(path, {n: (t[1], t[2]) for n, t in tensors.items()},
                          opts.dtype)
        samples = next(iter(tensors.values()))[1][0]
        print("ftpipe-data: %s: %d samples of %d examples (%s)" % (
            path, samples, len(part), ", ".join(
                "%s %s %s" % (n, t[0], t[1]) for n, t in sorted(
                    tensors.items()))))


def check(opts):
    Model.from_manifest(opts.manifest).check(read_safetensors(opts.input),
                                             opts.input)
    print("ftpipe-data: %s fits %s" % (opts.input, opts.manifest))


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="ftpipe-data",
        description="Prepares the safetensors data set of ftpipe-run --data.")
    tasks = parser.add_subparsers(dest="task", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("input", help="the data file")
    common.add_argument("--tokenizer", required=True,
                        help="tokenizer.json or a checkpoint directory with it")
    common.add_argument("--manifest",
                        help="the compiled model's manifest.json: the shapes "
                             "and dtypes come from it, and the result is "
                             "checked against it")
    common.add_argument("--seq-len", type=int, help="tokens per sequence")
    common.add_argument("--dtype", choices=sorted(DTYPES),
                        help="token id dtype (default: the manifest's, i32)")
    common.add_argument("--pad-token", help="the padding token")
    common.add_argument("--eval-fraction", type=float, default=0.0,
                        help="share of the examples held out (default 0)")
    common.add_argument("--seed", type=int, default=0,
                        help="seed of the train/eval split (default 0)")
    common.add_argument("--eval-output", help="the held-out data set")
    common.add_argument("-o", "--output", required=True,
                        help="the training data set")
    lm = tasks.add_parser("causal-lm", parents=[common],
                          help="GPT-2, LLaMA: packed sequences")
    lm.add_argument("--field", default="text",
                    help="the text field of .jsonl/.csv records (default text)")
    lm.add_argument("--separator",
                    help="a token appended to every example (e.g. "
                         "<|endoftext|>)")
    lm.add_argument("--remainder", choices=["drop", "pad"], default="drop",
                    help="the last partial sequence (default drop)")
    s2s = tasks.add_parser("seq2seq", parents=[common],
                           help="T5: input/target pairs")
    s2s.add_argument("--decoder-seq-len", type=int, help="target tokens")
    s2s.add_argument("--input-field", default="input")
    s2s.add_argument("--target-field", default="target")
    s2s.add_argument("--prefix", default="",
                     help="text put before every input (e.g. 'summarize: ')")
    s2s.add_argument("--decoder-start-id", type=int,
                     help="default: config.json's decoder_start_token_id, "
                          "else the pad token")
    s2s.add_argument("--overflow", choices=["refuse", "truncate"],
                     default="refuse")
    squad = tasks.add_parser("qa", parents=[common],
                             help="BERT: extractive QA from SQuAD-style JSON")
    squad.add_argument("--overflow", choices=["refuse", "split"],
                       default="refuse",
                       help="a question and context longer than the sequence")
    squad.add_argument("--stride", type=int, default=None,
                       help="tokens shared by consecutive windows (default "
                            "S / 4)")
    checker = tasks.add_parser("check", help="check a data set against a model")
    checker.add_argument("input")
    checker.add_argument("--manifest", required=True)
    opts = parser.parse_args(argv)
    try:
        if opts.task == "check":
            check(opts)
            return 0
        prepare(opts)
    except DataError as error:
        print("ftpipe-data: error: %s" % error, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
