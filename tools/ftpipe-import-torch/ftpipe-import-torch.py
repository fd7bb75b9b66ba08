#!/usr/bin/env python3
# ftpipe-import-torch.py - a PyTorch front end for FTPipe
#
# Exports a PyTorch module through torch.export, imports the program into MLIR
# with torch-mlir's FX importer and lowers it to linalg on tensors (or TOSA),
# then makes it FTPipe's input format:
#   - every op's location is its module scope, from the export's
#     `nn_module_stack`, in FTPipe's format: `Class[attribute]` segments from
#     the top module down, container modules included
#     (`T5ForConditionalGeneration/T5Stack[encoder]/ModuleList[block]/T5Block[0]/...`);
#   - every trainable parameter is a function argument
#     `{ftpipe.param, ftpipe.name = "<state-dict name>"}` with its module's
#     scope as location; data inputs are the arguments after them, located
#     by their names.
# The result goes straight into `ftpipe-opt`.
#
#   ftpipe-import-torch.py models/t5-tiny.json -o t5-tiny.mlir
#   ftpipe-import-torch.py --module examples/mlp.py:make -o mlp.mlir
#
# A Hugging Face config.json (BERT, GPT-2, T5, Llama, Mistral: the families
# ftpipe-model-gen knows) gives the HF model (nothing is downloaded) and
# random inputs of the config's "ftpipe" shapes. Its weights are never
# materialised: parameters are created on the meta device and then given
# uninitialised storage that nothing touches (the IR takes them as
# arguments), so full-size models (GPT2-XL, T5-3B, Llama-2-7B) import in
# bounded memory; `--module FILE.py:factory`
# (or `pkg.mod:factory`) names a function returning (module, example kwargs)
# for any other model. The output is linalg on tensors by default:
# torch-mlir's TOSA is TOSA 1.0 (`tosa.const_shape`, `!tosa.shape`), which
# MLIR 19 (ftpipe-opt) cannot parse.
# Runs in the reference environment (scripts/setup-reference-env.sh).

import argparse
import contextlib
import importlib
import importlib.util
import json
import os
import re
import sys

# Random weights from configs only: never reach a model hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import torch

SCRIPT_DIR = os.path.dirname(os.path.abspath(__file__))


# The data inputs of each Hugging Face family, then those the loss adds.
FAMILY_INPUTS = {
    "bert": (["input_ids", "attention_mask", "token_type_ids"],
             ["start_positions", "end_positions"]),
    "gpt2": (["input_ids", "attention_mask"], ["labels"]),
    "t5": (["input_ids", "attention_mask", "decoder_input_ids"], ["labels"]),
    "llama": (["input_ids", "attention_mask"], ["labels"]),
    "mistral": (["input_ids", "attention_mask"], ["labels"]),
}


@contextlib.contextmanager
def parameters_on_meta():
    """Creates every nn.Parameter on the meta device (no storage) while
    buffers (rotary frequencies, position ids) are computed for real, as
    accelerate's init_empty_weights(include_buffers=False) does."""
    register = torch.nn.Module.register_parameter

    def register_on_meta(module, name, param):
        register(module, name, param)
        # A parameter already on meta is kept as it is, so that ties (HF
        # assigns one Parameter object to two modules) stay one object.
        if param is not None and not param.is_meta:
            param = module._parameters[name]
            kwargs = dict(param.__dict__, requires_grad=param.requires_grad)
            module._parameters[name] = type(param)(param.to("meta"), **kwargs)

    torch.nn.Module.register_parameter = register_on_meta
    try:
        yield
    finally:
        torch.nn.Module.register_parameter = register


def unmaterialised_parameters(model):
    """Gives each meta parameter an uninitialised CPU tensor of its shape:
    storage the kernel maps lazily and nothing ever reads or writes (export
    traces with fake tensors, the parameters become function arguments), so
    a 27 GB model costs no resident memory. Tied parameters stay one
    tensor."""
    replaced = {}
    for module in model.modules():
        for name, param in list(module._parameters.items()):
            if param is None or not param.is_meta:
                continue
            if id(param) not in replaced:
                replaced[id(param)] = torch.nn.Parameter(
                    torch.empty(param.shape, dtype=param.dtype),
                    requires_grad=param.requires_grad)
            module._parameters[name] = replaced[id(param)]
    return model


