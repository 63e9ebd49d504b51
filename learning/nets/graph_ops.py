"""A third op set for the nets' forward functions: it records a graph instead of computing.

`forward(graph.ops, graph.params(arrays), [graph.input("state"), ...])` runs a net's forward on
symbolic tensors; every op appends a node, so any net written against the op set (learning/
nets/net.py: matmul, relu, sigmoid, concat, and the arithmetic operators) becomes a graph without
code of its own. A node is (op, input names, output name) with ONNX's operator names (MatMul, Add,
Sub, Mul, Div, Relu, Sigmoid, Identity, Concat on the last axis), run in order; constants are
float32 arrays by name. The ONNX writer and the numpy reader (util/npz_policy.py) both run it.
A net that needs anything else fails with AttributeError (an op) or TypeError (an operand).
"""
import numpy as np

OPS = ("MatMul", "Add", "Sub", "Mul", "Div", "Relu", "Sigmoid", "Identity", "Concat")


class Tensor:
    """A named value of a Graph; arithmetic with tensors or numbers appends nodes."""

    def __init__(self, graph, name):
        self.graph = graph
        self.name = name

    def _binary(self, op, other, reverse=False):
        other = self.graph.operand(other)
        return self.graph.node(op, [other, self] if reverse else [self, other])

    def __add__(self, other):
        return self._binary("Add", other)

    def __radd__(self, other):
        return self._binary("Add", other, reverse=True)

    def __sub__(self, other):
        return self._binary("Sub", other)

    def __mul__(self, other):
        return self._binary("Mul", other)

    def __rmul__(self, other):
        return self._binary("Mul", other, reverse=True)

    def __truediv__(self, other):
        return self._binary("Div", other)


class GraphOps:
    """The op set of learning/nets/net.py (TF_OPS, NP_OPS) over a Graph's tensors."""

    def __init__(self, graph):
        self.graph = graph

    def matmul(self, x, w):
        return self.graph.node("MatMul", [x, w])

    def relu(self, x):
        return self.graph.node("Relu", [x])

    def sigmoid(self, x):
        return self.graph.node("Sigmoid", [x])

    def concat(self, xs):
        return xs[0] if len(xs) == 1 else self.graph.node("Concat", list(xs))


class ConstantParams:
    """{variable name: Tensor} over float32 arrays; a constant joins the graph when first used."""

    def __init__(self, graph, arrays):
        self.graph = graph
        self.arrays = arrays

    def __getitem__(self, name):
        if name not in self.graph.constants:
            return self.graph.constant(name, self.arrays[name])
        return Tensor(self.graph, name)


class Graph:
    def __init__(self):
        self.inputs = {}        # name -> number of columns (rows: the batch)
        self.outputs = {}       # name -> shape
        self.nodes = []         # (op, [input names], output name)
        self.constants = {}     # name -> float32 array
        self.ops = GraphOps(self)

    def input(self, name, size):
        self.inputs[name] = int(size)
        return Tensor(self, name)

    def constant(self, name, value):
        if name in self.constants or name in self.inputs:
            raise ValueError(f"graph value {name} defined twice")
        self.constants[name] = np.asarray(value, dtype=np.float32)
        return Tensor(self, name)

    def params(self, arrays):
        return ConstantParams(self, arrays)

    def operand(self, value):
        """A tensor as it is; a number or array as a new constant."""
        if isinstance(value, Tensor):
            return value
        if isinstance(value, (int, float, np.ndarray, np.number)):
            return self.constant(f"const_{len(self.constants)}", value)
        raise TypeError(f"cannot record an operation on a {type(value).__name__}")

    def node(self, op, inputs):
        for x in inputs:
            if not isinstance(x, Tensor):
                raise TypeError(f"{op} on a {type(x).__name__}, expected graph tensors")
        out = f"{op.lower()}_{len(self.nodes)}"
        self.nodes.append((op, [x.name for x in inputs], out))
        return Tensor(self, out)

    def output(self, name, tensor, shape):
        """Names `tensor` as the graph output `name` (an Identity node) of `shape` (sizes, or
        "batch" for the rows)."""
        self.nodes.append(("Identity", [tensor.name], name))
        self.outputs[name] = list(shape)
        return Tensor(self, name)
