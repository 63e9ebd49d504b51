"""Exported policy files, written and read: ONNX (.onnx) and numpy (.npz).

Both hold one graph (learning/nets/graph_ops.py; built by app/policy_export.py) and its
metadata (JSON). Inputs: "state" float32 (batch, state_size) and, for goal-conditioned policies,
"goal" (batch, goal_size); outputs: "action" float32 (batch, action_size) and, when exported with
it, "log_std" (action_size,).
Writing stamps the metadata with "format" (METADATA_FORMAT) and "format_version", which loading
checks.
- .onnx: the graph written with onnx.helper (opset 17, IR version 8: onnxruntime >= 1.13; MatMul,
  Add, Sub, Mul, Div, Relu, Sigmoid, Concat, Identity), the constants as initializers, the
  metadata JSON under the model's metadata_props key "metadata" (onnxruntime:
  session.get_modelmeta().custom_metadata_map).
- .npz: the constants by name, "graph" and "metadata" as JSON strings; util/npz_policy.py runs it
  with numpy alone.
"""
import json
import zipfile
from pathlib import Path

import numpy as np

from util.atomic_write import write_with
from util.npz_policy import NpzPolicy

FORMATS = ("onnx", "npz")
METADATA_FORMAT = "deepmimic-policy"
METADATA_VERSION = 1
ONNX_OPSET = 17
ONNX_IR_VERSION = 8         # the IR of opset 17, so that older onnxruntimes load the file


def format_of(path, fmt=None):
    """The file format: `fmt` when given, else the path's suffix."""
    fmt = fmt or Path(path).suffix.lstrip(".").lower()
    if fmt not in FORMATS:
        raise ValueError(f"{path}: unknown policy format {fmt!r} (expected {' or '.join(FORMATS)})")
    return fmt


def write_policy(path, graph, metadata, fmt=None):
    """Writes the graph and metadata to `path` atomically, as `fmt` (default: by the suffix)."""
    metadata = {"format": METADATA_FORMAT, "format_version": METADATA_VERSION, **metadata}
    if format_of(path, fmt) == "onnx":
        data = _onnx_bytes(graph, metadata)     # built and checked before the file is touched
        write_with(path, lambda f: f.write(data))
    else:
        write_with(path, lambda f: _write_npz(f, graph, metadata))


def _write_npz(f, graph, metadata):
    layout = {"inputs": graph.inputs, "outputs": graph.outputs, "constants": list(graph.constants),
              "nodes": graph.nodes}
    np.savez(f, graph=np.array(json.dumps(layout)), metadata=np.array(json.dumps(metadata)), **graph.constants)


def _onnx_bytes(graph, metadata):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    inputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, ["batch", size])
              for name, size in graph.inputs.items()]
    outputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, shape) for name, shape in graph.outputs.items()]
    nodes = [helper.make_node(op, ins, [out], **({"axis": -1} if op == "Concat" else {}))
             for op, ins, out in graph.nodes]
    constants = [numpy_helper.from_array(value, name) for name, value in graph.constants.items()]
    model = helper.make_model(helper.make_graph(nodes, "deepmimic_policy", inputs, outputs, constants),
                              opset_imports=[helper.make_opsetid("", ONNX_OPSET)], ir_version=ONNX_IR_VERSION,
                              producer_name="DeepMimic")
    helper.set_model_props(model, {"metadata": json.dumps(metadata)})
    onnx.checker.check_model(model, full_check=True)
    return model.SerializeToString()


class OnnxPolicy:
    """An exported .onnx run by onnxruntime, called like util.npz_policy.NpzPolicy."""

    def __init__(self, path):
        """A ValueError when onnxruntime cannot load the file (its errors derive from Exception only)."""
        import onnxruntime
        from onnxruntime.capi import onnxruntime_pybind11_state as ort
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1     # batch-1 decisions
        try:
            self.session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        except (ort.Fail, ort.InvalidProtobuf, ort.InvalidGraph, ort.InvalidArgument, ort.NotImplemented) as err:
            raise ValueError(str(err)) from None
        self.metadata = json.loads(self.session.get_modelmeta().custom_metadata_map["metadata"])
        self.outputs = [o.name for o in self.session.get_outputs()]

    def run(self, state, goal=None):
        feeds = {"state": np.asarray(state, np.float32)}
        if goal is not None:
            feeds["goal"] = np.asarray(goal, np.float32)
        return dict(zip(self.outputs, self.session.run(None, feeds)))

    def __call__(self, state, goal=None):
        return self.run(state, goal)["action"]


def load_policy(path):
    """An OnnxPolicy or NpzPolicy by the file's suffix; a ValueError naming the file when it is
    missing, unreadable or not an exported DeepMimic policy."""
    fmt = format_of(path)
    if not Path(path).is_file():
        raise ValueError(f"{path}: policy file not found")
    try:
        policy = OnnxPolicy(path) if fmt == "onnx" else NpzPolicy(path)
    except (OSError, EOFError, ValueError, KeyError, zipfile.BadZipFile) as err:
        detail = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ValueError(f"{path}: not a readable exported policy ({detail})") from None
    meta = policy.metadata
    if not isinstance(meta, dict) or meta.get("format") != METADATA_FORMAT:
        raise ValueError(f"{path}: not an exported DeepMimic policy (no {METADATA_FORMAT} metadata)")
    if meta.get("format_version") != METADATA_VERSION:
        raise ValueError(f"{path}: format_version {meta.get('format_version')}, this code reads {METADATA_VERSION}")
    return policy