def hf_model_and_inputs(config_path, batch, seq, decoder_seq, with_loss, seed):
    """The HF model of a config.json, its weights never materialised (the IR
    takes them as arguments), and seeded random inputs."""
    sys.path.insert(0, os.path.join(SCRIPT_DIR, "..", "ftpipe-reference"))
    reference = importlib.import_module("hf_reference")
    config_json = json.load(open(config_path))
    shapes = config_json.get("ftpipe", {})
    batch = batch or shapes.get("micro_batch_size", 2)
    seq = seq or shapes.get("seq_len", 16)
    decoder_seq = decoder_seq or shapes.get("decoder_seq_len", 4)
    family = config_json.get("model_type")
    if family not in FAMILY_INPUTS:
        raise SystemExit(
            "ftpipe-import-torch: error: %s: model_type %r is not supported "
            "(expected %s); use --module FILE.py:factory for other models" % (
                config_path, family,
                ", ".join('"%s"' % f for f in FAMILY_INPUTS)))
    with parameters_on_meta():
        model = reference.hf_model(config_json, attn_implementation="eager")
    model = unmaterialised_parameters(model)
    inputs, loss_inputs = FAMILY_INPUTS[family]
    names = inputs + (loss_inputs if with_loss else [])
    args = []
    for name in names:
        shape = [batch] if name.endswith("_positions") else [
            batch, decoder_seq if name in ("decoder_input_ids", "labels") and
            family == "t5" else seq]
        args.append({"param": None, "loc": name, "shape": shape, "elem": "i64"})
    inputs = reference.make_inputs(args, config_json["vocab_size"], seed)
    kwargs = {k: torch.from_numpy(v) for k, v in inputs.items()}
    return model, kwargs


class OutputsOnly(torch.nn.Module):
    """Returns the tensors of a HF ModelOutput (loss or logits) as a tuple."""

    def __init__(self, model, with_loss):
        super().__init__()
        self.model = model
        self.with_loss = with_loss

    def forward(self, **kwargs):
        output = self.model(**kwargs, return_dict=True)
        if self.with_loss:
            return (output.loss,)
        if hasattr(output, "start_logits"):
            return (output.start_logits, output.end_logits)
        return (output.logits,)


def scope_of(root, fqn, prefix):
    """FTPipe's scope of the submodule at `fqn` (a dotted state-dict path)."""
    parts = [p for p in fqn.split(".") if p] if fqn else []
    if prefix and parts[:len(prefix)] == prefix:
        parts = parts[len(prefix):]
    module = root
    scope = [type(root).__name__]
    for part in parts:
        module = getattr(module, part, None) if not part.isdigit() else \
            module[int(part)]
        if module is None:
            break
        scope.append("%s[%s]" % (type(module).__name__, part))
    return "/".join(scope)


def normalize_fqn(path):
    """nn_module_stack paths: 'bert.encoder.layer.0', or in strict mode
    "L['self'].bert.encoder.layer[0]"."""
    path = re.sub(r"^L\['self'\]\.?", "", path)
    path = re.sub(r"\._modules\['([^']+)'\]", r".\1", path)
    path = re.sub(r"\[(\d+)\]", r".\1", path)
    return path


def install_scope_locations(root, prefix):
    """Makes the FX importer locate each op at its module scope."""
    from torch_mlir.extras import fx_importer
    from torch_mlir.ir import Location

    cache = {}

    def get_node_location(self, node):
        stack = node.meta.get("nn_module_stack")
        fqn = ""
        if stack:
            fqn = normalize_fqn(list(stack.values())[-1][0])
        key = (fqn, id(self._c))
        if key not in cache:
            cache[key] = Location.name(scope_of(root, fqn, prefix),
                                       context=self._c)
        return cache[key]

    fx_importer.ContextCache.get_node_location = get_node_location


