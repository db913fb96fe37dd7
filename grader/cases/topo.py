"""Q3: find_topo_sort must return the exact post-order DFS order (inputs
visited in order, each node once). Graphs use only the given ops (add,
multiply and their scalar forms), so they do not depend on Q1 code."""
import numpy as np

from .registry import table


class Graph:
    """Builds a graph node by node and labels each node by creation order."""

    def __init__(self, ndl):
        self.ndl = ndl
        self.nodes = []

    def leaf(self, value):
        return self.add(self.ndl.Tensor(np.asarray(value, dtype=np.float64)))

    def add(self, node):
        self.nodes.append(node)
        return node

    def result(self, outputs):
        labels = {id(n): i for i, n in enumerate(self.nodes)}
        order = self.ndl.autograd.find_topo_sort(outputs)
        return {
            "order": [labels.get(id(n), -1) for n in order],
            "inputs": [[labels.get(id(x), -1) for x in n.inputs] for n in self.nodes],
        }


def chain(ndl, sm):
    g = Graph(ndl)
    x = g.leaf([1.0, 2.0])
    for k in range(6):
        x = g.add(ndl.add_scalar(x, k)) if k % 2 else g.add(ndl.mul_scalar(x, 2.0))
    return g.result([x])


def shared_leaves(ndl, sm):
    g = Graph(ndl)
    a, b, c = g.leaf([1.0]), g.leaf([2.0]), g.leaf([3.0])
    ab = g.add(ndl.multiply(a, b))
    bc = g.add(ndl.add(b, c))
    ca = g.add(ndl.multiply(c, a))
    out = g.add(ndl.add(ndl.add(ab, bc), ca))
    g.add(out.inputs[0])  # label the inner sum too
    return g.result([out])


def diamond(ndl, sm):
    g = Graph(ndl)
    x = g.leaf([0.5, 1.5])
    left = g.add(ndl.mul_scalar(x, 3.0))
    right = g.add(ndl.add_scalar(x, 1.0))
    top = g.add(ndl.multiply(left, right))
    w = g.leaf([2.0, 2.0])
    out = g.add(ndl.add(top, ndl.multiply(w, left)))
    g.add(out.inputs[1])
    return g.result([out])


def inputs_out_of_creation_order(ndl, sm):
    """Operands given in the opposite order of their creation."""
    g = Graph(ndl)
    a = g.leaf([1.0])
    b = g.leaf([2.0])
    c = g.add(ndl.add(b, a))
    d = g.add(ndl.multiply(c, b))
    e = g.add(ndl.add(d, ndl.mul_scalar(a, 4.0)))
    g.add(e.inputs[1])
    return g.result([e])


def long_chain(ndl, sm):
    """300 nodes deep: fine for recursion (the default limit is 1000)."""
    g = Graph(ndl)
    x = g.leaf([1.0])
    for k in range(300):
        x = g.add(ndl.add_scalar(x, 0.001 * k))
    return g.result([x])


def reused_many_times(ndl, sm):
    g = Graph(ndl)
    x = g.leaf([1.0, -1.0])
    acc = x
    for _ in range(20):
        acc = g.add(ndl.add(ndl.multiply(acc, x), x))
        g.add(acc.inputs[0])
    return g.result([acc])


def several_outputs(ndl, sm):
    """find_topo_sort over two outputs sharing a subgraph."""
    g = Graph(ndl)
    a, b = g.leaf([1.0]), g.leaf([2.0])
    shared = g.add(ndl.multiply(a, b))
    out1 = g.add(ndl.add_scalar(shared, 1.0))
    out2 = g.add(ndl.add(shared, b))
    return g.result([out2, out1])


def wide_fan_in(ndl, sm):
    g = Graph(ndl)
    leaves = [g.leaf([float(k)]) for k in range(8)]
    acc = leaves[7]
    for leaf in reversed(leaves[:7]):
        acc = g.add(ndl.add(leaf, acc))
    return g.result([acc])


ROWS = [
    ("topo_sort_chain", "a chain of 6 scalar ops", chain),
    ("topo_sort_shared_leaves", "three leaves each used by two products/sums", shared_leaves),
    ("topo_sort_diamond", "a diamond: one node feeding two branches that meet again", diamond),
    ("topo_sort_operand_order", "operands given in the opposite order of their creation", inputs_out_of_creation_order),
]
HIDDEN = [
    ("topo_sort_long_chain", "a chain 300 nodes long", long_chain),
    ("topo_sort_reused_node", "one leaf used 40 times", reused_many_times),
    ("topo_sort_several_outputs", "two outputs sharing a subgraph", several_outputs),
    ("topo_sort_wide_fan_in", "eight leaves summed right to left", wide_fan_in),
]
table("topo_sort", globals(), ROWS, check="topo")
table("topo_sort", globals(), HIDDEN, check="topo", hidden=True)
