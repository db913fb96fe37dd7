"""Q3: find_topo_sort must return the exact post-order DFS order (inputs
visited in order, each node once). Graphs are built as the course builds
them, with Tensor operators (`a * b + c`, `x * 3.0`), and only those of the
given ops (add, multiply and their scalar forms), so they depend neither on
Q1 code nor on the names of the helper functions."""
import numpy as np

from .registry import case
from .util import HANDED, rng


class Graph:
    """Builds a graph node by node and labels each node.

    Labels are creation order for the public inputs; graded, they are a
    permutation the grader drew (util.HANDED_FILE), so the order expected is
    new at every grading while the graph keeps its shape.
    """

    def __init__(self, ndl, seed):
        self.ndl = ndl
        self.seed = seed
        self.nodes = []

    def leaf(self, value):
        return self.add(self.ndl.Tensor(np.asarray(value, dtype=np.float64)))

    def add(self, node):
        self.nodes.append(node)
        return node

    def result(self, outputs):
        count = len(self.nodes)
        drawn = rng(self.seed).permutation(count)  # drawn (and recorded) on public inputs too
        names = np.arange(count)
        if HANDED is not None:
            names = drawn if not np.array_equal(drawn, names) else np.roll(names, 1)  # never the public labels
        labels = {id(n): int(names[i]) for i, n in enumerate(self.nodes)}
        order = self.ndl.autograd.find_topo_sort(outputs)
        inputs = [[] for _ in range(count)]
        for n in self.nodes:
            inputs[labels[id(n)]] = [labels.get(id(x), -1) for x in n.inputs]
        return {"order": [labels.get(id(n), -1) for n in order], "inputs": inputs}


def chain(ndl, sm):
    g = Graph(ndl, 501)
    x = g.leaf([1.0, 2.0])
    for k in range(6):
        x = g.add(x + k) if k % 2 else g.add(x * 2.0)
    return g.result([x])


def shared_leaves(ndl, sm):
    g = Graph(ndl, 502)
    a, b, c = g.leaf([1.0]), g.leaf([2.0]), g.leaf([3.0])
    ab = g.add(a * b)
    bc = g.add(b + c)
    ca = g.add(c * a)
    out = g.add(ab + bc + ca)
    g.add(out.inputs[0])  # label the inner sum too
    return g.result([out])


def diamond(ndl, sm):
    g = Graph(ndl, 503)
    x = g.leaf([0.5, 1.5])
    left = g.add(x * 3.0)
    right = g.add(x + 1.0)
    top = g.add(left * right)
    w = g.leaf([2.0, 2.0])
    out = g.add(top + w * left)
    g.add(out.inputs[1])
    return g.result([out])


def inputs_out_of_creation_order(ndl, sm):
    """Operands given in the opposite order of their creation."""
    g = Graph(ndl, 504)
    a = g.leaf([1.0])
    b = g.leaf([2.0])
    c = g.add(b + a)
    d = g.add(c * b)
    e = g.add(d + a * 4.0)
    g.add(e.inputs[1])
    return g.result([e])


### BEGIN HIDDEN TESTS
def long_chain(ndl, sm):
    """300 nodes deep: fine for recursion (the default limit is 1000)."""
    g = Graph(ndl, 505)
    x = g.leaf([1.0])
    for k in range(300):
        x = g.add(x + 0.001 * k)
    return g.result([x])


def reused_many_times(ndl, sm):
    g = Graph(ndl, 506)
    x = g.leaf([1.0, -1.0])
    acc = x
    for _ in range(20):
        acc = g.add(acc * x + x)
        g.add(acc.inputs[0])
    return g.result([acc])


### END HIDDEN TESTS
def several_outputs(ndl, sm):
    """find_topo_sort over two outputs sharing a subgraph."""
    g = Graph(ndl, 507)
    a, b = g.leaf([1.0]), g.leaf([2.0])
    shared = g.add(a * b)
    out1 = g.add(shared + 1.0)
    out2 = g.add(shared + b)
    return g.result([out2, out1])


### BEGIN HIDDEN TESTS
def wide_fan_in(ndl, sm):
    g = Graph(ndl, 508)
    leaves = [g.leaf([float(k)]) for k in range(8)]
    acc = leaves[7]
    for leaf in reversed(leaves[:7]):
        acc = g.add(leaf + acc)
    return g.result([acc])


### END HIDDEN TESTS
def topo(name, description, fn, hidden=False):
    return case("topo_sort", name, "topo_order", description, fn, check="topo", hidden=hidden)


CASES = [
    topo("chain", "a chain of 6 scalar ops", chain),
    topo("shared_leaves", "three leaves each used by two products/sums", shared_leaves),
    topo("diamond", "a diamond: one node feeding two branches that meet again", diamond),
    topo("operand_order", "operands given in the opposite order of their creation", inputs_out_of_creation_order),
    topo("several_outputs", "find_topo_sort of two outputs sharing a subgraph", several_outputs),
    ### BEGIN HIDDEN TESTS
    topo("long_chain", "a chain 300 nodes long", long_chain, hidden=True),
    topo("reused_node", "one leaf used 40 times", reused_many_times, hidden=True),
    topo("wide_fan_in", "eight leaves summed right to left", wide_fan_in, hidden=True),
    ### END HIDDEN TESTS
]