def make_parameters_arguments(program, prefix):
    """Makes the trainable parameters function arguments, in the program's
    placeholder order before the data inputs, instead of frozen literals; tied
    parameters (one tensor under several state-dict names, e.g. GPT-2's
    lm_head.weight and transformer.wte.weight) become one argument, named by
    the first name, as `named_parameters()` and ftpipe-model-gen name it.
    Returns ([state-dict names], [data input names])."""
    from torch.export.graph_signature import InputKind
    signature = program.graph_signature
    placeholders = {n.name: n for n in program.graph.nodes
                    if n.op == "placeholder"}
    strip = ".".join(prefix) + "." if prefix else ""
    seen = {}
    params = []
    for spec in list(signature.input_specs):
        if spec.kind != InputKind.PARAMETER:
            continue
        tensor = program.state_dict[spec.target]
        # Same storage, or the same object where there is no storage (meta).
        key = id(tensor) if tensor.is_meta else (
            tensor.data_ptr(), tuple(tensor.shape), tensor.dtype)
        node = placeholders[spec.arg.name]
        if key in seen:
            node.replace_all_uses_with(seen[key])
            program.graph.erase_node(node)
            signature.input_specs.remove(spec)
            continue
        seen[key] = node
        name = spec.target[len(strip):] if spec.target.startswith(strip) \
            else spec.target
        params.append(name)
        spec.kind = InputKind.USER_INPUT
    program.graph_module.recompile()
    data_names = [spec.arg.name for spec in signature.input_specs
                  if spec.kind == InputKind.USER_INPUT][len(params):]
    return params, data_names


def finish_module(module, func_name, params, data_names, root):
    """Parameter attributes; drops torch-mlir's index-range `cf.assert`s
    (run-time checks of embedding indices, not part of the computation, and
    outside the dialects ftpipe-opt loads)."""
    from torch_mlir import ir
    func = next(op for op in module.body.operations
                if op.operation.name == "func.func")
    with module.context:
        attrs = []
        for i in range(len(params) + len(data_names)):
            if i < len(params):
                attrs.append(ir.DictAttr.get({
                    "ftpipe.name": ir.StringAttr.get(params[i]),
                    "ftpipe.param": ir.UnitAttr.get()}))
            else:
                attrs.append(ir.DictAttr.get({}))
        func.attributes["arg_attrs"] = ir.ArrayAttr.get(attrs)
    asserts = []

    def collect(op):
        if op.name == "cf.assert":
            asserts.append(op)
        return ir.WalkResult.ADVANCE

    func.operation.walk(collect)
    for op in asserts:
        op.erase()


def decompose_concats(module):
    """Rewrites each `tensor.concat` (torch.cat: rotary embeddings) as a
    `tensor.empty` filled by one `tensor.insert_slice` per operand, the form
    upstream's decomposition gives: MLIR 19's one-shot bufferization has no
    model for tensor.concat, so the IR would not lower otherwise."""
    from torch_mlir import ir
    from torch_mlir.dialects import tensor
    concats = []

    def collect(op):
        if op.name == "tensor.concat":
            concats.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(collect)
    for op in concats:
        result_type = ir.RankedTensorType(op.results[0].type)
        dim = ir.IntegerAttr(op.attributes["dim"]).value
        rank = result_type.rank
        with ir.InsertionPoint(op), op.location:
            filled = tensor.EmptyOp(result_type.shape,
                                    result_type.element_type).result
            offset = 0
            for operand in op.operands:
                shape = ir.RankedTensorType(operand.type).shape
                offsets = [0] * rank
                offsets[dim] = offset
                filled = tensor.InsertSliceOp(
                    operand, filled, [], [], [],
                    ir.DenseI64ArrayAttr.get(offsets),
                    ir.DenseI64ArrayAttr.get(shape),
                    ir.DenseI64ArrayAttr.get([1] * rank)).result
                offset += shape[dim]
        op.results[0].replace_all_uses_with(filled)
        op.erase()


def locate_arguments(text, func_name, params, data_names, root):
    """Argument locations: a parameter's is its module's scope, a data
    input's its name (as ftpipe-model-gen writes them)."""
    lines = text.split("\n")
    index = next(i for i, l in enumerate(lines)
                 if "func.func @%s(" % func_name in l)
    names = ["scope"] * len(params) + list(data_names)

    def replace(match):
        i = int(match.group(2))
        if i < len(params):
            loc = scope_of(root, params[i].rsplit(".", 1)[0], [])
        else:
            loc = names[i]
        return '%s loc("%s")' % (match.group(1), loc)

    lines[index] = re.sub(
        r'(%arg(\d+): [^{,)]*?(?: \{[^}]*\})?) loc\(("[^"]*"|#loc\d*)\)',
        replace, lines[index])
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description="PyTorch front end for FTPipe")
    parser.add_argument("config", nargs="?",
                        help="a Hugging Face config.json (BERT, GPT-2, T5, "
                             "Llama, Mistral)")
    parser.add_argument("--module", help="FILE.py:factory or pkg.mod:factory "
                                         "returning (nn.Module, example kwargs)")
    parser.add_argument("-o", dest="output", default="-")
    parser.add_argument("--output-type", default="linalg-on-tensors",
                        choices=["linalg-on-tensors", "tosa", "torch"])
    parser.add_argument("--loss", action="store_true",
                        help="HF: add the labels and return the loss")
    parser.add_argument("--micro-batch-size", type=int)
    parser.add_argument("--seq-len", type=int)
    parser.add_argument("--decoder-seq-len", type=int)
    parser.add_argument("--seed", type=int, default=0)
    opts = parser.parse_args()

    if opts.module:
        module_name, factory = opts.module.rsplit(":", 1)
        if module_name.endswith(".py"):
            spec = importlib.util.spec_from_file_location(
                os.path.basename(module_name)[:-3], module_name)
            user_module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(user_module)
        else:
            user_module = importlib.import_module(module_name)
        model, kwargs = getattr(user_module, factory)()
        wrapped, prefix = model, []
    elif opts.config:
        model, kwargs = hf_model_and_inputs(
            opts.config, opts.micro_batch_size, opts.seq_len,
            opts.decoder_seq_len, opts.loss, opts.seed)
        wrapped, prefix = OutputsOnly(model, opts.loss), ["model"]
    else:
        parser.error("give a config.json or --module")
    model.eval()

    from torch_mlir import ir
    from torch_mlir.compiler_utils import OutputType, lower_mlir_module
    from torch_mlir.compiler_utils import run_pipeline_with_repro_report
    from torch_mlir.dialects import torch as torch_d
    from torch_mlir.extras.fx_decomp_util import get_decomposition_table
    from torch_mlir.extras.fx_importer import FxImporter

    with torch.no_grad():
        program = torch.export.export(wrapped, (), kwargs, strict=False)
    program = program.run_decompositions(get_decomposition_table())

    params, data_names = make_parameters_arguments(program, prefix)

    install_scope_locations(wrapped if not prefix else model, prefix)
    context = ir.Context()
    torch_d.register_dialect(context)
    importer = FxImporter(context=context)
    func_name = type(model).__name__
    importer.import_program(program, func_name=func_name)
    module = importer.module
    run_pipeline_with_repro_report(
        module, "builtin.module(func.func(torch-match-quantized-custom-ops), "
        "torchdynamo-export-to-torch-backend-pipeline)",
        "Lowering TorchFX IR -> Torch Backend IR")
    module = lower_mlir_module(False, OutputType.get(opts.output_type), module)

    finish_module(module, func_name, params, data_names,
                  model if prefix else wrapped)
    decompose_concats(module)
    text = module.operation.get_asm(enable_debug_info=True)
    text = locate_arguments(text, func_name, params, data_names,
                            model if prefix else wrapped)
    out = sys.stdout if opts.output == "-" else open(opts.output, "w")
    out.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
